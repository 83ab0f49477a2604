package sqlite

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The longest page compresses and decodes within the decoder's bound;
// anything longer is stored as is.
func TestTheLargestTextsRoundTrip(t *testing.T) {
	line := "A line of a very long page, with [[Links]] and words that come back. "
	for _, n := range []int{maxTextBytes, maxTextBytes + 1} {
		text := strings.Repeat(line, n/len(line)+1)[:n]
		st := encodeText(text)
		if _, compressed := st.value.([]byte); compressed != (n <= maxTextBytes) {
			t.Errorf("%d bytes: compressed %v; want texts up to %d bytes compressed, longer ones as is", n, compressed, maxTextBytes)
		}
		back, err := decodeText(st.value)
		if err != nil || back != text || st.size != n || st.sha1 != sha1Hex(text) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(back), err)
		}
	}
}

// The start of a text (a search hit's) decodes as far as asked, cut at a
// character's start, from a compressed text and from one stored as is; a
// frame cut short or corrupt is an error, as it is for the whole text.
func TestTextHead(t *testing.T) {
	text := strings.Repeat("ab é ", 40000) // 240 KB, compressed
	z := encodeText(text).value.([]byte)
	for _, v := range []any{z, text} {
		for _, n := range []int{0, 1, 3, 4, 65536, len(text), len(text) + 10} {
			var got string
			if err := (textHead{&got, n}).Scan(v); err != nil {
				t.Fatalf("%T, %d: %v", v, n, err)
			}
			if !strings.HasPrefix(text, got) || !utf8.ValidString(got) || len(got) > n || len(got) < min(n, len(text))-utf8.UTFMax ||
				(n >= len(text) && got != text) {
				t.Errorf("%T, %d: %d bytes %.20q…", v, n, len(got), got)
			}
		}
	}
	// A text shorter than the head asked for (a snippet's, of a page of a
	// few KB) is read whole, into a buffer of its size; its frame's
	// checksum is read too.
	short := strings.Repeat("ab é ", 1000)
	zs := encodeText(short).value.([]byte)
	var got string
	if err := (textHead{&got, 66 << 10}).Scan(zs); err != nil || got != short {
		t.Fatalf("a short text: %d bytes, %v", len(got), err)
	}
	if n := headBuffer(zs, 66<<10); n != len(short)+1 {
		t.Errorf("the head of a text of %d bytes is read into a buffer of %d", len(short), n)
	}
	// A text of a few hundred bytes, whose frame does not give its size.
	tiny := strings.Repeat("ab é ", 40)
	zt := encodeText(tiny).value.([]byte)
	if err := (textHead{&got, 66 << 10}).Scan(zt); err != nil || got != tiny {
		t.Fatalf("a tiny text: %q, %v", got, err)
	}
	if n := headBuffer(zt, 66<<10); n > 1<<10 {
		t.Errorf("the head of a text of %d bytes (%d compressed) is read into a buffer of %d", len(tiny), len(zt), n)
	}
	// A value of two frames (wikid writes one) is read on into the
	// second, as decodeText reads it, and a second frame whose checksum
	// is wrong is corrupt.
	first, second := strings.Repeat("x", 339)+"a", "é"+strings.Repeat("ab é ", 60)
	two := append(slices.Clone(encoder.EncodeAll([]byte(first), nil)), encoder.EncodeAll([]byte(second), nil)...)
	whole, err := decodeText(two)
	if err != nil || whole != first+second {
		t.Fatalf("decodeText of two frames: %d bytes, %v", len(whole), err)
	}
	for _, n := range []int{340, 341, 400, 66 << 10} {
		if err := (textHead{&got, n}).Scan(two); err != nil || !utf8.ValidString(got) || !strings.HasPrefix(whole, got) || len(got) < min(n, len(whole))-utf8.UTFMax {
			t.Errorf("two frames, %d: %d bytes %q…, %v", n, len(got), got[max(0, len(got)-8):], err)
		}
	}
	badTwo := slices.Clone(two)
	badTwo[len(badTwo)-1] ^= 0xff
	if err := (textHead{&got, 66 << 10}).Scan(badTwo); !errors.Is(err, errCorrupt) {
		t.Errorf("two frames, the second's checksum wrong: %v, want errCorrupt", err)
	}
	bad := slices.Clone(zs)
	bad[len(bad)-1] ^= 0xff // the checksum
	if err := (textHead{&got, 66 << 10}).Scan(bad); !errors.Is(err, errCorrupt) {
		t.Errorf("a short text whose checksum is wrong: %v, want errCorrupt", err)
	}
	for name, v := range map[string][]byte{"empty": {}, "not zstd": {1, 2, 3}, "cut short": z[:20]} {
		var got string
		if err := (textHead{&got, 1000}).Scan(v); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %q, %v, want errCorrupt", name, got, err)
		}
	}
}
