// Package difftest builds pairs of texts that are hard to compare: the
// adversarial shapes the diff package's tests, fuzz seeds and the benchmark
// harness measure its worst case with.
package difftest

import (
	"math/rand/v2"
	"strings"
)

// Pair is two revisions of a page, Old and New, of about the same size.
type Pair struct {
	Name     string
	Old, New string
}

// Shapes returns the adversarial pairs at about size bytes per side. The
// same size gives the same texts.
func Shapes(size int) []Pair {
	r := rand.New(rand.NewPCG(uint64(size), 42))
	prose := proseLines(r, size, latinWords)
	long := longLine(r, size)
	cjkLines, cjkLine := cjkText(r, size, 300), cjkText(r, size, 0)
	return []Pair{
		// No line in common: every line is deleted and every line added.
		{"different", prose, proseLines(r, size, otherWords)},
		// One character changed on every line: every line is a changed pair
		// that wants word highlighting.
		{"every-line-edited", prose, editEveryLine(r, prose)},
		// The same lines in another order: a huge edit distance between
		// texts made of the same lines.
		{"shuffled", prose, shuffleLines(r, prose)},
		// One line of size bytes with a character changed every ~1000.
		{"one-long-line", long, editEvery(r, long, 997)},
		// Two distinct lines in random order on each side: no unique line to
		// anchor on, and an edit distance of about a third of the lines.
		{"two-line-alphabet", binaryLines(r, size), binaryLines(r, size)},
		// About the most lines a text of this size can have, none in common
		// and no two equal lines in a row.
		{"most-lines", strings.Repeat("\na\n", size/3), strings.Repeat("b\nc\n", size/4)},
		// Chinese without spaces, one paragraph per line, one character
		// changed in each: every character is a word.
		{"cjk-lines", cjkLines, editEveryLine(r, cjkLines)},
		// Chinese without spaces or newlines, changed every ~1000 bytes.
		{"cjk-one-line", cjkLine, editEvery(r, cjkLine, 1000)},
	}
}

var (
	latinWords = strings.Fields("the wiki page links to another article about history science art music " +
		"railway gauge station line tunnel bridge engine carriage timetable")
	otherWords = strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod " +
		"tempor incididunt ut labore et dolore magna aliqua enim")
)

// proseLines is size bytes of lines of 5 to 20 words. Lines carry a number,
// so that almost every line is unique, as in a real article.
func proseLines(r *rand.Rand, size int, words []string) string {
	var b strings.Builder
	b.Grow(size + 200)
	for n := 0; b.Len() < size; n++ {
		for range 5 + r.IntN(16) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		writeInt(&b, n)
		b.WriteString(".\n")
	}
	return b.String()[:size]
}

func writeInt(b *strings.Builder, n int) {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	b.Write(buf[i:])
}

// editEveryLine changes one byte of every line (an ASCII letter or digit
// to another, or a whole character of other scripts).
func editEveryLine(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l == "" || l == "\n" {
			continue
		}
		lines[i] = editOne(r, l)
	}
	return strings.Join(lines, "")
}

// editEvery changes one character in every span of n bytes of s.
func editEvery(r *rand.Rand, s string, n int) string {
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !startsRune(s[k]) {
			k++
		}
		b.WriteString(editOne(r, s[:k]))
		s = s[k:]
	}
	return b.String()
}

func startsRune(c byte) bool { return c&0xC0 != 0x80 }

// editOne replaces one character of s near a random position with another
// of the same width, so the text keeps its size and validity.
func editOne(r *rand.Rand, s string) string {
	i := r.IntN(len(s))
	for i > 0 && !startsRune(s[i]) {
		i--
	}
	c := s[i]
	switch {
	case c == '\n' || c == ' ':
		return s
	case c < 0x80:
		return s[:i] + string(rune('a'+(int(c)+1+r.IntN(24))%26)) + s[i+1:]
	case c >= 0xE0 && i+3 <= len(s):
		return s[:i] + string(cjk[r.IntN(len(cjk))]) + s[i+3:]
	}
	return s
}

func shuffleLines(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	if last := len(lines) - 1; !strings.HasSuffix(lines[last], "\n") {
		lines[last] += "\n"
	}
	r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	return strings.Join(lines, "")
}

// longLine is size bytes of words separated by spaces and no newline.
func longLine(r *rand.Rand, size int) string {
	var b strings.Builder
	b.Grow(size + 20)
	for b.Len() < size {
		b.WriteString(latinWords[r.IntN(len(latinWords))])
		b.WriteByte(' ')
	}
	return b.String()[:size]
}

func binaryLines(r *rand.Rand, size int) string {
	var b strings.Builder
	b.Grow(size)
	for b.Len()+5 <= size {
		if r.IntN(2) == 0 {
			b.WriteString("yes\n")
		} else {
			b.WriteString("no\n")
		}
	}
	return b.String()
}

var cjk = []rune("维基百科是一个自由内容的网络百科全书计划由非营利组织维基媒体基金会负责营运任何人都可以编辑的铁路车站隧道桥梁机车时刻表")

// cjkText is about size bytes of Chinese characters, with a newline after
// every perLine characters (none when perLine is 0).
func cjkText(r *rand.Rand, size, perLine int) string {
	var b strings.Builder
	b.Grow(size + 4)
	for n := 1; b.Len()+4 <= size; n++ {
		if perLine > 0 && n%perLine == 0 {
			b.WriteByte('\n')
			continue
		}
		b.WriteRune(cjk[r.IntN(len(cjk))])
	}
	return b.String()
}

// Shape returns the pair of Shapes(size) called name; it panics on an
// unknown name (a mistake in a test).
func Shape(name string, size int) Pair {
	for _, p := range Shapes(size) {
		if p.Name == name {
			return p
		}
	}
	panic("difftest: no shape called " + name)
}
