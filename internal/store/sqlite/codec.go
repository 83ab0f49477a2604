package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/wikid/wikid/internal/config"
)

// Revision texts and stored renders are compressed with zstd: SQLite has no
// compression of its own, and these two columns are most of a wiki's file
// (Markdown compresses to about half, rendered HTML to about a third).
//
// revisions.text tells its encoding by its storage class, so rows written
// before compression read unchanged:
//
//	TEXT  the text as is: rows from before compression, texts under
//	      minCompress bytes, and texts that zstd does not make smaller
//	BLOB  one zstd frame (with its content size and checksum) of the text
//
// renders.data is a BLOB either way, so renders.codec says which: 0 for
// the data as is (renders stored before compression), 1 for a zstd frame.
//
// The frames carry no dictionary: one trained on the benchmark corpus saved
// about 13% more there, but it would be trained on generated text, not on
// the wikis that use it, and it would have to ship with every build forever.

// minCompress is the shortest text worth compressing: a frame costs about a
// dozen bytes of header and checksum, and short texts hardly compress.
const minCompress = 64

// maxTextBytes bounds a compressed revision text once decoded: no page may
// be longer (config.MaxPageBytesLimit), so a corrupt or hostile frame that
// claims more is refused before anything is allocated. Longer texts, which
// older versions may have stored, are kept as TEXT.
const maxTextBytes = config.MaxPageBytesLimit

// maxRenderBytes bounds a stored render once decoded, likewise. Rendered
// HTML is not bounded by the page limit (escaping and markup add to the
// source), so the bound is generous; a larger render is stored as is.
const maxRenderBytes = 4 * config.MaxPageBytesLimit

// Codecs of renders.codec.
const (
	codecNone = 0
	codecZstd = 1
)

// The encoder and decoders are shared: EncodeAll and DecodeAll are safe for
// concurrent use, each call borrowing one of a few internal states.
var (
	encoder       = must(zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault)))
	textDecoder   = must(zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxTextBytes)))
	renderDecoder = must(zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxRenderBytes)))
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// errCorrupt marks stored data that does not decode.
var errCorrupt = errors.New("stored data is corrupt")

// storedText is a revision's text as the revisions table holds it.
type storedText struct {
	value any // string (stored as TEXT, as is) or []byte (BLOB, a zstd frame)
	size  int // of the text, in bytes
	sha1  string
}

// encodeText makes the stored form of a revision text: compressed unless
// that does not make it smaller.
func encodeText(s string) storedText { return encodeTextSHA(s, sha1Hex(s)) }

// encodeTextSHA is encodeText of a text whose SHA-1 (hex) is known.
func encodeTextSHA(s, sha string) storedText {
	st := storedText{value: s, size: len(s), sha1: sha}
	if len(s) < minCompress || len(s) > maxTextBytes {
		return st
	}
	if z := encoder.EncodeAll([]byte(s), nil); len(z) < len(s) {
		st.value = z
	}
	return st
}

// decodeText returns the text of a revisions.text value.
func decodeText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		if len(v) == 0 { // DecodeAll finds no frame in it and no error
			return "", fmt.Errorf("revision text: %w: an empty BLOB", errCorrupt)
		}
		b, err := textDecoder.DecodeAll(v, nil)
		if err != nil {
			return "", fmt.Errorf("revision text: %w: %w", errCorrupt, err)
		}
		return string(b), nil
	}
	return "", fmt.Errorf("revision text: %w: a value of type %T", errCorrupt, v)
}

// textColumn scans revisions.text into the string it points to, decoding a
// compressed text straight from the driver's buffer.
type textColumn struct{ s *string }

func (c textColumn) Scan(src any) error {
	s, err := decodeText(src)
	*c.s = s
	return err
}

// textHead scans the first n bytes of a revisions.text value into the
// string it points to (all of a shorter text), cut at a character's start:
// a compressed text is decoded that far and no further (a search hit's
// snippet comes from the start of a page, which may be megabytes long).
type textHead struct {
	s *string
	n int
}

func (c textHead) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*c.s = v[:runeCut(v, c.n)]
		return nil
	case []byte:
		if len(v) == 0 {
			return fmt.Errorf("revision text: %w: an empty BLOB", errCorrupt)
		}
		d := headDecoders.Get().(*zstd.Decoder)
		defer func() {
			d.Reset(nil) // keeps no reference to the row's bytes
			headDecoders.Put(d)
		}()
		if err := d.Reset(bytes.NewReader(v)); err != nil {
			return fmt.Errorf("revision text: %w: %w", errCorrupt, err)
		}
		// A few bytes past n tell whether the character at n starts there.
		// The frame's end is io.EOF; a frame cut short is an error too
		// (io.ErrUnexpectedEOF), which io.ReadFull would take for a short
		// text. The buffer starts at the text's size (one byte more, to
		// read the end), when its frame's header gives it and it is
		// shorter (most texts, for a snippet's head of 66 KB), or at a few
		// times the compressed size, and grows to full when the text goes
		// on (a value of more frames than one, which wikid does not write).
		full := c.n + utf8.UTFMax
		buf := make([]byte, headBuffer(v, full))
		k := 0
		for {
			if k == len(buf) {
				if k >= full {
					break
				}
				buf = append(buf, make([]byte, min(full, 2*k)-k)...)
			}
			m, err := d.Read(buf[k:])
			k += m
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("revision text: %w: %w", errCorrupt, err)
			}
		}
		head := string(buf[:k])
		*c.s = head[:runeCut(head, c.n)]
		return nil
	}
	return fmt.Errorf("revision text: %w: a value of type %T", errCorrupt, src)
}

// headBuffer is the size textHead's buffer starts at, for the first full
// bytes of the text compressed in v: the text's size and one byte more
// when its frame's header gives it and it is shorter, else at most a few
// times the compressed size.
func headBuffer(v []byte, full int) int {
	var h zstd.Header
	if h.Decode(v) == nil && h.HasFCS && h.FrameContentSize < uint64(full) {
		return int(h.FrameContentSize) + 1
	}
	return min(full, 4*len(v)+256)
}

// runeCut returns the length of s's first n bytes, or fewer, up to the
// start of the character at n.
func runeCut(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// headDecoders decode the start of a text (textHead), one at a time each,
// with no goroutine of their own.
var headDecoders = sync.Pool{New: func() any {
	return must(zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxTextBytes), zstd.WithDecoderLowmem(true)))
}}

// encodeRender returns the stored form of a render and its codec:
// compressed unless that does not make it smaller.
func encodeRender(data []byte) ([]byte, int) {
	if len(data) > maxRenderBytes {
		return data, codecNone
	}
	if z := encoder.EncodeAll(data, nil); len(z) < len(data) {
		return z, codecZstd
	}
	return data, codecNone
}

// decodeRender returns the render of a renders row.
func decodeRender(data []byte, codec int) ([]byte, error) {
	switch codec {
	case codecNone:
		return data, nil
	case codecZstd:
		if len(data) == 0 {
			return nil, fmt.Errorf("render: %w: an empty frame", errCorrupt)
		}
		b, err := renderDecoder.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("render: %w: %w", errCorrupt, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("render: %w: unknown codec %d", errCorrupt, codec)
}
