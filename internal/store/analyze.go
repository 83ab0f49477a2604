package store

import (
	"hash/maphash"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// The search analyzer: how text and queries become index terms. Every
// backend indexes the output of IndexText and searches with the terms of
// ParseQuery, so that what is found does not depend on the database.
//
// A term is a word folded for matching: lower case, Latin, Greek and
// Cyrillic letters without their accents (é → e, ß → ss), full-width forms
// as ASCII, apostrophes inside a word dropped (don't, don’t → dont). Han,
// Hiragana, Katakana and Hangul have no spaces between words: a run of them
// becomes its overlapping two-character terms (bigrams) and its last
// character alone, so that any two characters of the run are one term and
// a single character is found as a prefix. English words are stemmed
// (tomatoes → tomato), in the text and in queries alike.

// MaxTermBytes bounds a term: a longer word (a hash, base64) is cut.
const MaxTermBytes = 64

// Token is one term of a text and where it stands in that text.
type Token struct {
	Term       string
	Start, End int // byte offsets of the term's source in the text
}

// Tokenize calls emit for each term of s in order.
func Tokenize(s string, emit func(Token)) {
	tokenize(s, true, indexStemCaches, nil, nil, func(t Token) bool { emit(t); return true })
}

// IndexTokens calls yield for each term of s in order, as IndexText has
// them, but for its words unstemmed: a term as it is (word nil: a CJK
// bigram or character) or a folded word, whose term is WordTerm(word)
// (term ""; word is valid during the call only). An indexer that meets
// a word a thousand times in a batch of pages makes its term once
// (search.BuildText), where IndexText looks each one up.
func IndexTokens(s string, yield func(term string, word []byte)) {
	tokenize(s, true, nil, nil, func(w []byte) bool { yield("", w); return true },
		func(t Token) bool { yield(t.Term, nil); return true })
}

// WordTerm returns the term of a word IndexTokens yields.
func WordTerm(word []byte) string { return wordTerm(nil, word) }

// wordTerm is the term of a folded word: its stem (through cache, when not
// nil), cut to MaxTermBytes.
func wordTerm(cache *stemCache, word []byte) string {
	t := cache.stem(word)
	if len(t) > MaxTermBytes {
		t = t[:MaxTermBytes]
		for !utf8.ValidString(t) {
			t = t[:len(t)-1]
		}
		t = strings.Clone(t) // not the whole word's string, which a term kept by an index would keep
	}
	return t
}

// Tokens returns the terms of s in order, as Tokenize: a caller that has
// what it needs stops there.
func Tokens(s string) iter.Seq[Token] { return tokensFrom(s, nil) }

// tokensFrom is Tokens, but for the words (not CJK characters) whose
// folded form starts with a byte firsts does not mark (nil: none): their
// Term is empty, unstemmed. A stem keeps its word's first letter, so such
// a word's term cannot equal or start with a word that starts with a
// marked byte: looking for a query's words in a text, only the words that
// may be them are stemmed, most of the cost of reading it.
func tokensFrom(s string, firsts *[256]bool) iter.Seq[Token] {
	return func(yield func(Token) bool) { tokenize(s, true, readStemCaches, firsts, nil, yield) }
}

// tokenize is Tokens; a query (index false) leaves out the last
// character of a CJK run of two or more when nothing follows it: the
// bigrams find it. When a word follows (ポケモンGO, 東京-2020), the
// character stays, as in the text, so that the phrase's terms stand next
// to each other as the text's do. A text of stemCacheMin bytes or more
// takes a stem cache from caches. A word whose first byte firsts does not
// mark (when not nil) is yielded with an empty Term (tokensFrom). With
// words not nil, words go to it folded, not stemmed, and not to yield
// (IndexTokens); caches may then be nil.
func tokenize(s string, index bool, caches *sync.Pool, firsts *[256]bool, words func([]byte) bool, yield func(Token) bool) {
	var cache *stemCache // a short text (a query, a title) does without
	if len(s) >= stemCacheMin && words == nil {
		cache = caches.Get().(*stemCache)
		defer caches.Put(cache)
	}
	word := make([]byte, 0, 32)
	wordStart, lastEnd := -1, 0
	stopped := false
	var pending *Token // a query's run-final character, until a term follows
	emit := func(t Token) {
		if pending != nil {
			p := *pending
			pending = nil
			if !stopped && !yield(p) {
				stopped = true
			}
		}
		if !stopped && !yield(t) {
			stopped = true
		}
	}
	flush := func() {
		if wordStart >= 0 && len(word) > 0 {
			switch {
			case words != nil:
				// Only an index's tokens come here, and an index has no
				// pending token (endCJK).
				if !stopped && !words(word) {
					stopped = true
				}
			case firsts != nil && !firsts[word[0]]:
				emit(Token{Start: wordStart, End: lastEnd})
			default:
				emit(Token{Term: wordTerm(cache, word), Start: wordStart, End: lastEnd})
			}
		}
		word = word[:0]
		wordStart = -1
	}
	// The CJK run being cut into bigrams: the previous character, and
	// whether folding left it as it stands in s (then its terms are s's
	// own bytes, not new strings).
	prevCJK, prevStart, run, prevSame := rune(-1), 0, 0, false
	endCJK := func(end int) {
		if prevCJK < 0 {
			return
		}
		term := s[prevStart:end]
		if !prevSame {
			term = string(prevCJK)
		}
		switch {
		case index || run == 1:
			emit(Token{Term: term, Start: prevStart, End: end})
		default:
			pending = &Token{Term: term, Start: prevStart, End: end}
		}
		prevCJK, run = -1, 0
	}
	for i := 0; i < len(s); {
		if stopped {
			return
		}
		// ASCII, most of most texts, is read a byte at a time: a letter or
		// digit (folded by asciiFold) goes into the word, anything else
		// ends it but for an apostrophe inside one.
		if c := s[i]; c < utf8.RuneSelf {
			if prevCJK >= 0 {
				endCJK(lastEnd)
			}
			switch f := asciiFold[c]; {
			case f != 0:
				if wordStart < 0 {
					wordStart = i
				}
				word = append(word, f)
				lastEnd = i + 1
			case c == '\'' && wordStart >= 0 && i+1 < len(s) && wordNext(s[i+1:]):
				// inside a word: don't → dont
			default:
				flush()
			}
			i++
			continue
		}
		// Other characters: an invalid byte is read as utf8.RuneError,
		// which is not a word character.
		r, size := utf8.DecodeRuneInString(s[i:])
		if isCJK(r) {
			flush()
			f := foldCJK(r)
			if prevCJK >= 0 {
				term := s[prevStart : i+size] // the two characters, next to each other
				if !prevSame || f != r {
					term = string([]rune{prevCJK, f})
				}
				emit(Token{Term: term, Start: prevStart, End: i + size})
			}
			prevCJK, prevStart, prevSame = f, i, f == r
			run++
			lastEnd = i + size
			i += size
			continue
		}
		if prevCJK >= 0 {
			endCJK(lastEnd)
		}
		switch {
		case isApostrophe(r) && wordStart >= 0 && i+size < len(s) && wordNext(s[i+size:]):
			// inside a word: don't → dont
		case r >= 0x300 && r <= 0x36f: // a combining accent: folded away
			if wordStart >= 0 {
				lastEnd = i + size
			}
		case !isWordRune(r):
			flush()
		default:
			if wordStart < 0 {
				wordStart = i
			}
			word = foldRune(word, r)
			lastEnd = i + size
		}
		i += size
	}
	endCJK(lastEnd)
	flush()
}

// maxStemmed: a longer word is its own term, and is not remembered.
const maxStemmed = 24

// stemHashed returns the term of a folded word w of at most maxStemmed
// bytes, whose hash (stemSeed) is h: the English stem (Porter2) of a word
// of ASCII letters longer than three, so that tomato finds tomatoes;
// other words as they are. Terms are remembered in a fixed table indexed
// by the word's hash (a newer word takes an older one's slot): text
// repeats its words, a stem costs microseconds, a word found there costs
// no allocation, and the table's size cannot grow.
func stemHashed(w []byte, h uint64) string {
	slot := &stems[h&uint64(len(stems)-1)]
	if e := slot.Load(); e != nil && e.word == string(w) {
		return e.stem
	}
	word := string(w)
	e := &stemEntry{word: word, stem: word}
	if len(w) > 3 && isLowerASCII(w) {
		e.stem = english.Stem(word, false)
	}
	slot.Store(e)
	return e.stem
}

// isLowerASCII reports whether w holds only the letters a to z.
func isLowerASCII(w []byte) bool {
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

type stemEntry struct{ word, stem string }

// stemCache is a tokenizer's own table in front of stems (a tokenize call
// takes one from a pool): a word found there costs one read of memory the
// core has seen lately, where stems costs three (slot, entry, word) in a
// table larger than a core's cache. Its number of slots is a power of two.
type stemCache struct{ slots []stemSlot }

type stemSlot struct {
	n    uint8 // the word's length; 0: an empty slot
	word [maxStemmed]byte
	stem string
}

// The stem caches of indexing (IndexText: an import's pages, an edit's
// text) hold 16,384 words (768 KB): an import tokenizes every page's text,
// and with 4,096 a 100,000-page import's analyzer spent a third of its
// time in stems. Reading a text for a search hit's snippet (Tokens) often
// stops after a few words, and a search reads up to a hundred at once:
// those hold 4,096 (192 KB), less to allocate when a collection has
// emptied the pool.
var (
	indexStemCaches = stemCaches(1 << 14)
	readStemCaches  = stemCaches(1 << 12)
)

func stemCaches(slots int) *sync.Pool {
	return &sync.Pool{New: func() any { return &stemCache{slots: make([]stemSlot, slots)} }}
}

// stemCacheMin: a text shorter than this is tokenized without a stem
// cache, which would cost more to fill than it saves, and which would
// otherwise be held by every request tokenizing a query at once.
const stemCacheMin = 1 << 10

// stem is the package's stem, remembered in c too (nil: in the shared
// table only).
func (c *stemCache) stem(w []byte) string {
	if len(w) > maxStemmed {
		return string(w)
	}
	h := maphash.Bytes(stemSeed, w)
	if c == nil {
		return stemHashed(w, h)
	}
	s := &c.slots[h&uint64(len(c.slots)-1)]
	if int(s.n) == len(w) && string(s.word[:s.n]) == string(w) {
		return s.stem
	}
	t := stemHashed(w, h)
	s.n = uint8(copy(s.word[:], w))
	s.stem = t
	return t
}

var (
	stems    [1 << 18]atomic.Pointer[stemEntry]
	stemSeed = maphash.MakeSeed()
)

// IndexText returns the terms of s separated by spaces: what a backend's
// index stores (SQLite's segments, package search; PostgreSQL's tsvector).
func IndexText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	Tokenize(s, func(t Token) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.Term)
	})
	return b.String()
}

// queryTerms returns the terms of a query's word or phrase s, each a string
// of its own: a term may be part of s (a Chinese bigram), which is part of
// the request, and a query's words are kept by caches.
func queryTerms(s string) []string {
	var out []string
	tokenize(s, false, readStemCaches, nil, nil, func(t Token) bool { out = append(out, strings.Clone(t.Term)); return true })
	return out
}

// Fold returns s folded for matching as the analyzer does (case, accents,
// apostrophes, full-width forms), keeping everything else, so that title
// completion and "go to the page" compare titles as search does.
func Fold(s string) string {
	b := make([]byte, 0, len(s))
	for i, r := range s {
		switch {
		case r >= 0x300 && r <= 0x36f:
		case isApostrophe(r) && i > 0:
			if next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):]); !isWordRune(next) {
				b = utf8.AppendRune(b, r)
			}
		case isCJK(r):
			b = utf8.AppendRune(b, foldCJK(r))
		case isWordRune(r):
			b = foldRune(b, r)
		default:
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
	}
	return string(b)
}

// wordNext reports whether s starts with a word character that is not
// CJK: an apostrophe before it stands inside a word.
func wordNext(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRune(r) && !isCJK(r)
}

// asciiFold maps an ASCII letter or digit to its folded form (lower case)
// and any other ASCII character to 0.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		if isWordRune(rune(c)) {
			t[c] = foldRune(nil, rune(c))[0]
		}
	}
	return t
}()

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == 'ʼ' || r == '‘' || r == '＇'
}

// isWordRune: letters, digits and the combining marks some scripts write
// words with (Devanagari vowel signs).
func isWordRune(r rune) bool {
	if i, ok := tableSlot(r); ok {
		return wordRunes[i]
	}
	return isWordRuneSlow(r)
}

// wordRunes holds isWordRuneSlow for the runes of folds (the unicode
// tables' lookups were a third of the analyzer's time on Russian text).
var wordRunes = runeTable(isWordRuneSlow)

// isWordRuneSlow is isWordRune without wordRunes.
func isWordRuneSlow(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r) ||
		(r >= 0xFF10 && r <= 0xFF19)
}

// isCJK reports the scripts written without spaces between words that the
// analyzer cuts into bigrams.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	// Letters only: the scripts' symbols (Kangxi radicals, circled
	// Katakana) are not words, and the index's tokenizer drops them.
	return unicode.IsLetter(r) && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 0x30FC) // ー, the prolonged sound mark
}

// foldCJK maps half-width Katakana to full width, so both spellings meet.
func foldCJK(r rune) rune {
	if r >= 0xFF66 && r <= 0xFF9D {
		return []rune(norm.NFKC.String(string(r)))[0]
	}
	return r
}

// foldRune appends r folded: lower case, without accents (Latin, Greek,
// Cyrillic), full-width ASCII as ASCII.
func foldRune(b []byte, r rune) []byte {
	if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII
		r -= 0xFEE0
	}
	if i, ok := tableSlot(r); ok {
		return append(b, folds[i]...)
	}
	return foldSlow(b, r)
}

// tableSlot returns r's place in folds and wordRunes, if it has one.
func tableSlot(r rune) (int, bool) {
	switch {
	case r >= 0 && r < foldLow:
		return int(r), true
	case r >= foldHigh && r < foldHigh+foldHighN:
		return int(foldLow + r - foldHigh), true
	}
	return 0, false
}

// The runes whose folds foldRune reads in folds: below foldLow, and
// foldHighN from foldHigh (Latin, Greek and Cyrillic letters; Latin
// Extended Additional and Greek Extended).
const (
	foldLow   = 0x530
	foldHigh  = 0x1E00
	foldHighN = 0x200
)

// folds holds foldSlow's bytes for the runes of foldLow and foldHigh,
// made once: a decomposition for each letter of a text (norm.NFD) made
// Russian and Greek texts cost their analyzer ten times what English ones
// do.
var folds = runeTable(func(r rune) string { return string(foldSlow(nil, r)) })

// runeTable returns f of the runes below foldLow, then of the foldHighN
// from foldHigh.
func runeTable[T any](f func(rune) T) (t [foldLow + foldHighN]T) {
	for r := range rune(foldLow) {
		t[r] = f(r)
	}
	for r := range rune(foldHighN) {
		t[foldLow+r] = f(foldHigh + r)
	}
	return t
}

// foldSlow is foldRune but for full-width ASCII, without folds.
func foldSlow(b []byte, r rune) []byte {
	if s, ok := specialFolds[r]; ok {
		return append(b, s...)
	}
	if _, ok := tableSlot(r); ok {
		// Latin, Greek, Cyrillic: the base letter of the decomposition.
		for _, d := range norm.NFD.String(string(r)) {
			if d < 0x300 || d > 0x36f {
				b = utf8.AppendRune(b, unicode.ToLower(d))
			}
		}
		return b
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// specialFolds are letters without a decomposition that readers type
// without their stroke or ligature.
var specialFolds = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l", 'ı': "i", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d",
	'ς': "σ", 'ﬁ': "fi", 'ﬂ': "fl",
}
