package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/wikid/wikid/internal/wiki"
)

// ChunkSize is the size of a blob's chunks in every engine: chunk n holds
// bytes [n×ChunkSize, (n+1)×ChunkSize) of the blob, and only the last one
// is shorter. A write holds one chunk in memory, a range read fetches the
// chunks it covers.
const ChunkSize = 1 << 20

// ValidSHA256 reports whether s is a SHA-256 in lower-case hex, the form
// blobs are stored under. Anything else names no blob: the stores answer
// ErrNotFound for it without a query.
func ValidSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// WriteChunks reads size bytes from r, a chunk at a time, and hands each
// chunk to put in order (put must not keep data: the buffer is reused).
// It fails, after putting what it read, when r holds fewer or more than
// size bytes or when their SHA-256 is not sha: the caller's transaction
// then stores nothing.
func WriteChunks(r io.Reader, sha string, size int64, put func(n int64, data []byte) error) error {
	if !ValidSHA256(sha) {
		return wiki.Errorf(wiki.KindInvalid, "%q is not a SHA-256 in lower-case hex", sha)
	}
	if size < 0 {
		return wiki.Errorf(wiki.KindInvalid, "a blob of %d bytes", size)
	}
	h := sha256.New()
	buf := make([]byte, min(size, ChunkSize))
	for n, off := int64(0), int64(0); off < size; n++ {
		chunk := buf[:min(size-off, ChunkSize)]
		if _, err := io.ReadFull(r, chunk); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("blob %s: the reader ended before its %d bytes", sha, size)
			}
			return fmt.Errorf("blob %s: read: %w", sha, err)
		}
		h.Write(chunk)
		if err := put(n, chunk); err != nil {
			return err
		}
		off += int64(len(chunk))
	}
	// One byte more tells a reader longer than size.
	var extra [1]byte
	switch k, err := io.ReadFull(r, extra[:]); {
	case k > 0:
		return fmt.Errorf("blob %s: the reader holds more than its %d bytes", sha, size)
	case !errors.Is(err, io.EOF):
		return fmt.Errorf("blob %s: read: %w", sha, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("blob %s: the bytes read have SHA-256 %s", sha, got)
	}
	return nil
}

// ReadChunks reads chunks first to last (inclusive) of a blob in one
// query, in order, and calls fn with each one's number and bytes, which fn
// may keep. A missing chunk is simply not passed.
type ReadChunks func(ctx context.Context, first, last int64, fn func(n int64, data []byte) error) error

// NewBlob returns blob sha, of size bytes, whose ranges are read through
// read under ctx (the context of the request that opened it). Each ReadAt
// makes at most one query, for the chunks its range covers; the last
// chunk read is kept, so that a sequence of small reads (an HTTP response
// copied through a 32 KiB buffer) makes one query per chunk. It is safe
// for concurrent use.
func NewBlob(ctx context.Context, sha string, size int64, read ReadChunks) wiki.Blob {
	return &chunkedBlob{ctx: ctx, sha: sha, size: size, read: read, kept: -1}
}

type chunkedBlob struct {
	ctx  context.Context
	sha  string
	size int64
	read ReadChunks

	mu       sync.Mutex
	kept     int64 // the number of the chunk in keptData, -1 for none
	keptData []byte
}

func (b *chunkedBlob) Size() int64 { return b.size }

// chunkLen is the length chunk n of the blob must have.
func (b *chunkedBlob) chunkLen(n int64) int64 {
	return min(b.size-n*ChunkSize, ChunkSize)
}

// ReadAt reads len(p) bytes at off, as io.ReaderAt says: fewer only at the
// end of the blob (with io.EOF) or on an error.
func (b *chunkedBlob) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("blob %s: read at negative offset %d", b.sha, off)
	}
	if off >= b.size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), b.size)
	if end == off {
		return 0, nil
	}
	first, last := off/ChunkSize, (end-1)/ChunkSize
	// copyChunk copies the part of chunk n that the range covers.
	copyChunk := func(n int64, data []byte) int {
		from, to := max(off, n*ChunkSize), min(end, (n+1)*ChunkSize)
		return copy(p[from-off:to-off], data[from-n*ChunkSize:to-n*ChunkSize])
	}
	done := 0
	b.mu.Lock()
	if b.kept == first {
		done += copyChunk(first, b.keptData)
		first++
	}
	b.mu.Unlock()
	if first <= last {
		next := first
		err := b.read(b.ctx, first, last, func(n int64, data []byte) error {
			if n != next {
				return fmt.Errorf("chunk %d is missing", next)
			}
			if int64(len(data)) != b.chunkLen(n) {
				return fmt.Errorf("chunk %d holds %d bytes, not %d", n, len(data), b.chunkLen(n))
			}
			done += copyChunk(n, data)
			next++
			if n == last {
				b.mu.Lock()
				b.kept, b.keptData = n, data
				b.mu.Unlock()
			}
			return nil
		})
		if err == nil && next <= last {
			err = fmt.Errorf("chunk %d is missing", next)
		}
		if err != nil {
			return done, fmt.Errorf("blob %s: read %d bytes at %d: %w", b.sha, len(p), off, err)
		}
	}
	if done < len(p) {
		return done, io.EOF
	}
	return done, nil
}
