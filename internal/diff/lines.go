package diff

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Version names the output of Compare: it changes whenever the same two
// texts would compare differently (algorithm, limits, rows), so caches of
// computed diffs key on it.
const Version = 2

// Context is the number of unchanged lines shown around each change, as in
// MediaWiki.
const Context = 2

// DefaultMaxBytes bounds the HTML table of a comparison, about.
const DefaultMaxBytes = 2 << 20

// Limits on what one row shows and on word-level comparison. Each keeps the
// work for a row proportional to what the row shows, so that the whole
// comparison's cost follows DefaultMaxBytes, not the texts' size.
const (
	// maxCell is the most bytes of a line a cell shows; the rest is left
	// out with a mark.
	maxCell = 16 << 10
	// maxWordBytes bounds the changed middle of a pair of lines (what is
	// left after their common start and end) compared word by word; a
	// longer middle is highlighted as one change.
	maxWordBytes = 10 << 10
	// elideKeep is how much unchanged text is kept on each side of a change
	// inside a line longer than maxCell.
	elideKeep = 200
	// wordBudget and wordLineBudget bound the steps of word-level diffs in
	// one comparison and in one pair of lines.
	wordBudget     = 2 << 20
	wordLineBudget = 128 << 10
)

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
// A segment with Omitted > 0 stands for that many bytes of the line that
// are not shown (Text is then empty).
type Segment struct {
	Text    string
	Changed bool
	Omitted int
}

// Row is one line of a side-by-side diff. Line numbers are 1-based and zero on
// the side the row does not have. Old and New hold at most maxCell bytes of
// the line; OldOmitted and NewOmitted count the bytes left out after them.
// OldWords and NewWords are set for Changed rows only: the whole line, with
// long unchanged runs of long lines left out.
type Row struct {
	Kind                   Kind
	OldLine                int
	NewLine                int
	Old                    string
	New                    string
	OldOmitted, NewOmitted int
	OldWords               []Segment
	NewWords               []Segment
}

// Hunk is a run of changes with their surrounding context. Starts are 1-based
// line numbers of the first row; counts are the lines shown on each side.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Rows               []Row
}

// Options bound a comparison's output; zero fields take the defaults.
type Options struct {
	Context  int // unchanged lines around each change (default Context)
	MaxBytes int // the HTML table's size, about (default DefaultMaxBytes)
}

// Result is the comparison of two texts. It holds copies of the lines it
// shows, never the texts, so it may be cached on its own.
type Result struct {
	Hunks []Hunk
	// Added and Deleted count the lines of the whole comparison, shown or
	// not.
	Added, Deleted int
	// Coarse is set when the texts differ too much for an exact comparison
	// within the work budget: unchanged lines were matched approximately
	// (some may show as deleted and added again) and words are not
	// highlighted.
	Coarse bool
	// Truncated is set when the table was cut at Options.MaxBytes (later
	// changes are not shown) or a line was too long to show in full.
	Truncated bool

	held     int // bytes of the rows, about
	htmlSize int // the HTML table's size, about
	html     string
	htmlOnce sync.Once
}

// HTML returns the comparison as a table (see the package function HTML),
// rendered once.
func (r *Result) HTML() string {
	r.htmlOnce.Do(func() { r.html = HTML(r.Hunks) })
	return r.html
}

// Size is about how many bytes r holds with its HTML rendered: a weight
// for caches.
func (r *Result) Size() int { return 256 + r.held + r.htmlSize }

// Compare compares a and b line by line and groups the changes into hunks
// with context lines around them. Changed lines get word highlights when the
// comparison is exact. A difference only in the final newline is not shown.
// Identical texts give no hunks. Time and memory are linear in the texts'
// size, and the output is bounded by o.
func Compare(a, b string, o Options) *Result {
	if o.Context <= 0 {
		o.Context = Context
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	res := &Result{}
	if len(a) > maxText || len(b) > maxText {
		res.Coarse, res.Truncated = true, true
		return res
	}
	ta, tb := splitText(a), splitText(b)
	edits, exact := lineEdits(&ta, &tb, lineBudget, gapBudget)
	res.Coarse = !exact
	for _, e := range edits {
		res.Added += e.NewEnd - e.NewStart
		res.Deleted += e.OldEnd - e.OldStart
	}
	bd := &builder{a: &ta, b: &tb, o: o, res: res, words: exact, work: wordBudget}
	if len(edits) > 0 {
		bd.spend(tableMarkup)
	}
	for len(edits) > 0 && !bd.full {
		// Take edits whose context would touch or overlap into one hunk.
		n := 1
		for n < len(edits) && edits[n].OldStart-edits[n-1].OldEnd <= 2*o.Context {
			n++
		}
		bd.hunk(edits[:n])
		edits = edits[n:]
	}
	return res
}

// Lines is Compare with the default options, for the hunks only.
func Lines(a, b string) []Hunk { return Compare(a, b, Options{}).Hunks }

// Stat returns how many lines b adds to and deletes from a.
func Stat(a, b string) (added, deleted int) {
	ta, tb := splitText(a), splitText(b)
	edits, _ := lineEdits(&ta, &tb, lineBudget, gapBudget)
	for _, e := range edits {
		added += e.NewEnd - e.NewStart
		deleted += e.OldEnd - e.OldStart
	}
	return added, deleted
}

// Upper bounds of the HTML bytes of the table's head, a row's markup (with
// line numbers of up to 8 digits), a hunk's header, and the marks around
// changed or left-out text (see html.go): the table stays under MaxBytes.
const (
	tableMarkup = 600
	rowMarkup   = 175
	hunkMarkup  = 180
	segMarkup   = 40
	omitMarkup  = 90
)

// builder turns edits into rows until the output budget is spent.
type builder struct {
	a, b  *text
	o     Options
	res   *Result
	words bool // highlight words (exact comparisons only)
	work  int  // word-level steps left
	full  bool
}

// hunk builds the rows for a group of edits that share context.
func (bd *builder) hunk(edits []Edit) {
	first, last := edits[0], edits[len(edits)-1]
	lead := min(bd.o.Context, first.OldStart)
	trail := min(bd.o.Context, bd.a.lines()-last.OldEnd)
	h := Hunk{OldStart: first.OldStart - lead + 1, NewStart: first.NewStart - lead + 1}
	if !bd.spend(hunkMarkup) {
		return
	}
	ok := bd.context(&h, first.OldStart-lead, first.NewStart-lead, lead)
	for n, e := range edits {
		if !ok {
			break
		}
		if n > 0 {
			p := edits[n-1]
			ok = bd.context(&h, p.OldEnd, p.NewEnd, e.OldStart-p.OldEnd)
		}
		ok = ok && bd.change(&h, e)
	}
	if ok {
		bd.context(&h, last.OldEnd, last.NewEnd, trail)
	}
	for _, r := range h.Rows {
		if r.OldLine > 0 {
			h.OldLines++
		}
		if r.NewLine > 0 {
			h.NewLines++
		}
	}
	if len(h.Rows) > 0 {
		bd.res.Hunks = append(bd.res.Hunks, h)
	}
}

// spend counts n bytes of output; it reports false, and marks the result
// truncated, when they do not fit.
func (bd *builder) spend(n int) bool {
	if bd.full || bd.res.htmlSize+n > bd.o.MaxBytes {
		bd.full, bd.res.Truncated = true, true
		return false
	}
	bd.res.htmlSize += n
	return true
}

// add appends r to h if it fits in the output budget.
func (bd *builder) add(h *Hunk, r Row) bool {
	size := rowMarkup + cellSize(r.Old, r.OldOmitted) + cellSize(r.New, r.NewOmitted)
	if r.Kind == Changed {
		size = rowMarkup + segsSize(r.OldWords) + segsSize(r.NewWords)
	}
	if !bd.spend(size) {
		return false
	}
	held := 160 + len(r.Old) + len(r.New) + 48*(len(r.OldWords)+len(r.NewWords))
	for _, s := range r.OldWords {
		held += len(s.Text)
	}
	for _, s := range r.NewWords {
		held += len(s.Text)
	}
	bd.res.held += held
	h.Rows = append(h.Rows, r)
	return true
}

func cellSize(s string, omitted int) int {
	n := escapedLen(s)
	if omitted > 0 {
		n += omitMarkup
	}
	return n
}

func segsSize(segs []Segment) int {
	n := 0
	for _, s := range segs {
		switch {
		case s.Omitted > 0:
			n += omitMarkup
		case s.Changed:
			n += segMarkup + escapedLen(s.Text)
		default:
			n += escapedLen(s.Text)
		}
	}
	return n
}

// escapedLen is len(html.EscapeString(s)).
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '>':
			n += 3
		case '&', '\'', '"':
			n += 4
		}
	}
	return n
}

// cell returns a copy of at most maxCell bytes of s (cut at a character
// boundary) and how many bytes were left out.
func (bd *builder) cell(s string) (string, int) {
	if len(s) <= maxCell {
		return strings.Clone(s), 0
	}
	bd.res.Truncated = true
	k := runeStartBefore(s, maxCell)
	return strings.Clone(s[:k]), len(s) - k
}

// runeStartBefore returns the start of the character that holds byte i of s
// (i itself when it starts one), going back at most utf8.UTFMax bytes.
func runeStartBefore(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for j := i; j > 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			return j
		}
	}
	return i
}

// context appends n unchanged lines starting at old line i and new line j.
func (bd *builder) context(h *Hunk, i, j, n int) bool {
	for k := range n {
		s, cut := bd.cell(bd.a.line(i + k))
		if !bd.add(h, Row{Kind: Unchanged, OldLine: i + k + 1, NewLine: j + k + 1,
			Old: s, New: s, OldOmitted: cut, NewOmitted: cut}) {
			return false
		}
	}
	return true
}

// change pairs the old and new lines of an edit in order. A pair becomes a
// Changed row with word highlights when enough of it is shared; otherwise the
// old line is shown deleted and the new one added.
func (bd *builder) change(h *Hunk, e Edit) bool {
	nOld, nNew := e.OldEnd-e.OldStart, e.NewEnd-e.NewStart
	for k := range max(nOld, nNew) {
		i, j := e.OldStart+k, e.NewStart+k
		if k < nOld && k < nNew && bd.words {
			ol, nl := bd.a.line(i), bd.b.line(j)
			ow, nw, similar := bd.wordDiff(ol, nl)
			if similar {
				r := Row{Kind: Changed, OldLine: i + 1, NewLine: j + 1, OldWords: ow, NewWords: nw}
				r.Old, r.OldOmitted = bd.cell(ol)
				r.New, r.NewOmitted = bd.cell(nl)
				if !bd.add(h, r) {
					return false
				}
				continue
			}
		}
		if k < nOld {
			s, cut := bd.cell(bd.a.line(i))
			if !bd.add(h, Row{Kind: Deleted, OldLine: i + 1, Old: s, OldOmitted: cut}) {
				return false
			}
		}
		if k < nNew {
			s, cut := bd.cell(bd.b.line(j))
			if !bd.add(h, Row{Kind: Added, NewLine: j + 1, New: s, NewOmitted: cut}) {
				return false
			}
		}
	}
	return true
}

// words diffs two lines word by word, with the default budgets. similar
// reports whether at least a quarter of their non-space bytes are shared,
// enough to show them as a pair.
func words(old, new string) (ow, nw []Segment, similar bool) {
	bd := &builder{res: &Result{}, words: true, work: wordBudget}
	return bd.wordDiff(old, new)
}

// wordDiff is words for the builder's budget. The common start and end of
// the lines are found by comparing bytes (then moved to word boundaries),
// and only the middle is cut into words and compared, when it is short
// enough and budget is left; otherwise the middle is one change. Segments
// are copies, and long unchanged runs of long lines are left out.
func (bd *builder) wordDiff(old, new string) (ow, nw []Segment, similar bool) {
	p, s := commonEnds(old, new)
	mo, mn := old[p:len(old)-s], new[p:len(new)-s]
	var oTok, nTok []int32 // token ends within the middles
	var oChanged, nChanged []bool
	if len(mo) <= maxWordBytes && len(mn) <= maxWordBytes && bd.work > 0 {
		oTok, nTok = tokenEnds(mo), tokenEnds(mn)
		in := newInterner(len(oTok) + len(nTok))
		oi, ni := tokenIDs(in, mo, oTok), tokenIDs(in, mn, nTok)
		work := min(bd.work, wordLineBudget)
		before := work
		edits, _ := diffIDsBudget(oi, ni, in.size(), &work, 0)
		bd.work -= before - work
		oChanged, nChanged = make([]bool, len(oTok)), make([]bool, len(nTok))
		for _, e := range edits {
			for i := e.OldStart; i < e.OldEnd; i++ {
				oChanged[i] = true
			}
			for j := e.NewStart; j < e.NewEnd; j++ {
				nChanged[j] = true
			}
		}
	} else {
		// The whole middle is one token, changed.
		if mo != "" {
			oTok, oChanged = []int32{int32(len(mo))}, []bool{true}
		}
		if mn != "" {
			nTok, nChanged = []int32{int32(len(mn))}, []bool{true}
		}
	}
	shared := 2 * (nonSpace(old[:p]) + nonSpace(old[len(old)-s:]))
	start := 0
	for i, end := range oTok {
		if !oChanged[i] {
			shared += 2 * nonSpace(mo[start:end])
		}
		start = int(end)
	}
	total := nonSpace(old) + nonSpace(new)
	similar = total > 0 && 4*shared >= total
	if !similar {
		return nil, nil, false
	}
	ow = segments(old[:p], mo, old[len(old)-s:], oTok, oChanged)
	nw = segments(new[:p], mn, new[len(new)-s:], nTok, nChanged)
	if len(old) > maxCell || len(new) > maxCell {
		ow, nw = bd.elide(ow), bd.elide(nw)
	}
	return ow, nw, true
}

// commonEnds returns the lengths of the common start and end of a and b,
// not overlapping, each ending on a word boundary of both.
func commonEnds(a, b string) (pre, suf int) {
	n := min(len(a), len(b))
	for pre < n && a[pre] == b[pre] {
		if pre+64 <= n && a[pre:pre+64] == b[pre:pre+64] {
			pre += 64
			continue
		}
		pre++
	}
	for pre > 0 {
		r, size := utf8.DecodeLastRuneInString(a[:pre])
		if r == utf8.RuneError && size <= 1 {
			pre--
			continue
		}
		c := classOf(r, size)
		if c == single || (classAt(a, pre) != c && classAt(b, pre) != c) {
			break
		}
		pre -= size
	}
	n -= pre
	for suf < n && a[len(a)-1-suf] == b[len(b)-1-suf] {
		if suf+64 <= n && a[len(a)-suf-64:len(a)-suf] == b[len(b)-suf-64:len(b)-suf] {
			suf += 64
			continue
		}
		suf++
	}
	for suf > 0 {
		r, size := utf8.DecodeRuneInString(a[len(a)-suf:])
		if r == utf8.RuneError && size <= 1 {
			suf--
			continue
		}
		c := classOf(r, size)
		if c == single || (classBefore(a, len(a)-suf) != c && classBefore(b, len(b)-suf) != c) {
			break
		}
		suf -= size
	}
	return pre, suf
}

// Token classes: a token is a run of word characters, a run of spaces, or a
// single other character (punctuation, a character of a script written
// without spaces, a byte of invalid UTF-8).
const (
	none = iota // the end of the text
	word
	space
	single
)

func classOf(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size <= 1:
		return single
	case perChar(r):
		return single
	case isWordRune(r):
		return word
	case unicode.IsSpace(r):
		return space
	}
	return single
}

func classAt(s string, i int) int {
	if i >= len(s) {
		return none
	}
	return classOf(utf8.DecodeRuneInString(s[i:]))
}

func classBefore(s string, i int) int {
	if i <= 0 {
		return none
	}
	return classOf(utf8.DecodeLastRuneInString(s[:i]))
}

// tokenIDs interns the tokens of s that end at ends.
func tokenIDs(in *interner, s string, ends []int32) []int32 {
	ids := make([]int32, len(ends))
	start := 0
	for i, end := range ends {
		ids[i] = in.id(s[start:end])
		start = int(end)
	}
	return ids
}

// segments joins the tokens of the middle into runs of equal changed state,
// between the unchanged start and end. Spaces between two changed words
// count as changed so a changed phrase is highlighted as one.
func segments(pre, mid, suf string, ends []int32, changed []bool) []Segment {
	tokStart := func(i int) int {
		if i == 0 {
			return 0
		}
		return int(ends[i-1])
	}
	for i := 1; i+1 < len(ends); i++ {
		if !changed[i] && changed[i-1] && changed[i+1] && classAt(mid, tokStart(i)) == space {
			changed[i] = true
		}
	}
	var segs []Segment
	addSeg := func(text string, ch bool) {
		if text == "" {
			return
		}
		if k := len(segs) - 1; k >= 0 && segs[k].Changed == ch {
			segs[k].Text += text
			return
		}
		segs = append(segs, Segment{Text: text, Changed: ch})
	}
	addSeg(pre, false)
	for i := 0; i < len(ends); {
		j := i + 1
		for j < len(ends) && changed[j] == changed[i] {
			j++
		}
		addSeg(mid[tokStart(i):ends[j-1]], changed[i])
		i = j
	}
	addSeg(suf, false)
	for i := range segs {
		segs[i].Text = strings.Clone(segs[i].Text)
	}
	return segs
}

// elide shortens the segments of a line longer than maxCell: an unchanged
// run keeps elideKeep bytes next to each change, and a changed run its
// first maxCell bytes; what is left out becomes an Omitted segment.
func (bd *builder) elide(segs []Segment) []Segment {
	var out []Segment
	for i, s := range segs {
		n := len(s.Text)
		switch {
		case !s.Changed && n > 3*elideKeep:
			// The start of a line's first run and the end of its last are
			// away from any change: they go, unless the run is all there is.
			head, tail := elideKeep, elideKeep
			if i == 0 && len(segs) > 1 {
				head = 0
			}
			if i == len(segs)-1 && len(segs) > 1 {
				tail = 0
			}
			h := runeStartBefore(s.Text, head)
			t := runeStartBefore(s.Text, n-tail)
			if h > 0 {
				out = append(out, Segment{Text: s.Text[:h]})
			}
			out = append(out, Segment{Omitted: t - h})
			if t < n {
				out = append(out, Segment{Text: s.Text[t:]})
			}
		case s.Changed && n > maxCell:
			k := runeStartBefore(s.Text, maxCell)
			out = append(out, Segment{Text: s.Text[:k], Changed: true}, Segment{Omitted: n - k, Changed: true})
		default:
			out = append(out, s)
		}
	}
	if len(out) != len(segs) {
		bd.res.Truncated = true
		for i := range out {
			out[i].Text = strings.Clone(out[i].Text) // drop the long copies
		}
	}
	return out
}

// nonSpace counts the bytes of s that are not white space.
func nonSpace(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !(c == ' ' || '\t' <= c && c <= '\r') {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			n += size
		}
		i += size
	}
	return n
}

// tokenize splits a line into words (runs of letters, digits and marks), runs
// of white space, and single other characters. Han, kana, Hangul and Thai
// characters are words of their own, since those scripts are often written
// without spaces. The tokens concatenate to s, invalid UTF-8 included.
func tokenize(s string) []string {
	var toks []string
	start := 0
	for _, end := range tokenEnds(s) {
		toks = append(toks, s[start:end])
		start = int(end)
	}
	return toks
}

// tokenEnds returns where each token of s (see tokenize) ends.
func tokenEnds(s string) []int32 {
	var ends []int32
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		j := i + size
		if c := classOf(r, size); c != single {
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if classOf(r, size) != c {
					break
				}
				j += size
			}
		}
		ends = append(ends, int32(j))
		i = j
	}
	return ends
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
