package main

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestScaleCorpus(t *testing.T) {
	const n = 2000
	c := newScaleCorpus(n, scaleSeed)

	t.Run("the same seed gives the same corpus", func(t *testing.T) {
		d := newScaleCorpus(n, scaleSeed)
		if !slices.EqualFunc(c.pages, d.pages, func(a, b scalePage) bool { return a.title == b.title && a.source == b.source }) {
			t.Error("two corpora of one seed differ")
		}
		if e := newScaleCorpus(n, scaleSeed+1); e.pages[n-1].source == c.pages[n-1].source {
			t.Error("another seed gave the same last page")
		}
	})

	titles := map[string]bool{}
	langs := map[string]int{}
	total := 0
	for _, p := range c.pages {
		if titles[p.title] {
			t.Errorf("title %q twice", p.title)
		}
		titles[p.title] = true
		langs[p.lang]++
		total += len(p.source)
		if !utf8.ValidString(p.source) || !utf8.ValidString(p.title) {
			t.Errorf("%q: not UTF-8", p.title)
		}
	}

	t.Run("pages are of realistic size", func(t *testing.T) {
		if avg := total / n; avg < 3000 || avg > 7000 {
			t.Errorf("average %d bytes, want 3–7 KB", avg)
		}
		for _, p := range c.pages {
			if len(p.source) < 400 || len(p.source) > 80<<10 {
				t.Errorf("%q: %d bytes", p.title, len(p.source))
			}
		}
	})

	t.Run("about a tenth Korean and a twentieth Chinese", func(t *testing.T) {
		if ko := langs["ko"]; ko < n*7/100 || ko > n*13/100 {
			t.Errorf("%d Korean pages of %d", ko, n)
		}
		if zh := langs["zh"]; zh < n*3/100 || zh > n*7/100 {
			t.Errorf("%d Chinese pages of %d", zh, n)
		}
	})

	t.Run("links point to existing titles", func(t *testing.T) {
		links := 0
		for _, p := range c.pages {
			for _, l := range p.links {
				links++
				if !titles[l] {
					t.Errorf("%q links to %q, no such page", p.title, l)
				}
				if !strings.Contains(p.source, "[["+l+"]]") && !strings.Contains(p.source, "[["+l+"|") {
					t.Errorf("%q: link to %q not in the source", p.title, l)
				}
			}
		}
		if links < n*5 {
			t.Errorf("%d links in %d pages", links, n)
		}
	})

	t.Run("titles have subpages and categories", func(t *testing.T) {
		sub, cat := 0, 0
		for title := range titles {
			if strings.Contains(title, "/") {
				sub++
			}
			if strings.HasPrefix(title, "Category:") {
				cat++
			}
		}
		if sub < n/50 || cat == 0 {
			t.Errorf("%d subpages, %d categories", sub, cat)
		}
	})

	t.Run("every query class has queries that occur in the corpus", func(t *testing.T) {
		qs := scaleQueries(c, 20)
		for _, class := range scaleClasses {
			if len(qs[class]) < 10 {
				t.Errorf("%s: %d queries", class, len(qs[class]))
				continue
			}
			q := strings.TrimSuffix(strings.Trim(qs[class][0], `"`), "*") // a phrase, or a prefix
			if !slices.ContainsFunc(c.pages, func(p scalePage) bool { return strings.Contains(p.source, q) }) {
				t.Errorf("%s: %q in no page", class, q)
			}
		}
	})
}
