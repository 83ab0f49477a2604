package sqlite

import (
	"errors"
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
			if !strings.HasPrefix(text, got) || !utf8.ValidString(got) || len(got) > n || len(got) < min(n, len(text))-utf8.UTFMax {
				t.Errorf("%T, %d: %d bytes %.20q…", v, n, len(got), got)
			}
		}
	}
	for name, v := range map[string][]byte{"empty": {}, "not zstd": {1, 2, 3}, "cut short": z[:20]} {
		var got string
		if err := (textHead{&got, 1000}).Scan(v); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %q, %v, want errCorrupt", name, got, err)
		}
	}
}
