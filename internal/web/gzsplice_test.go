package web

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

func TestCRCShiftCombinesChecksums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 64, 1000, 65537} {
		a, b := make([]byte, rng.IntN(500)), make([]byte, n)
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := newCRCShift(n).apply(crc32.ChecksumIEEE(a)) ^ crc32.ChecksumIEEE(b); got != want {
			t.Errorf("len(b)=%d: combined %08x, want %08x", n, got, want)
		}
	}
}

func TestGzipPiecesDecodeToTheSplicedPage(t *testing.T) {
	page := bytes.Repeat([]byte("<p>Some page text, repeated. </p>\n"), 2000)
	sp := &spliced{shared: &gzEntry{}, tabs: &gzTabs{html: []byte(`<nav class="tabs">Read Edit</nav>`)}}
	sp.tabs.gz = deflateFlushed(sp.tabs.html)
	user := []byte(`<a class="me">Zoë</a>`)
	sp.parts = [5][]byte{page[:300], user, page[300:900], sp.tabs.html, page[900:]}
	for _, p := range sp.parts {
		sp.length += len(p)
	}
	pieces, n := gzipPieces(sp, gzUser{gz: deflateFlushed(user)}, nil)
	all := bytes.Join(pieces, nil)
	if len(all) != n {
		t.Fatalf("length %d, pieces hold %d", n, len(all))
	}
	zr, err := gzip.NewReader(bytes.NewReader(all))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr) // checks the CRC and length in the trailer
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(sp.parts[:], nil); !bytes.Equal(got, want) {
		t.Errorf("decoded %d bytes, want the %d-byte spliced page", len(got), len(want))
	}
}
