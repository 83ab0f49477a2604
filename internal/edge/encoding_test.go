package edge

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	kgzip "github.com/klauspost/compress/gzip"
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

// Bodies on both sides of largeBody compress to what decodes to them, to
// the same bytes every time, by a pooled writer or a new one (GzipBytes
// makes a variant's validator outside the cache), and a large one, at the
// fastest levels, still to under a third of its size.
func TestCompressedVariants(t *testing.T) {
	var src bytes.Buffer
	for i := 0; src.Len() < 2*largeBody; i++ {
		fmt.Fprintf(&src, "<li><a href=\"/wiki/Page_%d\" title=\"Page %d\">Page %d</a> edited %d bytes</li>\n", i, i, i%97, i*7%1000)
	}
	for _, n := range []int{largeBody - 1000, largeBody + 1000, src.Len()} {
		body := src.Bytes()[:n]
		gz, br := gzipBytes(body), brotliBytes(body)
		if !bytes.Equal(gz, GzipBytes(body)) {
			t.Errorf("%d bytes: gzip differs from one call to the next", n)
		}
		level := gzipLevel
		if n > largeBody {
			level = largeGzipLevel
		}
		var fresh bytes.Buffer
		w := gzipWriters(level).Get().(*kgzip.Writer)
		w.Reset(&fresh)
		w.Write(body)
		w.Close()
		if !bytes.Equal(gz, fresh.Bytes()) {
			t.Errorf("%d bytes: a pooled gzip writer and a new one differ", n)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, body) {
			t.Errorf("%d bytes: gzip decodes to %d bytes, %v", n, len(got), err)
		}
		if got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br))); err != nil || !bytes.Equal(got, body) {
			t.Errorf("%d bytes: brotli decodes to %d bytes, %v", n, len(got), err)
		}
		if len(gz) >= n/3 || len(br) >= n/3 {
			t.Errorf("%d bytes: gzip %d, brotli %d", n, len(gz), len(br))
		}
	}
}
