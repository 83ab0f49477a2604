package edge

import "testing"

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
