package diff

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Context is the number of unchanged lines shown around each change.
const Context = 3

// Kind says what happened to a row of a diff.
type Kind int

const (
	Unchanged Kind = iota // the line is the same on both sides (context)
	Added                 // the line exists only in the new text
	Deleted               // the line exists only in the old text
	Changed               // an old line was edited into a new one
)

func (k Kind) String() string {
	switch k {
	case Unchanged:
		return "context"
	case Added:
		return "added"
	case Deleted:
		return "deleted"
	case Changed:
		return "changed"
	}
	return "unknown"
}

// Segment is a piece of a changed line; Changed marks words that differ.
type Segment struct {
	Text    string
	Changed bool
}

// Row is one line of a side-by-side diff. Line numbers are 1-based and zero on
// the side the row does not have. OldWords and NewWords are set for Changed
// rows only and concatenate to Old and New.
type Row struct {
	Kind     Kind
	OldLine  int
	NewLine  int
	Old      string
	New      string
	OldWords []Segment
	NewWords []Segment
}

// Hunk is a run of changes with their surrounding context. Starts are 1-based
// line numbers of the first row; counts are lines on each side.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Rows               []Row
}

// splitLines splits text into lines without their "\n". A final newline does
// not start another line, so "a\n" and "a" both have one line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// Stat returns how many lines b adds to and deletes from a.
func Stat(a, b string) (added, deleted int) {
	for _, e := range Edits(splitLines(a), splitLines(b)) {
		added += e.NewEnd - e.NewStart
		deleted += e.OldEnd - e.OldStart
	}
	return added, deleted
}

// Lines compares a and b line by line and groups the changes into hunks with
// Context lines around them. A difference only in the final newline is not
// shown. Identical texts give no hunks.
func Lines(a, b string) []Hunk {
	al, bl := splitLines(a), splitLines(b)
	edits := Edits(al, bl)
	var hunks []Hunk
	for len(edits) > 0 {
		// Take edits whose context would touch or overlap into one hunk.
		n := 1
		for n < len(edits) && edits[n].OldStart-edits[n-1].OldEnd <= 2*Context {
			n++
		}
		hunks = append(hunks, hunk(al, bl, edits[:n]))
		edits = edits[n:]
	}
	return hunks
}

// hunk builds the rows for a group of edits that share context.
func hunk(al, bl []string, edits []Edit) Hunk {
	first, last := edits[0], edits[len(edits)-1]
	lead := min(Context, first.OldStart)
	trail := min(Context, len(al)-last.OldEnd)
	h := Hunk{
		OldStart: first.OldStart - lead + 1,
		NewStart: first.NewStart - lead + 1,
		OldLines: last.OldEnd + trail - (first.OldStart - lead),
		NewLines: last.NewEnd + trail - (first.NewStart - lead),
	}
	context := func(i, j, n int) {
		for k := range n {
			h.Rows = append(h.Rows, Row{
				Kind: Unchanged, OldLine: i + k + 1, NewLine: j + k + 1,
				Old: al[i+k], New: bl[j+k],
			})
		}
	}
	context(first.OldStart-lead, first.NewStart-lead, lead)
	for n, e := range edits {
		if n > 0 {
			p := edits[n-1]
			context(p.OldEnd, p.NewEnd, e.OldStart-p.OldEnd)
		}
		h.Rows = changeRows(h.Rows, al, bl, e)
	}
	context(last.OldEnd, last.NewEnd, trail)
	return h
}

// changeRows pairs the old and new lines of an edit in order. A pair becomes a
// Changed row with word highlights when enough of it is shared; otherwise the
// old line is shown deleted and the new one added.
func changeRows(rows []Row, al, bl []string, e Edit) []Row {
	nOld, nNew := e.OldEnd-e.OldStart, e.NewEnd-e.NewStart
	for k := range max(nOld, nNew) {
		i, j := e.OldStart+k, e.NewStart+k
		if k < nOld && k < nNew {
			ow, nw, similar := words(al[i], bl[j])
			if similar {
				rows = append(rows, Row{
					Kind: Changed, OldLine: i + 1, NewLine: j + 1,
					Old: al[i], New: bl[j], OldWords: ow, NewWords: nw,
				})
				continue
			}
		}
		if k < nOld {
			rows = append(rows, Row{Kind: Deleted, OldLine: i + 1, Old: al[i]})
		}
		if k < nNew {
			rows = append(rows, Row{Kind: Added, NewLine: j + 1, New: bl[j]})
		}
	}
	return rows
}

// words diffs two lines word by word. similar reports whether at least a
// quarter of their non-space bytes are shared, enough to show them as a pair.
func words(old, new string) (ow, nw []Segment, similar bool) {
	ot, nt := tokenize(old), tokenize(new)
	edits := Edits(ot, nt)
	oldChanged := make([]bool, len(ot))
	newChanged := make([]bool, len(nt))
	for _, e := range edits {
		for i := e.OldStart; i < e.OldEnd; i++ {
			oldChanged[i] = true
		}
		for j := e.NewStart; j < e.NewEnd; j++ {
			newChanged[j] = true
		}
	}
	shared, total := 0, 0
	for i, t := range ot {
		if !isSpace(t) {
			total += len(t)
			if !oldChanged[i] {
				shared += 2 * len(t) // counted once for each side
			}
		}
	}
	for _, t := range nt {
		if !isSpace(t) {
			total += len(t)
		}
	}
	similar = total > 0 && 4*shared >= total
	return segments(ot, oldChanged), segments(nt, newChanged), similar
}

// segments joins tokens into runs of equal Changed state. Spaces between two
// changed words count as changed so a changed phrase is highlighted as one.
func segments(toks []string, changed []bool) []Segment {
	for i := 1; i+1 < len(toks); i++ {
		if !changed[i] && changed[i-1] && changed[i+1] && isSpace(toks[i]) {
			changed[i] = true
		}
	}
	var segs []Segment
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && changed[j] == changed[i] {
			j++
		}
		segs = append(segs, Segment{Text: strings.Join(toks[i:j], ""), Changed: changed[i]})
		i = j
	}
	return segs
}

func isSpace(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	return unicode.IsSpace(r)
}

// tokenize splits a line into words (runs of letters, digits and marks), runs
// of white space, and single other characters. Han, kana, Hangul and Thai
// characters are words of their own, since those scripts are often written
// without spaces. The tokens concatenate to s, invalid UTF-8 included.
func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		j := i + size
		var in func(rune) bool
		switch {
		case perChar(r):
		case isWordRune(r):
			in = func(r rune) bool { return isWordRune(r) && !perChar(r) }
		case unicode.IsSpace(r):
			in = unicode.IsSpace
		}
		for in != nil && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !in(r) || (r == utf8.RuneError && size == 1) {
				break
			}
			j += size
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func perChar(r rune) bool {
	return r >= 0x0E00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
}
