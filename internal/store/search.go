// Package store holds code shared by the wiki.Store backends (sqlite/,
// later postgres/): search query parsing and snippet windowing, so that
// every backend splits queries and marks matches the same way.
package store

import (
	"bytes"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/wiki"
)

// MaxSearchTerms bounds the work a single query can ask for: terms, and
// words in one phrase.
const (
	MaxSearchTerms = 8
	MaxPhraseWords = 16
)

// MinPrefix is the shortest prefix searched as one (word*): backends keep
// an index of three-character prefixes, and a shorter one would ask for
// the lists of a large part of the vocabulary.
const MinPrefix = 3

// Query is a parsed search query: pages match when they hold every term.
type Query struct {
	Terms []QueryTerm
}

// QueryTerm is one term of a query: a word, or a phrase whose words must
// stand in that order. A word the analyzer splits (e-mail, a run of Korean
// or Chinese characters) is a phrase of its parts.
type QueryTerm struct {
	Words  []string // analyzer terms
	Prefix bool     // the last word is a prefix (typed with a trailing *)
}

// ParseQuery splits a user's query into terms on white space, dropping
// duplicates and keeping at most MaxSearchTerms. A run of words in double
// quotes (straight or typographic) is one phrase. A word ending in * is a
// prefix, if at least MinPrefix characters come before it (one for
// Korean, Chinese or Japanese). Everything else is literal text: an unpaired
// quote, operators such as AND or NEAR and punctuation carry no meaning.
func ParseQuery(query string) Query {
	var q Query
	seen := map[string]bool{}
	query = strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || r == 0x7f:
			return ' '
		case r == '“' || r == '”' || r == '„' || r == '«' || r == '»' || r == '＂':
			return '"'
		}
		return r
	}, query)
	for len(q.Terms) < MaxSearchTerms {
		query = strings.TrimLeftFunc(query, unicode.IsSpace)
		if query == "" {
			break
		}
		var raw string
		if end := strings.IndexByte(query[min(1, len(query)):], '"'); query[0] == '"' && end >= 0 {
			raw, query = query[1:1+end], query[end+2:]
		} else {
			i := strings.IndexFunc(query, unicode.IsSpace)
			if i < 0 {
				i = len(query)
			}
			raw, query = query[:i], query[i:]
		}
		var t QueryTerm
		if strings.HasSuffix(raw, "*") {
			raw = strings.TrimRight(raw, "*")
			t.Prefix = true
		}
		t.Words = queryTerms(raw)
		if len(t.Words) == 0 {
			continue
		}
		if len(t.Words) == 1 && isCJK([]rune(t.Words[0])[0]) && utf8.RuneCountInString(t.Words[0]) == 1 {
			// One character: the start of a bigram, or a run's last.
			t.Prefix = true
		}
		if len(t.Words) > MaxPhraseWords {
			t.Words, t.Prefix = t.Words[:MaxPhraseWords], false
		}
		if last := t.Words[len(t.Words)-1]; t.Prefix && utf8.RuneCountInString(last) < MinPrefix && !isCJK([]rune(last)[0]) {
			t.Prefix = false
		}
		key := strings.Join(t.Words, " ")
		if t.Prefix {
			key += "*"
		}
		if !seen[key] {
			seen[key] = true
			q.Terms = append(q.Terms, t)
		}
	}
	return q
}

// Words returns every word of every term.
func (q Query) Words() []string {
	var out []string
	for _, t := range q.Terms {
		out = append(out, t.Words...)
	}
	return out
}

// firsts marks the first bytes of q's words (tokensFrom).
func (q Query) firsts() *[256]bool {
	var f [256]bool
	for _, t := range q.Terms {
		for _, w := range t.Words {
			if w != "" {
				f[w[0]] = true
			}
		}
	}
	return &f
}

// EscapeLike escapes s for a LIKE pattern with ESCAPE '\'.
func EscapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// SnippetRunes is the length of a snippet, in characters (about 30 words).
const SnippetRunes = 160

// Snippet returns a window of text of about SnippetRunes characters around
// the first match of the query, with every matching word inside the window
// enclosed in wiki.MarkStart … wiki.MarkEnd. Words match as the index
// matches them (folded by the analyzer). Without a match it returns the
// start of the text. White space runs become one space.
func Snippet(text string, q Query) string {
	text = snippetText(text)
	// The text's tokens, in a buffer of the pool's: a search makes a
	// snippet for each of its hits, a few hundred tokens each (a
	// Chinese or Korean text has one a character).
	buf := tokenBufs.Get().(*[]Token)
	toks := (*buf)[:0]
	defer func() {
		if cap(toks) <= maxPooledTokens {
			clear(toks) // keeps no term's string
			*buf = toks[:0]
			tokenBufs.Put(buf)
		}
	}()
	// matchAt reports whether term t's words stand at toks[i:].
	matchAt := func(t QueryTerm, i int) bool {
		if i+len(t.Words) > len(toks) {
			return false
		}
		for j, w := range t.Words {
			// An empty term is a word tokensFrom left unstemmed: not one
			// of the query's.
			got := toks[i+j].Term
			if got == "" || (got != w && !(t.Prefix && j == len(t.Words)-1 && strings.HasPrefix(got, w))) {
				return false
			}
		}
		return true
	}
	// The text's terms up to a little past the window's furthest end
	// (SnippetRunes runes of at most 4 bytes after the first match):
	// the rest would not be shown.
	longest := 1
	for _, t := range q.Terms {
		longest = max(longest, len(t.Words))
	}
	limit, checked, past := -1, 0, 0
	for tok := range tokensFrom(text, q.firsts()) {
		toks = append(toks, tok)
		if limit >= 0 {
			if tok.Start > limit {
				if past++; past >= longest {
					break
				}
			}
			continue
		}
		for ; limit < 0 && checked+longest <= len(toks); checked++ {
			for _, t := range q.Terms {
				if matchAt(t, checked) {
					limit = toks[checked].Start + 4*SnippetRunes
					break
				}
			}
		}
	}
	// Marked spans, in bytes; overlapping or touching ones merge (the
	// bigrams of a Korean or Chinese word).
	type span struct{ start, end int }
	var marks []span
	for i := range toks {
		for _, t := range q.Terms {
			if !matchAt(t, i) {
				continue
			}
			sp := span{toks[i].Start, toks[i+len(t.Words)-1].End}
			if n := len(marks); n > 0 && sp.start <= marks[n-1].end {
				marks[n-1].end = max(marks[n-1].end, sp.end)
			} else {
				marks = append(marks, sp)
			}
		}
	}
	// The window, in bytes: from a third of a snippet before the first
	// match (at a word boundary when one is near) for SnippetRunes runes.
	start := 0
	if len(marks) > 0 {
		first := marks[0].start
		start = first
		for n := 0; start > 0 && n < SnippetRunes/3; n++ {
			_, size := utf8.DecodeLastRuneInString(text[:start])
			start -= size
		}
		if start > 0 {
			if j := strings.IndexByte(text[start:first], ' '); j >= 0 && j < 60 {
				start += j + 1
			}
		}
	}
	end := start
	for n := 0; end < len(text) && n < SnippetRunes; n++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	var b strings.Builder
	b.Grow(end - start + 16)
	if start > 0 {
		b.WriteString("…")
	}
	at := start
	for _, m := range marks {
		if m.end <= start {
			continue
		}
		if m.start >= end {
			break
		}
		ms, me := max(m.start, at), min(m.end, end)
		b.WriteString(text[at:ms])
		b.WriteString(wiki.MarkStart)
		b.WriteString(text[ms:me])
		b.WriteString(wiki.MarkEnd)
		at = me
	}
	b.WriteString(text[at:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

// snippetText returns text with its white space runs made one space (none
// at either end, as strings.Fields and Join would make it), and the marks'
// characters replaced by U+FFFD: they are private-use characters, and a
// page's own are not marks. One pass, one string, the text copied a run
// at a time: a search does it for each of its hits.
func snippetText(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	start, gap := -1, false // the run not written yet; white space before it
	sep := func() {
		if gap && b.Len() > 0 {
			b.WriteByte(' ')
		}
		gap = false
	}
	write := func(end int) {
		if start >= 0 {
			sep()
			b.WriteString(text[start:end])
			start = -1
		}
	}
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch {
		case r < utf8.RuneSelf && asciiSpace[r], r >= utf8.RuneSelf && unicode.IsSpace(r):
			write(i)
			gap = true
		case r == markRunes[0], r == markRunes[1]:
			write(i)
			sep()
			b.WriteRune(utf8.RuneError)
		case start < 0:
			start = i
		}
		i += size
	}
	write(len(text))
	return b.String()
}

// asciiSpace marks the ASCII characters unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// markRunes are wiki.MarkStart and wiki.MarkEnd.
var markRunes = [2]rune{[]rune(wiki.MarkStart)[0], []rune(wiki.MarkEnd)[0]}

// tokenBufs hold Snippet's tokens; a buffer of more than maxPooledTokens
// is not kept.
var tokenBufs = sync.Pool{New: func() any { return new([]Token) }}

const maxPooledTokens = 16 << 10

// snippetContext is how much text around a match SnippetSource keeps, in
// bytes on either side: more than a snippet shows, so that the snippet is
// made from whole lines.
const snippetContext = 600

// SnippetScan is how much of a page's source SnippetSource searches for
// the first match.
const SnippetScan = 64 << 10

// SnippetHead is how much of the start of a page's source SnippetSource
// reads at most: the match is in the first SnippetScan bytes, and lines
// around it are kept (snippetContext, then up to twice as far to a line
// break). A search hit carries that much of its page's text.
const SnippetHead = SnippetScan + 3*snippetContext + utf8.UTFMax

// lowerBufs hold SnippetSource's lower-cased heads (SnippetScan bytes at
// most, and a buffer of more is not kept).
var lowerBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendLower appends s lower-cased to dst, as strings.ToLower does it (a
// character at a time), and reports whether every character kept its
// length and s is valid UTF-8: then a byte offset in one is one in the
// other.
func appendLower(dst []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return dst, false
		}
		if caseless(r) {
			dst = append(dst, s[i:i+size]...)
			i += size
			continue
		}
		l := unicode.ToLower(r)
		if utf8.RuneLen(l) != size {
			return dst, false
		}
		dst = utf8.AppendRune(dst, l)
		i += size
	}
	return dst, true
}

// caseless reports whether r is in a block of characters without case,
// where unicode.ToLower's search of its tables is not needed: Hiragana,
// Katakana and the Han characters (U+3040 to U+9FFF), and Hangul
// syllables.
func caseless(r rune) bool {
	return r >= 0x3040 && r <= 0x9fff || r >= 0xac00 && r <= 0xd7a3
}

// SnippetSource returns the part of a page's source that its snippet for
// q will come from: whole lines around the first place a word of q seems
// to stand (its folded form, found in the lower-cased source), or the
// start of the source. Turning a whole page into text for each hit would
// cost a parse per hit; this part is a few lines.
func SnippetSource(src string, q Query) string {
	// Only the start of a long page is searched for the match: a hit
	// costs a bounded amount whatever the page's size.
	n := min(len(src), SnippetScan)
	for n > 0 && n < len(src) && !utf8.RuneStart(src[n]) {
		n--
	}
	head := src[:n]
	at := -1
	// Lower case keeps byte offsets only when it keeps every character's
	// length (Ⱥ grows, K shrinks, invalid bytes become U+FFFD): otherwise
	// the analyzer finds the match, with offsets in the source itself.
	// The match is most often near the start: the head is lower-cased
	// 4 KB first, then four times as much until a match is found whole,
	// each time only the new bytes, into a buffer of the pool's.
	var words [][]byte
	longest := 0
	for _, w := range q.Words() {
		if w != "" { // a Query made by hand; ParseQuery makes none
			words = append(words, []byte(w))
			longest = max(longest, len(w))
		}
	}
	buf := lowerBufs.Get().(*[]byte)
	defer lowerBufs.Put(buf)
	lower := (*buf)[:0]
	for n := min(len(head), 4<<10); ; n = min(len(head), 4*n) {
		// At a character's start, if one is near: invalid bytes make
		// the part invalid, and the analyzer below finds the match.
		for i := 1; i < utf8.UTFMax && n < len(head) && !utf8.RuneStart(head[n]); i++ {
			n--
		}
		from := len(lower)
		var ok bool
		if lower, ok = appendLower(lower, head[from:n]); !ok {
			at = -1
			break
		}
		// A match wholly in the bytes lowered before was found then: the
		// new ones start at most longest-1 bytes before them.
		lo := max(0, from-longest+1)
		for _, w := range words {
			if i := bytes.Index(lower[lo:], w); i >= 0 && (at < 0 || lo+i < at) {
				at = lo + i
			}
		}
		// A match found ends before the part does, so no word starting
		// before it runs past the part.
		if (at >= 0 && at+longest <= n) || n == len(head) {
			break
		}
	}
	if cap(lower) <= 2*SnippetScan {
		*buf = lower
	}
	if at < 0 {
		// A word that folds differently in the source (an accent, a full-
		// width letter): find it as the index does.
	tokens:
		for t := range tokensFrom(head, q.firsts()) {
			if t.Term == "" {
				continue
			}
			for _, tt := range q.Terms {
				for _, w := range tt.Words {
					if t.Term == w || (tt.Prefix && strings.HasPrefix(t.Term, w)) {
						at = t.Start
						break tokens
					}
				}
			}
		}
	}
	at = min(max(at, 0), len(src))
	// Whole lines when a line break is near, else whole words.
	start := max(0, at-snippetContext)
	if start > 0 {
		lo := max(0, start-2*snippetContext)
		if i := strings.LastIndexByte(src[lo:start], '\n'); i >= 0 {
			start = lo + i + 1
		} else if i := strings.IndexByte(src[start:at], ' '); i >= 0 {
			start += i + 1
		}
	}
	end := min(len(src), at+snippetContext)
	hi := min(len(src), end+2*snippetContext)
	if i := strings.IndexByte(src[end:hi], '\n'); i >= 0 {
		end += i + 1
	} else if i := strings.LastIndexByte(src[at:end], ' '); i >= 0 && end < len(src) {
		end = at + i
	}
	return src[start:end]
}
