package sqlite

import (
	"strings"
	"testing"
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
