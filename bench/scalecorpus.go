package main

// The scale part's corpus: a deterministic, seeded wiki of many pages of
// realistic size and shape. English-like text draws Zipf-distributed words
// from a vocabulary (real function words first, then generated words), so
// common and rare words both exist; about a tenth of the pages are Korean
// and a twentieth Chinese, their words built from a few hundred syllables or
// characters so that two-character queries find pages.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// scalePage is one generated page.
type scalePage struct {
	title  string
	source string
	lang   string   // "en", "ko" or "zh"
	links  []string // titles linked with [[…]] (categories excluded)
}

// scaleCorpus is the generated wiki and the vocabulary queries draw from.
type scaleCorpus struct {
	pages  []scalePage
	words  []string       // English-like vocabulary, most frequent first
	ko, zh []string       // Korean and Chinese vocabularies, most frequent first
	count  map[string]int // occurrences of each English-like word in the corpus
}

// functionWords lead the English-like vocabulary: the most common words.
var functionWords = strings.Fields(`the of and to in a is that for it as was with be by on not he this are
or his from at which but have an they you were her she there been one all we their has would when if
so no will more about can its into than other some time only new these two may first then do any like
my now over such our man me even most made after also did many before must through back years where
much your way well down should because each just those people how too little state good very make
world still own see men work long get here between both life being under never day same another know
while last might us great old year off come since against go came right used take three`)

const (
	scaleSyllables = "b br c ch cl d dr f fl g gr h j k l m n p pl pr qu r s sh st t th tr v w z"
	scaleVowels    = "a e i o u ai ea ee io ou y"
	scaleEndings   = " n r s t l m nd st rk ng x"
)

// newScaleCorpus generates n pages from seed: the same n and seed always
// give the same corpus.
func newScaleCorpus(n int, seed uint64) *scaleCorpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &scaleCorpus{count: map[string]int{}}
	c.words = scaleVocabulary(r, 30000)
	c.ko = cjkVocabulary(r, 4000, 0xAC00, 0xAC00+600)  // the first 600 Hangul syllables
	c.zh = cjkVocabulary(r, 4000, 0x4E00, 0x4E00+1200) // 1,200 common-range ideographs
	enZipf := rand.NewZipf(r, 1.07, 2, uint64(len(c.words)-1))
	koZipf := rand.NewZipf(r, 1.1, 2, uint64(len(c.ko)-1))
	zhZipf := rand.NewZipf(r, 1.1, 2, uint64(len(c.zh)-1))

	// Titles first, so that links can point at any page.
	seen := map[string]bool{}
	var categories []string
	for i := range max(3, n/200) {
		categories = append(categories, "Category:"+titleCase(c.words[40+r.IntN(2000)])+fmt.Sprintf(" %d", i))
	}
	c.pages = make([]scalePage, n)
	for i := range c.pages {
		p := &c.pages[i]
		switch x := r.Float64(); {
		case x < 0.10:
			p.lang = "ko"
		case x < 0.15:
			p.lang = "zh"
		default:
			p.lang = "en"
		}
		var t string
		switch {
		case i < len(categories):
			t, p.lang = categories[i], "en"
		case i > 20 && r.Float64() < 0.06: // a subpage of an earlier page
			parent := c.pages[r.IntN(i)].title
			if strings.HasPrefix(parent, "Category:") || strings.Count(parent, "/") > 1 {
				parent = c.pages[len(categories)+r.IntN(i-len(categories))].title
			}
			t = parent + "/" + titleCase(c.words[50+r.IntN(5000)])
		case p.lang == "ko":
			t = c.ko[koZipf.Uint64()] + " " + c.ko[r.IntN(len(c.ko))]
		case p.lang == "zh":
			t = c.zh[zhZipf.Uint64()] + c.zh[r.IntN(len(c.zh))]
		default:
			t = titleCase(c.words[150+r.IntN(8000)]) + " " + c.words[150+r.IntN(20000)]
		}
		if strings.HasPrefix(t, "Category:") && i >= len(categories) {
			t = "Page " + t
		}
		for base, k := t, 2; seen[t]; k++ {
			t = fmt.Sprintf("%s (%d)", base, k)
		}
		seen[t] = true
		p.title = t
	}

	var b strings.Builder
	for i := range c.pages {
		p := &c.pages[i]
		// Lognormal around 4 KB: median e^8.3 ≈ 4,000 bytes, most pages 1.5–12 KB.
		size := int(math.Exp(8.3 + 0.6*r.NormFloat64()))
		size = min(max(size, 400), 64<<10)
		word := func() string {
			switch p.lang {
			case "ko":
				if r.IntN(4) == 0 {
					return c.words[enZipf.Uint64()]
				}
				return c.ko[koZipf.Uint64()]
			case "zh":
				return c.zh[zhZipf.Uint64()]
			}
			w := c.words[enZipf.Uint64()]
			c.count[w]++
			return w
		}
		sep := " "
		if p.lang == "zh" {
			sep = ""
		}
		sentence := func() string {
			k := 6 + r.IntN(14)
			ws := make([]string, k)
			for j := range ws {
				ws[j] = word()
			}
			if p.lang == "zh" {
				return strings.Join(ws, sep) + "。"
			}
			ws[0] = titleCase(ws[0])
			return strings.Join(ws, sep) + "."
		}
		link := func() string {
			j := r.IntN(len(c.pages))
			if j < len(categories) {
				j = len(categories) + r.IntN(len(c.pages)-len(categories))
			}
			if j == i || len(c.pages) <= len(categories) {
				return word()
			}
			p.links = append(p.links, c.pages[j].title)
			if r.IntN(3) == 0 {
				return "[[" + c.pages[j].title + "|" + word() + "]]"
			}
			return "[[" + c.pages[j].title + "]]"
		}
		b.Reset()
		b.WriteString("Intro " + sentence() + sep + sentence() + "\n\n")
		for h := 1; b.Len() < size; h++ {
			b.WriteString("## " + titleCase(word()) + " " + word() + "\n\n")
			for range 1 + r.IntN(3) {
				for s := range 2 + r.IntN(4) {
					if s > 0 {
						b.WriteString(sep)
					}
					b.WriteString(sentence())
					if r.IntN(3) == 0 {
						b.WriteString(sep + link())
					}
				}
				b.WriteString("\n\n")
			}
			switch r.IntN(6) {
			case 0, 1:
				for range 2 + r.IntN(5) {
					b.WriteString("- " + word() + sep + word() + sep + link() + "\n")
				}
				b.WriteString("\n")
			case 2:
				b.WriteString("```go\nfunc " + c.words[100+r.IntN(500)] + "(n int) int {\n\treturn n * " +
					fmt.Sprint(r.IntN(100)) + "\n}\n```\n\n")
			case 3:
				for k := range 2 + r.IntN(4) {
					fmt.Fprintf(&b, "%d. %s\n", k+1, sentence())
				}
				b.WriteString("\n")
			}
		}
		if i >= len(categories) {
			for range 1 + r.IntN(2) {
				b.WriteString("[[" + categories[r.IntN(len(categories))] + "]]\n")
			}
		}
		p.source = b.String()
	}
	return c
}

// scaleVocabulary is the function words, then generated words of one to
// four syllables, distinct, in a seeded order.
func scaleVocabulary(r *rand.Rand, n int) []string {
	on, vo, end := strings.Fields(scaleSyllables), strings.Fields(scaleVowels), strings.Split(scaleEndings, " ")
	words := append([]string{}, functionWords...)
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	for len(words) < n {
		var b strings.Builder
		for range 1 + r.IntN(3) + r.IntN(2) {
			b.WriteString(on[r.IntN(len(on))] + vo[r.IntN(len(vo))])
		}
		b.WriteString(end[r.IntN(len(end))])
		w := b.String()
		if len(w) >= 4 && !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// cjkVocabulary is n distinct words of one to three characters from the
// code points [lo, hi), the lower ones more often.
func cjkVocabulary(r *rand.Rand, n int, lo, hi rune) []string {
	span := float64(hi - lo)
	ch := func() rune { return lo + rune(span*math.Pow(r.Float64(), 2)) }
	var words []string
	seen := map[string]bool{}
	for len(words) < n {
		k := 2
		if x := r.IntN(10); x == 0 {
			k = 1
		} else if x > 6 {
			k = 3
		}
		rs := make([]rune, k)
		for j := range rs {
			rs[j] = ch()
		}
		if w := string(rs); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

func titleCase(w string) string {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return w
	}
	return string(w[0]-'a'+'A') + w[1:]
}
