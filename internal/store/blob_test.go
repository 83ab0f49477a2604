package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

// chunks is a blob's chunks in memory, counting the reads.
type chunks struct {
	data  [][]byte
	reads int
}

func (c *chunks) read(_ context.Context, first, last int64, fn func(int64, []byte) error) error {
	c.reads++
	for n := first; n <= last && n < int64(len(c.data)); n++ {
		if c.data[n] == nil {
			continue
		}
		if err := fn(n, c.data[n]); err != nil {
			return err
		}
	}
	return nil
}

func split(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		k := min(len(b), ChunkSize)
		out = append(out, b[:k])
		b = b[k:]
	}
	return out
}

func TestBlobReadsEachChunkOnceInSequence(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*ChunkSize/16+5)
	c := &chunks{data: split(data)}
	b := NewBlob(context.Background(), "x", int64(len(data)), c.read)
	got, err := io.ReadAll(io.NewSectionReader(b, 0, b.Size()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if c.reads != len(c.data) {
		t.Errorf("%d queries for %d chunks read in small pieces", c.reads, len(c.data))
	}
}

func TestBlobRefusesBrokenChunks(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 2*ChunkSize+10)
	for name, broken := range map[string]func([][]byte){
		"a missing chunk":    func(cs [][]byte) { cs[1] = nil },
		"a missing last one": func(cs [][]byte) { cs[2] = nil },
		"a short chunk":      func(cs [][]byte) { cs[1] = cs[1][:100] },
		"a long last one":    func(cs [][]byte) { cs[2] = append(cs[2], 1) },
	} {
		t.Run(name, func(t *testing.T) {
			cs := split(bytes.Clone(data))
			broken(cs)
			b := NewBlob(context.Background(), "x", int64(len(data)), (&chunks{data: cs}).read)
			p := make([]byte, len(data))
			n, err := b.ReadAt(p, 0)
			if err == nil || err == io.EOF {
				t.Fatalf("read %d bytes, %v", n, err)
			}
		})
	}
}

func TestWriteChunks(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), ChunkSize/2)
	h := sha256.Sum256(data)
	sha := hex.EncodeToString(h[:])
	var got [][]byte
	put := func(n int64, b []byte) error {
		if n != int64(len(got)) {
			t.Fatalf("chunk %d after %d", n, len(got))
		}
		got = append(got, bytes.Clone(b))
		return nil
	}
	if err := WriteChunks(bytes.NewReader(data), sha, int64(len(data)), put); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) != ChunkSize || !bytes.Equal(bytes.Join(got, nil), data) {
		t.Fatalf("%d chunks", len(got))
	}
	for name, r := range map[string]io.Reader{
		"short":      bytes.NewReader(data[:len(data)-1]),
		"long":       io.MultiReader(bytes.NewReader(data), strings.NewReader("!")),
		"other":      bytes.NewReader(append(bytes.Clone(data[:len(data)-1]), 'x')),
		"one chunk":  bytes.NewReader(data[:ChunkSize]),
		"no content": strings.NewReader(""),
	} {
		got = nil
		if err := WriteChunks(r, sha, int64(len(data)), put); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestValidSHA256(t *testing.T) {
	h := sha256.Sum256(nil)
	ok := hex.EncodeToString(h[:])
	if !ValidSHA256(ok) {
		t.Errorf("%s refused", ok)
	}
	for _, bad := range []string{"", ok[:63], ok + "0", strings.ToUpper(ok), ok[:63] + "z", ok[:63] + "/"} {
		if ValidSHA256(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
