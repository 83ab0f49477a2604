package render

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/render/pathological"
	"github.com/wikid/wikid/internal/wiki"
)

var update = flag.Bool("update", false, "rewrite testdata/*.html from the current output")

// TestGolden renders testdata/*.md with pages "Main Page", "Foo" and "서울"
// existing, and testFiles' files, and compares with testdata/*.html.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	ex := exists("Main Page", "Foo", "서울")
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			res := mustRenderFiles(t, string(src), ex.fn, testFiles())
			got := goldenText(res)
			out := strings.TrimSuffix(in, ".md") + ".html"
			if *update {
				if err := os.WriteFile(out, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the output; run go test ./internal/render -update and review the diff.\ngot:\n%s", out, got)
			}
		})
	}
}

// goldenText is the HTML followed by the other results as HTML comments.
func goldenText(res Result) string {
	var b strings.Builder
	b.WriteString(res.HTML)
	if toc := TOCHTML(res.TOC); toc != "" {
		b.WriteString("<!-- toc -->\n" + toc + "\n")
	}
	fmt.Fprintf(&b, "<!-- links: %q categories: %q redirect: %q macros: %q -->\n",
		res.Links.Links, res.Links.Categories, res.Links.Redirect, res.Macros)
	if len(res.Links.Files) > 0 {
		fmt.Fprintf(&b, "<!-- files: %q -->\n", res.Links.Files)
	}
	return b.String()
}

// TestHostileInputs checks that inputs built to be slow stay linear-ish:
// each must render within a generous bound and with bounded output.
func TestHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("slow inputs")
	}
	tests := []struct{ name, src string }{
		{"10,000 nested lists on one line", strings.Repeat("- ", 10000) + "x"},
		{"10,000 nested lists then many lines", strings.Repeat("- ", 10000) + "x\n" + strings.Repeat("y\n", 200000)},
		{"10,000 nested ordered lists", strings.Repeat("1. ", 10000) + "x\n" + strings.Repeat("y\n", 100000)},
		{"10,000 nested block quotes then many lines", strings.Repeat(">", 10000) + "x\n" + strings.Repeat("y\n", 200000)},
		{"1,000 nested indented lists", nestedIndentedList(1000)},
		{"a 1 MB single line", strings.Repeat("word ", 200000)},
		{"a 1 MB single line of links and markup", strings.Repeat("[[Foo]] *a* `b` www.x.org ", 40000)},
		{"100k unclosed [[", strings.Repeat("[[", 100000)},
		{"100k unclosed [[ with text", strings.Repeat("[[a ", 100000)},
		{"100k unclosed [[ ending in ]]", strings.Repeat("[[", 100000) + "x]]"},
		{"100k links", strings.Repeat("[[a]]", 100000)},
		{"100k unclosed {{", strings.Repeat("{{", 100000) + "}}"},
		{"100k unclosed [", strings.Repeat("[", 100000) + "x"},
		{"100k emphasis openers", strings.Repeat("*a", 100000)},
		{"100k nested emphasis", strings.Repeat("*", 50000) + "a" + strings.Repeat("*", 50000)},
		{"100k open HTML tags", strings.Repeat("<div>", 100000)},
		{"100k headings with the same text", strings.Repeat("# A\n", 100000)},
		{"a wide table with many rows", "|" + strings.Repeat("a|", 5000) + "\n|" + strings.Repeat("-|", 5000) + "\n" + strings.Repeat("|x\n", 50000)},
		{"a 1 MB heading", "# " + strings.Repeat("x", 1<<20)},
		{"100k references to one footnote", strings.Repeat("[^a]", 100000) + "\n\n[^a]: x"},
		{"30k footnotes, each referred to", footnoteFlood(30000)},
		{"100k references to no footnote", strings.Repeat("[^a]", 100000) + "\n\n[^b]: x"},
		{"10,000 nested footnote definitions then many lines", strings.Repeat("[^a]: ", 10000) + "x\n" + strings.Repeat("y\n", 100000)},
		{"10,000 nested definitions then many lines", "a\n" + strings.Repeat(": ", 10000) + "x\n" + strings.Repeat("y\n", 100000)},
		{"50k definitions of one term", "a\n" + strings.Repeat(": x\n", 50000)},
		{"a 2 MiB code block", "```go\n" + strings.Repeat("func f() { x := map[string]int{\"a\": 1} } // c\n", (2<<20)/48) + "```\n"},
		{"4,000 small code blocks", strings.Repeat("```go\nfunc f() int { return 1 } // one\n```\n", 4000)},
		{"a table of piped wiki links", "| a | b |\n|---|---|\n" + strings.Repeat("| [[a|b]] | [[c\\|d]] |\n", 50000)},
		{"100k [[ in a table", "| a | b |\n|---|---|\n|" + strings.Repeat("[[", 100000) + "|x|\n"},
		{"100k [[a| in a table", "| a | b |\n|---|---|\n|" + strings.Repeat("[[a|", 100000) + "]]|x|\n"},
		{"100k unclosed [[File:", strings.Repeat("[[File:a|", 100000)},
		{"100k unclosed [[File: with closed links", strings.Repeat("[[File:a|[[b]] ", 100000)},
		{"100k embeds", strings.Repeat("[[File:a.png|thumb|x]] ", 100000)},
		{"50k embeds in a table", "| a | b |\n|---|---|\n" + strings.Repeat("| [[File:a|thumb|[[b|c]] d]] | [[File:a|[[e]]|x |\n", 50000)},
		{"100k Markdown images of files", strings.Repeat("![a](a.png)", 100000)},
	}
	r := New()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if race.Enabled && i%3 != 0 {
				// A third of the inputs under the race detector, which makes
				// each take seconds: .ci/run renders them all without it.
				t.Skip("race detector: a third of the inputs")
			}
			start := time.Now()
			res, err := r.RenderWith(context.Background(), tt.src, func(_ context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
				return nil, nil
			}, Options{Files: everyFile})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes in, %d bytes out, %v", len(tt.src), len(res.HTML), took)
			limit := 10 * time.Second
			if race.Enabled {
				limit *= 8
			}
			if took > limit {
				t.Errorf("took %v, want under %v", took, limit)
			}
			if max := maxOutput(len(tt.src)); len(res.HTML) > max {
				t.Errorf("output is %d bytes, want at most %d", len(res.HTML), max)
			}
		})
	}
}

// maxOutput bounds the HTML for n bytes of source. The most expansive
// constructs are wiki links ("[[a]]", 5 bytes, ~90 bytes of HTML) and macros.
func maxOutput(n int) int { return 64*n + 4096 }

// footnoteFlood refers to n footnotes, then defines them in reverse order.
func footnoteFlood(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[^%d] ", i)
	}
	b.WriteString("\n\n")
	for i := n - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "[^%d]: note %d\n", i, i)
	}
	return b.String()
}

func nestedIndentedList(depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat("  ", i))
		b.WriteString("- x\n")
	}
	return b.String()
}

// A fuzz input (at most 64 KB) must render within these.
const (
	fuzzCPULimit   = time.Second
	fuzzAllocLimit = 100 << 20
)

func FuzzRender(f *testing.F) {
	seeds := []string{
		"", "# Title\n\n[[Foo]] [[Bar|baz]] [[#x]] [[Category:C]] {{RecentChanges}}",
		"#REDIRECT [[Foo]]\nrest", "[[Foo|<img src=x onerror=alert(1)>]]",
		"<script>alert(1)</script>", "[x](javascript:alert(1))", "- [ ] a\n- [x] b",
		"| a | b |\n|---|---|\n| [[A\\|b]] | c |", "{{AllPages|prefix=\"><}}", "> - > - [[a]]",
		"<a href=\"javascript:x\" onclick=x>y</a><input type=text>", "## 한국어\n[[서울#역사|서울]]",
		"<style>\nx\n\n*a*", "a <textarea> b\n\n<img src=x onerror=alert(1)>", "<!-- x\n\n[[a]]",
		"<div title=\"x\n\n<b>y</b>", "<svg><script>alert(1)</script></svg>", "![x](/a.png 't') ![y](https://x/y.png)",
		"```c&amp;\nx\r\ny\n```", "<a\nhref=\"java&#x09;script:x\">y</a> *z*", "# a'b\"c&amp;\x00\n[x](/a 'b')",
		"A[^1] [^1] ![^n]\n\n[^1]: *n* [[a]]\n[^n]: ```go\n    x\n    ```", "```go\nx := \"<a>\" // '&'\r\n```", "```{.python}\nx\n```",
		"t\n: d\n: e\n\n: > f", "| [[a|b]] | c |\n|-|-|\n| [[d|e]] | `[[f|g]]` |", "![x](./a.png) ![y](File:b.png) ![z](../c.png) ![w](a%00.png)",
		"# _fn-1\n# A\n# A\n[[#A__2]]", "```html\n<script>x</script>\x00\n```",
		"[[File:a.png|thumb|left|200x100px|upright=0.5|alt=x\"y|link=https://e.x/?a&b|Cap [[B|c]] <i>]]\n[[File:b.svg|frame]]",
		"x [[File:c.gif|thumb|[[d]]]] [[Media:e.pdf|f]] [[:File:g.png]] ![h](File:i.png \"t\") [![j](k.png)](/l)",
		"- [[File:a.png|thumb|a]]\n| [[File:b.png|thumb|x [[c|d]] e]] | f |\n|-|-|\n[[File:a.png|link=javascript:x]] [[File:a\"b&'.png|border|x5px]]",
	}
	files, _ := filepath.Glob("testdata/*.md")
	for _, in := range files {
		if b, err := os.ReadFile(in); err == nil {
			seeds = append(seeds, string(b))
		}
	}
	// The hostile shapes, small: the fuzzer grows and mixes them.
	for _, s := range pathological.Shapes() {
		seeds = append(seeds, s.Gen(256), s.Gen(4096))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	r := New(WithTimeout(0))
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	cpuLimit := fuzzCPULimit
	if race.Enabled {
		cpuLimit *= 8
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<16 {
			return
		}
		metrics.Read(allocs)
		alloc0 := allocs[0].Value.Uint64()
		now, done := cpuClock()
		start := now()
		res, err := r.RenderWith(context.Background(), src, func(_ context.Context, ts []wiki.Title) (map[wiki.Title]bool, error) {
			m := map[wiki.Title]bool{}
			for i, t := range ts {
				m[t] = i%2 == 0
			}
			return m, nil
		}, Options{Files: someFiles})
		took := now() - start
		done()
		metrics.Read(allocs)
		if err != nil {
			t.Fatal(err)
		}
		// Nothing of at most 64 KB may take a worker long or much memory
		// (the render tests hold every known shape to this at 2 MB).
		if took > cpuLimit {
			t.Fatalf("render took %v of CPU for %d bytes, want at most %v", took, len(src), cpuLimit)
		}
		if alloc := allocs[0].Value.Uint64() - alloc0; alloc > fuzzAllocLimit && !race.Enabled {
			t.Fatalf("render allocated %d MB for %d bytes, want at most %d MB", alloc>>20, len(src), fuzzAllocLimit>>20)
		}
		// Only raw HTML passes through the sanitizer, node by node; the
		// rest is generated in its canonical form. The whole page must come
		// out of the sanitizer unchanged, and free of anything dangerous.
		if !IsSafe(res.HTML) {
			t.Fatalf("output is not a sanitizer fixpoint:\n%q\n%q", res.HTML, Sanitize(res.HTML))
		}
		checkSafeHTML(t, res.HTML)
		if toc := TOCHTML(res.TOC); !IsSafe(toc) {
			t.Fatalf("TOC is not safe: %q", toc)
		}
		if len(res.HTML) > maxOutput(len(src)) {
			t.Fatalf("output %d bytes for %d bytes of source", len(res.HTML), len(src))
		}
		ls := r.Links(src)
		if fmt.Sprint(ls) != fmt.Sprint(res.Links) {
			t.Fatalf("Links and Render disagree: %v vs %v", ls, res.Links)
		}
	})
}

// someFiles is an Options.Files for fuzzing: of the files asked, one in
// four is missing, the others are of each kind in turn.
func someFiles(_ context.Context, ts []wiki.Title) (map[wiki.Title]wiki.FileVersion, error) {
	kinds := []struct {
		mime string
		w, h int
	}{{"image/png", 640, 480}, {"image/svg+xml", 100, 0}, {"application/pdf", 0, 0}, {"image/jpeg", 9000, 9000}, {"image/gif", 7, 3000}}
	m := map[wiki.Title]wiki.FileVersion{}
	for i, t := range ts {
		if i%4 == 3 {
			continue
		}
		k := kinds[i%len(kinds)]
		m[t] = wiki.FileVersion{Title: t, SHA256: strings.Repeat("0f", 32), MIME: k.mime, Width: k.w, Height: k.h}
	}
	return m, nil
}

// benchDocument builds an article with headings, lists, a table, code and
// nine wiki links per section: 12 sections make about 30 KB and 100 links.
func benchDocument(sections int) string {
	var b strings.Builder
	b.WriteString("Intro paragraph with **bold**, *emphasis*, `code` and a link to [[Main Page]].\n\n")
	link := 0
	for s := range sections {
		fmt.Fprintf(&b, "## Section %d\n\n", s)
		for p := range 4 {
			fmt.Fprintf(&b, "Paragraph %d of section %d: Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ", p, s)
			fmt.Fprintf(&b, "See [[Page %d]] and [[Page %d#History|its history]]. ", link, link+1)
			link++
			b.WriteString("Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat, https://example.org/x. " +
				"Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. " +
				"Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum.\n\n")
		}
		b.WriteString("### Details\n\n- item one with ~~strike~~\n- item two with <kbd>Ctrl</kbd>\n  - nested [x](https://example.com)\n- [ ] task\n\n")
		b.WriteString("| Name | Value |\n|:-----|------:|\n| alpha | 1 |\n| beta | 2 |\n| gamma | 3 |\n\n")
		b.WriteString("```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n> A quotation with [[Quoted page]].\n\n")
	}
	b.WriteString("[[Category:Benchmarks]]\n")
	return b.String()
}

func BenchmarkRender(b *testing.B) {
	src := benchDocument(12)
	r := New()
	ex := exists("Main Page", "Page 1", "Page 2", "Page 3")
	res, err := r.Render(context.Background(), src, ex.fn)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(src)), "src-bytes")
	b.ReportMetric(float64(len(res.Links.Links)), "links")
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(context.Background(), src, ex.fn); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLinks(b *testing.B) {
	src := benchDocument(12)
	r := New()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		r.Links(src)
	}
}

// BenchmarkSanitize measures the sanitizer's share of BenchmarkRender.
func BenchmarkSanitize(b *testing.B) {
	res, err := New().Render(context.Background(), benchDocument(12), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(res.HTML)))
	for b.Loop() {
		Sanitize(res.HTML)
	}
}

// BenchmarkRenderArticle renders bench/article.md, the article the
// benchmark harness serves (a cache miss should render it in ≤ 2 ms).
func BenchmarkRenderArticle(b *testing.B) {
	src, err := os.ReadFile("../../bench/article.md")
	if err != nil {
		b.Skip(err)
	}
	r := New()
	ex := exists("Standard gauge", "Rail gauge", "Light railway")
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(context.Background(), string(src), ex.fn); err != nil {
			b.Fatal(err)
		}
	}
}
