package wikitext

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/render"
)

func TestToMarkdown(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"headings", "== Title ==\ntext", "## Title\ntext\n"},
		{"bold and italic", "'''b''' and ''i'' and '''''bi'''''", "**b** and *i* and ***bi***\n"},
		{"wiki links and templates stay", "[[A|b]]s {{T|x=[[y]]}} [[Category:C]]", "[[A|b]]s {{T|x=[[y]]}} [[Category:C]]\n"},
		{"external links", "[http://x.example/a label] [http://y.example] http://z.example/", "[label](http://x.example/a) <http://y.example> http://z.example/\n"},
		{"lists", "* a\n** b\n# c\n#* d", "- a\n  - b\n1. c\n   - d\n"},
		{"definitions", "; term : def", "term\n: def\n"},
		{"indents are quotes", ": a\n:: b", "> a\n> > b\n"},
		{"rule", "----", "---\n"},
		{"references become footnotes", "a<ref name=n>note</ref> b<ref name=n/>\n== Notes ==\n<references/>", "a[^1] b[^1]\n## Notes\n\n[^1]: note\n"},
		{"references at the end", "a<ref>x ''y''</ref>", "a[^1]\n\n[^1]: x *y*\n"},
		{"pre and code", "<pre>\n**x**\n</pre>\n<syntaxhighlight lang=\"go\">\nf()\n</syntaxhighlight>", "```\n**x**\n```\n\n```go\nf()\n```\n"},
		{"indented code", " a\n b", "```\na\nb\n```\n"},
		{"markdown characters are escaped", "2 * 3 = `x` a_b", "2 \\* 3 = \\`x\\` a\\_b\n"},
		{"nowiki and comments stay", "<nowiki>''x''</nowiki> <!-- c -->", "<nowiki>''x''</nowiki> <!-- c -->\n"},
		{"simple table", "{|\n! A !! B\n|-\n| 1 || [[x|y]]\n|}", "| A | B |\n| --- | --- |\n| 1 | [[x\\|y]] |\n"},
		{"magic words go", "__NOTOC__\n__TOC__x", "x\n"},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.ToMarkdown(context.Background(), tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ToMarkdown(%q) =\n%q\nwant\n%q", tt.src, got, tt.want)
			}
		})
	}
}

func TestToMarkdownComplexTable(t *testing.T) {
	r := New()
	got, err := r.ToMarkdown(context.Background(), "x\n{| class=\"wikitable\"\n|+ Cap\n| colspan=2 | a\n|}\ny")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `<table class="wikitable">`) || !strings.Contains(got, `colspan="2"`) {
		t.Errorf("ToMarkdown = %q, want an HTML table", got)
	}
	res, err := render.New().Render(context.Background(), got, nil)
	if err != nil || !strings.Contains(res.HTML, "<table") {
		t.Errorf("the Markdown renders as %q, %v", res.HTML, err)
	}
}

// scanTemplate is the scan braceIndex stands for: from the "{{" at i,
// braces counted in pairs until the count is back to zero.
func scanTemplate(s string, i int) int {
	depth, j := 0, i
	for j+1 < len(s) {
		switch {
		case s[j] == '{' && s[j+1] == '{':
			depth++
			j += 2
		case s[j] == '}' && s[j+1] == '}':
			depth--
			j += 2
			if depth == 0 {
				return j
			}
		default:
			j++
		}
	}
	return -1
}

// One pass over the text finds where every template ends, as a scan from
// each "{{" does: for every text of up to 10 braces and x, for runs of
// braces up to 24 long around an x, and for random texts up to 200 bytes.
func TestBraceIndexMatchesScan(t *testing.T) {
	check := func(s string) {
		t.Helper()
		x := newBraceIndex(s, func() {})
		for i := 0; i+1 < len(s); i++ {
			if s[i] != '{' || s[i+1] != '{' {
				continue
			}
			if got, want := x.end(i), scanTemplate(s, i); got != want {
				t.Fatalf("%q at %d: end %d, scan %d", s, i, got, want)
			}
		}
	}
	var every func(prefix string)
	every = func(prefix string) {
		check(prefix)
		if len(prefix) < 10 {
			for _, c := range []string{"{", "}", "x"} {
				every(prefix + c)
			}
		}
	}
	every("")
	for a := range 25 {
		for b := range 25 {
			for c := range 9 {
				check(strings.Repeat("{", a) + "x" + strings.Repeat("}", b) + strings.Repeat("{", c) + "x" + strings.Repeat("}", 24-b))
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		b := make([]byte, 1+rng.IntN(200))
		for k := range b {
			b[k] = "{{{}}}x"[rng.IntN(7)]
		}
		check(string(b))
	}
}

// A conversion costs time linear in the page however it is written, and
// stops once its context is done: the shapes that once read the rest of
// the page at each step (unclosed templates and external links) convert
// whole, and those the renderer takes longer over stop within about a
// render's finishing after the deadline.
func TestToMarkdownBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("pages at the size limit")
	}
	r := New()
	slow := 10 * time.Second
	if race.Enabled {
		slow = 60 * time.Second
	}
	var named, reused strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&named, "<ref name=n%d/>", i)
		fmt.Fprintf(&reused, "<ref name=n%d>text %d</ref>", i, i)
	}
	wide := "{|\n!" + strings.Repeat("a!!", 20000) + "a\n" + strings.Repeat("|-\n|x\n", 20000) + "|}\n"
	for name, src := range map[string]string{
		"unclosed templates":      fillPage("{{"),
		"unclosed template runs":  fillPage("{{{x"),
		"unclosed external links": fillPage("[http://a.example b "),
		// Notes named, then their names used again with text: each use
		// finds its note at once.
		"notes named again": named.String() + reused.String(),
		// A wide header over short rows is not padded to a table of
		// width × rows.
		"a wide header over short rows": wide,
	} {
		start := time.Now()
		out, err := r.ToMarkdown(context.Background(), src)
		if err != nil || len(out) < len(src)/4 || len(out) > 8*len(src)+4096 {
			t.Errorf("%s: %d bytes of %d, %v", name, len(out), len(src), err)
		}
		if d := time.Since(start); d > slow {
			t.Errorf("%s: took %v", name, d)
		}
	}
	for name, src := range map[string]string{
		"nested unclosed tables": fillPage("{|\n|a||b\n|-\n"),
		"unclosed links":         fillPage("[[a|"),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		start := time.Now()
		_, err := r.ToMarkdown(ctx, src)
		cancel()
		if d := time.Since(start); d > time.Second+slow {
			t.Errorf("%s: took %v with a deadline of 1s (%v)", name, d, err)
		}
	}
}
