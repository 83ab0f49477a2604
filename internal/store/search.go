// Package store holds code shared by the wiki.Store backends (sqlite/,
// later postgres/): search query parsing and snippet windowing, so that
// every backend splits queries and marks matches the same way.
package store

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/wiki"
)

// MaxSearchTerms bounds the work a single query can ask for.
const MaxSearchTerms = 8

// SearchTerms splits a user's query into terms on white space, dropping
// duplicates and keeping at most MaxSearchTerms. A run of words in double
// quotes is one term, a phrase: its words must stand in that order, one
// space apart (white space in the text counts as one space). Everything
// else is literal text: an unpaired quote, asterisks and operators such as
// AND or NEAR carry no meaning.
func SearchTerms(query string) []string {
	var terms []string
	seen := map[string]bool{}
	// Control characters (NUL above all) cannot be in indexed text and break
	// FTS5 queries: they separate terms like spaces do.
	query = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, query)
	for len(terms) < MaxSearchTerms {
		query = strings.TrimLeftFunc(query, unicode.IsSpace)
		if query == "" {
			break
		}
		var term string
		if end := strings.IndexByte(query[min(1, len(query)):], '"'); query[0] == '"' && end >= 0 {
			term, query = strings.Join(strings.Fields(query[1:1+end]), " "), query[end+2:]
		} else {
			i := strings.IndexFunc(query, unicode.IsSpace)
			if i < 0 {
				i = len(query)
			}
			term, query = query[:i], query[i:]
		}
		if k := strings.ToLower(term); term != "" && !seen[k] {
			seen[k] = true
			terms = append(terms, term)
		}
	}
	return terms
}

// EscapeLike escapes s for a LIKE pattern with ESCAPE '\'.
func EscapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// SnippetRunes is the length of a snippet, in characters (about 30 words).
const SnippetRunes = 160

// Snippet returns a window of text of about SnippetRunes characters around
// the first match of any term, with every match inside the window enclosed
// in wiki.MarkStart … wiki.MarkEnd. Matching folds case rune by rune. Without
// a match it returns the start of the text. White space runs become one space.
func Snippet(text string, terms []string) string {
	text = strings.Join(strings.Fields(text), " ")
	rs := []rune(text)
	folded := make([]rune, len(rs))
	for i, r := range rs {
		folded[i] = unicode.ToLower(r)
	}
	fterms := make([][]rune, 0, len(terms))
	for _, t := range terms {
		if t == "" {
			continue
		}
		ft := []rune(t)
		for i, r := range ft {
			ft[i] = unicode.ToLower(r)
		}
		fterms = append(fterms, ft)
	}
	// matchAt returns the length of the longest term matching at i, or 0.
	matchAt := func(i int) int {
		best := 0
		for _, ft := range fterms {
			if len(ft) > best && i+len(ft) <= len(folded) && equalRunes(folded[i:i+len(ft)], ft) {
				best = len(ft)
			}
		}
		return best
	}
	first := -1
	for i := range folded {
		if matchAt(i) > 0 {
			first = i
			break
		}
	}
	start := 0
	if first > SnippetRunes/3 {
		start = first - SnippetRunes/3
		// Start at a word boundary when one is near.
		for j := start; j < first && j < start+20; j++ {
			if rs[j] == ' ' {
				start = j + 1
				break
			}
		}
	}
	end := min(len(rs), start+SnippetRunes)
	var b strings.Builder
	b.Grow((end - start) * 3)
	if start > 0 {
		b.WriteString("…")
	}
	for i := start; i < end; {
		if n := matchAt(i); n > 0 {
			b.WriteString(wiki.MarkStart)
			b.WriteString(string(rs[i:min(i+n, len(rs))]))
			b.WriteString(wiki.MarkEnd)
			i += n
			continue
		}
		b.WriteRune(rs[i])
		i++
	}
	if end < len(rs) {
		b.WriteString("…")
	}
	return b.String()
}

func equalRunes(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// RuneLen is utf8.RuneCountInString, named for what the backends ask:
// trigram indexes match terms of three characters or more.
func RuneLen(s string) int { return utf8.RuneCountInString(s) }
