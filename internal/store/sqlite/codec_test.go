package sqlite

import (
	"errors"
	"runtime"
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
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if err := (textHead{&got, 66 << 10}).Scan(zs); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := (after.TotalAlloc - before.TotalAlloc) / 10; n > 4*uint64(len(short)) {
		t.Errorf("the head of a text of %d bytes allocated %d bytes", len(short), n)
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
