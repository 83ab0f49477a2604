package edge

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
)

func TestParseAcceptEncoding(t *testing.T) {
	const both = AcceptGzip | AcceptBrotli
	for _, tc := range []struct {
		in   string
		want Accepted
	}{
		{"", 0},
		{"identity", 0},
		{"gzip", AcceptGzip},
		{"x-gzip", AcceptGzip},
		{"GZIP, BR", both},
		{"gzip, deflate, br, zstd", both},
		{" br ; q=0.5 ,gzip;q=1.0", both},
		{"br;q=0", 0},
		{"br;q=0.000, gzip", AcceptGzip},
		{"br;q=0.001", AcceptBrotli},
		{"br;Q=0", 0},
		{"gzip;q=0, *", AcceptBrotli},
		{"*;q=0, gzip", AcceptGzip},
		{"*", both},
		{"*;q=0", 0},
		{"br;q=2", 0},    // invalid qvalue: refused
		{"br;q=0.5x", 0}, // invalid qvalue: refused
		{"br;level=1;q=0", 0},
		{",,gzip,,", AcceptGzip},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := ParseAcceptEncoding(tc.in); got != tc.want {
				t.Fatalf("ParseAcceptEncoding(%q) = %b, want %b", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseAcceptEncodingDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { ParseAcceptEncoding("gzip, deflate, br;q=0.9, *;q=0") }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// Bodies on both sides of largeBody, and seldom-read ones, compress to
// what decodes to them, to the same bytes every time (GzipBytes makes a
// variant's validator outside the cache), and at the fastest levels (a
// large or seldom-read body) still to under a third of their size. A
// seldom-read body below largeBody is compressed as a large one is.
func TestCompressedVariants(t *testing.T) {
	var src bytes.Buffer
	for i := 0; src.Len() < 2*largeBody; i++ {
		fmt.Fprintf(&src, "<li><a href=\"/wiki/Page_%d\" title=\"Page %d\">Page %d</a> edited %d bytes</li>\n", i, i, i%97, i*7%1000)
	}
	for _, n := range []int{largeBody - 1000, largeBody + 1000, src.Len()} {
		for _, seldom := range []bool{false, true} {
			body := src.Bytes()[:n]
			gz, br := gzipBytes(body, seldom), brotliBytes(body, seldom)
			if !bytes.Equal(gz, GzipBytes(body, seldom)) {
				t.Errorf("%d bytes, seldom %v: gzip differs from one call to the next", n, seldom)
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, body) {
				t.Errorf("%d bytes, seldom %v: gzip decodes to %d bytes, %v", n, seldom, len(got), err)
			}
			if got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br))); err != nil || !bytes.Equal(got, body) {
				t.Errorf("%d bytes, seldom %v: brotli decodes to %d bytes, %v", n, seldom, len(got), err)
			}
			if len(gz) >= n/3 || len(br) >= n/3 {
				t.Errorf("%d bytes, seldom %v: gzip %d, brotli %d", n, seldom, len(gz), len(br))
			}
		}
	}
	small := src.Bytes()[:largeBody-1000]
	large := src.Bytes()[:largeBody+1000]
	if bytes.Equal(brotliBytes(small, false), brotliBytes(small, true)) || bytes.Equal(gzipBytes(small, false), gzipBytes(small, true)) {
		t.Error("a seldom-read body is compressed at the default levels")
	}
	if !bytes.Equal(brotliBytes(large, false), brotliBytes(large, true)) || !bytes.Equal(gzipBytes(large, false), gzipBytes(large, true)) {
		t.Error("a large body is compressed at two levels")
	}
}
