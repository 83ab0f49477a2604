package main

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// The article every measurement requests, and the link targets left red.
var (
	//go:embed article.md
	articleSource string
	//go:embed missing.txt
	missingList string
)

// articleTitle is the title the article is saved under.
const articleTitle = "Narrow-gauge railways"

var wikiLinkRE = regexp.MustCompile(`\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]`)

// corpus is what the harness loads into a fresh wiki: pages (in creation
// order, link targets first so that the article renders with blue links
// straight away) and then the article.
type corpus struct {
	pages   []page
	links   int // wiki links in the article
	missing int // distinct link targets left uncreated
}

type page struct{ title, source string }

// buildCorpus returns the article's existing link targets plus filler pages
// up to total pages (the article included).
func buildCorpus(total int) corpus {
	missing := map[string]bool{}
	for _, l := range strings.Split(missingList, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			missing[l] = true
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var c corpus
	seen := map[string]bool{}
	for _, m := range wikiLinkRE.FindAllStringSubmatch(articleSource, -1) {
		t := strings.TrimSpace(m[1])
		if strings.HasPrefix(t, "Category:") || strings.HasPrefix(t, ":") {
			continue
		}
		c.links++
		if seen[t] {
			continue
		}
		seen[t] = true
		if missing[t] {
			c.missing++
			continue
		}
		c.pages = append(c.pages, page{t, topicPage(rng, t)})
	}
	for i := 1; len(c.pages) < total-1; i++ {
		t := fmt.Sprintf("Railway notes %03d", i)
		c.pages = append(c.pages, page{t, topicPage(rng, t)})
	}
	c.pages = append(c.pages, page{articleTitle, articleSource})
	return c
}

var words = strings.Fields(`the line station locomotive gauge track wagon carriage quarry
	valley summit incline loop tunnel viaduct bridge siding timetable driver fireman guard
	token passenger freight slate coal timber boiler cylinder bogie tank saddle works shed
	volunteer society restoration heritage narrow metre steam diesel electric rack curve
	gradient ballast sleeper rail harbour junction branch company railway tramway trains
	was built opened closed rebuilt carried worked extended survived ran climbed crossed`)

// topicPage writes a short, plausible page about title: a lead, two
// sections, a list and a small table, with a link back to the article.
func topicPage(rng *rand.Rand, title string) string {
	para := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i%12 == 0 {
				if i > 0 {
					b.WriteString(". ")
				}
				w := words[rng.IntN(len(words))]
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
				continue
			}
			b.WriteByte(' ')
			b.WriteString(words[rng.IntN(len(words))])
		}
		b.WriteString(".")
		return b.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** is a topic related to [[%s]]. %s\n\n", title, articleTitle, para(40))
	fmt.Fprintf(&b, "## History\n\n%s\n\n%s\n\n", para(70), para(50))
	fmt.Fprintf(&b, "## Details\n\n")
	for range 4 {
		fmt.Fprintf(&b, "- %s\n", para(10))
	}
	fmt.Fprintf(&b, "\n| Year | Event |\n|---|---|\n")
	for y := 1860 + rng.IntN(40); y < 1990; y += 20 + rng.IntN(20) {
		fmt.Fprintf(&b, "| %d | %s |\n", y, para(6))
	}
	fmt.Fprintf(&b, "\n[[Category:Rail transport]]\n")
	return b.String()
}
