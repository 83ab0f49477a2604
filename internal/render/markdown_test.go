package render

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alecthomas/chroma/v2"
	"golang.org/x/net/html"

	"github.com/wikid/wikid/internal/race"
	"github.com/wikid/wikid/internal/wiki"
)

// htmlCase is a source and what its HTML must and must not contain.
type htmlCase struct {
	name, src string
	want      []string
	not       []string
}

func runHTMLCases(t *testing.T, tests []htmlCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRender(t, tt.src, exists("Foo").fn)
			checkSafeHTML(t, res.HTML)
			checkUniqueIDs(t, res.HTML)
			for _, w := range tt.want {
				if !strings.Contains(res.HTML, w) {
					t.Errorf("HTML lacks %s\ngot:\n%s", w, res.HTML)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(res.HTML, w) {
					t.Errorf("HTML contains %s\ngot:\n%s", w, res.HTML)
				}
			}
		})
	}
}

// checkUniqueIDs fails when two elements of s share an id.
func checkUniqueIDs(tb testing.TB, s string) {
	tb.Helper()
	seen := map[string]bool{}
	for _, id := range ids(s) {
		if seen[id] {
			tb.Errorf("id %q is used twice in:\n%s", id, s)
		}
		seen[id] = true
	}
}

// ids returns the id attributes of s in document order.
func ids(s string) []string {
	var out []string
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken {
			continue
		}
		for _, a := range z.Token().Attr {
			if a.Key == "id" {
				out = append(out, a.Val)
			}
		}
	}
}

func TestFootnotes(t *testing.T) {
	runHTMLCases(t, []htmlCase{
		{"a reference links to its note and the note links back", "A[^1].\n\n[^1]: The note.",
			[]string{
				`<p>A<sup id="_fnref-1"><a href="#_fn-1" role="doc-noteref">1</a></sup>.</p>`,
				"<div class=\"footnotes\" role=\"doc-endnotes\">\n<hr>\n<ol>\n<li id=\"_fn-1\">\n" +
					"<p>The note.\u00a0<a href=\"#_fnref-1\" role=\"doc-backlink\">\u21a9\ufe0e</a></p>\n</li>\n</ol>\n</div>\n",
			}, nil},
		{"notes are numbered in the order of their first reference, wherever they are defined",
			"[^b]: Bee.\n\nX[^a] Y[^b] Z[^a]\n\n[^a]: Ay.",
			[]string{`X<sup id="_fnref-1"><a href="#_fn-1"`, `Y<sup id="_fnref-2"><a href="#_fn-2"`, `Z<sup id="_fnref-1-2"><a href="#_fn-1"`,
				"<li id=\"_fn-1\">\n<p>Ay.", "<li id=\"_fn-2\">\n<p>Bee."}, nil},
		{"each reference gets its own back-link", "A[^n] B[^n] C[^n]\n\n[^n]: N.",
			[]string{`<a href="#_fnref-1" role="doc-backlink">`, `<a href="#_fnref-1-2" role="doc-backlink">` + "\u21a9\ufe0e<sup>2</sup></a>",
				`<a href="#_fnref-1-3" role="doc-backlink">` + "\u21a9\ufe0e<sup>3</sup></a>"}, nil},
		{"labels match as link labels do, ignoring case and spacing", "A[^Note  One]\n\n[^note one]: x",
			[]string{`<sup id="_fnref-1">`, "<p>x\u00a0"}, nil},
		{"a reference to no note stays text", "A[^nope] [^] [^ ]",
			[]string{"<p>A[^nope] [^] [^ ]</p>"}, []string{"<sup", "footnotes"}},
		{"a note nothing refers to is left out", "A\n\n[^x]: unused",
			[]string{"<p>A</p>"}, []string{"footnotes", "unused"}},
		{"the first of two definitions wins", "A[^x]\n\n[^x]: first\n\n[^x]: second",
			[]string{"first"}, []string{"second"}},
		{"a note may hold several blocks", "A[^1]\n\n[^1]: One.\n\n    Two, indented.\n\n    - three\n",
			[]string{"<li id=\"_fn-1\">\n<p>One.</p>\n<p>Two, indented.</p>\n<ul>\n<li>three</li>\n</ul>\n<p><a href=\"#_fnref-1\" role=\"doc-backlink\">\u21a9\ufe0e</a></p>\n</li>"}, nil},
		{"a note defined in a list or quote is still listed at the end", "> A[^q]\n>\n> [^q]: In a quote.\n\nAfter.",
			[]string{"</blockquote>\n<p>After.</p>\n<div class=\"footnotes\""}, nil},
		{"an exclamation mark before a reference is text", "Wow![^1]\n\n[^1]: n",
			[]string{`Wow!<sup id="_fnref-1">`}, []string{"<img"}},
		{"note ids stay clear of heading ids", "# _fn-1\n# fn-1\n# _fnref-1\n\nA[^1]\n\n[^1]: n",
			[]string{`<h1 id="fn-1">`, `<h1 id="fn-1__2">`, `<h1 id="fnref-1">`, `<li id="_fn-1">`, `<sup id="_fnref-1">`}, nil},
		{"note text is escaped and sanitized", "A[^1]\n\n[^1]: <script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))",
			nil, []string{"<script", "onerror", `href="javascript:`}},
		{"notes hold wiki links", "A[^1]\n\n[^1]: See [[Foo]] and [[Nowhere]].",
			[]string{`<a href="/wiki/Foo" title="Foo">Foo</a>`, `class="new"`}, nil},
	})
	res := mustRender(t, "A[^1]\n\n[^1]: See [[Foo]] [[Category:Notes]].", nil)
	if want := []string{"Foo"}; fmt.Sprint(res.Links.Links) != fmt.Sprint(want) || len(res.Links.Categories) != 1 {
		t.Errorf("links in notes: %+v", res.Links)
	}
}

func TestHeadingIDs(t *testing.T) {
	t.Run("an id depends only on its heading's text and its rank among headings with that text", func(t *testing.T) {
		// The id of the k-th heading with a given text, over every page.
		idOf := map[string]string{}
		texts := []string{"A", "A", "A 2", "A_2", "A__2", "A  2", "a", "B", "", "section", "Section", "_", "A 2_2", "fn-1"}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 300 {
			var src strings.Builder
			var hs []string
			for range 1 + rng.IntN(12) {
				h := texts[rng.IntN(len(texts))]
				hs = append(hs, h)
				fmt.Fprintf(&src, "## %s\n", h)
			}
			res := mustRender(t, src.String(), nil)
			checkUniqueIDs(t, res.HTML)
			rank := map[string]int{}
			for i, h := range res.TOC {
				base := anchorID(hs[i])
				rank[base]++
				key := fmt.Sprintf("%s#%d", base, rank[base])
				if prev, ok := idOf[key]; ok && prev != h.ID {
					t.Fatalf("heading %q (%s) has id %q here and %q elsewhere:\n%s", hs[i], key, h.ID, prev, src.String())
				}
				idOf[key] = h.ID
			}
		}
	})
	t.Run("editing one heading leaves the others' ids alone", func(t *testing.T) {
		before := mustRender(t, "# Intro\n## Usage\n## Notes\n## Usage\n### Details\n", nil).TOC
		after := mustRender(t, "# Introduction\n## Usage_2\n## Usage\n## Notes\n## Usage\n### Details\n", nil).TOC
		want := map[string]string{"Usage": "Usage", "Notes": "Notes", "Details": "Details"}
		for _, h := range append(before, after...) {
			if w, ok := want[h.Text]; ok && h.ID != w && h.ID != w+"__2" {
				t.Errorf("%q has id %q", h.Text, h.ID)
			}
		}
		if before[3].ID != "Usage__2" || after[4].ID != "Usage__2" || after[1].ID != "Usage_2" {
			t.Errorf("ids before %+v, after %+v", before, after)
		}
	})
	t.Run("ids are at most maxIDBytes and end in no underscore", func(t *testing.T) {
		for _, n := range []int{maxIDBytes - 2, maxIDBytes - 1, maxIDBytes, maxIDBytes + 1} {
			id := anchorID(strings.Repeat("x", n) + " y z")
			if len(id) > maxIDBytes || strings.HasSuffix(id, "_") || strings.Contains(id, "__") {
				t.Errorf("anchorID of %d x's = %q", n, id)
			}
		}
	})
}

func TestFenceLanguage(t *testing.T) {
	for _, tt := range []struct{ info, want string }{
		{"go", "go"},
		{"rust,ignore", "rust"},
		{"python {.class #id}", "python"},
		{"python{.class}", "python"},
		{"{.go}", "go"},
		{"{#main .go .numberLines}", "go"},
		{"{ .haskell }", "haskell"},
		{"{r echo=FALSE}", "r"},
		{"{r, echo=FALSE}", "r"},
		{"{python}", "python"},
		{"{=html}", ""},
		{"{#id}", ""},
		{"{}", ""},
		{"{", ""},
		{` go title="x"`, "go"},
		{"c++ linenos", "c++"},
		{"", ""},
		{"   ", ""},
	} {
		if got := string(fenceLanguage([]byte(tt.info))); got != tt.want {
			t.Errorf("fenceLanguage(%q) = %q, want %q", tt.info, got, tt.want)
		}
	}
}

// codeText returns the text of the first <code> element of s, tags removed
// and references resolved.
func codeText(s string) string {
	start := strings.Index(s, "<code")
	end := strings.Index(s, "</code>")
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s[start:end]))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}

func TestHighlighting(t *testing.T) {
	code := "package main\n\n// main says hello.\nfunc main() {\n\tfmt.Println(\"hi <there> & 'you'\", 42, true)\n}\n"
	res := mustRender(t, "```go\n"+code+"```\n", nil)
	for _, w := range []string{`<pre><code class="language-go"><span class="k">package</span> main`,
		`<span class="c">// main says hello.`, `<span class="nf">Println</span>`, `<span class="s">&#34;hi &lt;there&gt; &amp; &#39;you&#39;&#34;</span>`,
		`<span class="m">42</span>`, `<span class="kc">true</span>`} {
		if !strings.Contains(res.HTML, w) {
			t.Errorf("HTML lacks %s\ngot:\n%s", w, res.HTML)
		}
	}
	if got := codeText(res.HTML); got != code {
		t.Errorf("the highlighted text differs from the code:\n%q\n%q", got, code)
	}
	z := html.NewTokenizer(strings.NewReader(res.HTML))
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		if tok := z.Token(); tok.Data == "span" && tt == html.StartTagToken {
			if c := tok.Attr[0].Val; !slices.Contains(tokenClasses, c) {
				t.Errorf("class %q is not one of tokenClasses", c)
			}
		}
	}

	runHTMLCases(t, []htmlCase{
		{"languages are found by alias and file extension, in any case", "```golang\nvar x\n```\n```PY\nimport os\n```\n```yml\na: 1\n```\n```sh\necho hi\n```",
			[]string{`class="language-golang"><span class="k">var</span> x`, `class="language-PY"><span class="k">import</span> os`,
				`class="language-yml"><span class="nt">a</span>`, `class="language-sh"><span class="nb">echo</span> hi`}, nil},
		{"an info string with attributes keeps its language", "```rust,ignore\nfn main() {}\n```\n```{.python}\npass\n```\n``` go title=\"x\"\nvar x\n```",
			[]string{`<code class="language-rust"><span class="k">fn</span> <span class="nf">main</span>`, "<code class=\"language-python\"><span class=\"k\">pass</span>\n</code>",
				"<code class=\"language-go\"><span class=\"k\">var</span> x\n</code>"}, nil},
		{"an unknown language is plain code with its class", "```nosuchlanguage\nif x { y }\n```",
			[]string{"<pre><code class=\"language-nosuchlanguage\">if x { y }\n</code></pre>"}, []string{"<span"}},
		{"plain text has no colours", "```text\nfunc main() {}\n```",
			[]string{"<pre><code class=\"language-text\">func main() {}\n</code></pre>"}, nil},
		{"a block without a language is plain", "```\nfunc main() {}\n```",
			[]string{"<pre><code>func main() {}\n</code></pre>"}, nil},
		{"line ends are written as LF and an unclosed block keeps its last line", "```go\nvar a\r\nvar b\rvar c",
			[]string{"<span class=\"k\">var</span> a\n<span class=\"k\">var</span> b\n<span class=\"k\">var</span> c\n</code></pre>"}, []string{"\r"}},
		{"code is escaped and stays inert", "```html\n<script>alert(1)</script><img src=x onerror=alert(1)>\n```",
			[]string{"&lt;", `<span class="nt">script</span>`}, []string{"<script", "<img"}},
		{"a diff shows insertions and deletions", "```diff\n-old\n+new\n```",
			[]string{`<span class="gd">-old`, `<span class="gi">+new`}, nil},
		{"languages whose lexers read the whole block first are plain", "```phtml\n<?php ?><script>x\n```\n```erb\n<% x %>\n```\n```markdown\n# x\n```",
			[]string{"<code class=\"language-phtml\">&lt;?php", "<code class=\"language-erb\">&lt;%", "<code class=\"language-markdown\"># x"}, []string{"<span"}},
		{"Lisp's lexers rename tokens as they go, and highlight", "```common-lisp\n(defun f ())\n```",
			[]string{`(<span class="nb">defun</span> <span class="nv">f</span>`}, nil},
	})

	// A lexer that tokenizes the whole text before its first token cannot
	// be stopped at the deadline: none is used, whatever the name.
	for name, l := range lexerIndex() {
		if !lazyLexer(l) {
			t.Errorf("%q highlights with %T", name, l)
		}
	}
	for _, name := range []string{"phtml", "erb", "svelte", "go-html-template", "yaml+jinja", "markdown", "md", "http"} {
		if l := lexerFor(name); l != nil {
			t.Errorf("%q highlights with %s (%T)", name, l.Config().Name, l)
		}
	}
	// Nor through a lexer that hands a block to the language the text
	// names (Gemtext's fences): PHTML is not found there, Go is.
	gem := lexerFor("gemtext")
	if gem == nil {
		t.Fatal("no Gemtext lexer")
	}
	it, err := gem.Tokenise(nil, "```phtml\n<?php echo 1; ?>\n```\n```go\nfunc f() {}\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	var php, gofunc bool
	for tok := it(); tok != chroma.EOF; tok = it() {
		php = php || tok.Type == chroma.CommentPreproc
		gofunc = gofunc || tok.Type == chroma.KeywordDeclaration && tok.Value == "func"
	}
	if php || !gofunc {
		t.Errorf("Gemtext's blocks: PHTML lexed %v, Go lexed %v", php, gofunc)
	}

	t.Run("a block over the size bound is plain, quickly", func(t *testing.T) {
		big := strings.Repeat("func f() { x := map[string]int{\"a\": 1} } // c\n", (2<<20)/48)
		start := time.Now()
		res := mustRender(t, "```go\n"+big+"```\n", nil)
		limit := 5 * time.Second // generous: the bound is about work, not speed
		if race.Enabled {
			limit = 30 * time.Second
		}
		if took := time.Since(start); took > limit {
			t.Errorf("a 2 MiB code block took %v", took)
		}
		if strings.Contains(res.HTML, "<span") || !strings.Contains(res.HTML, `<code class="language-go">func f()`) {
			t.Errorf("a 2 MiB block should be plain code")
		}
	})
}

// oneToken is a lexer that makes its whole input one keyword, and counts
// the bytes it was given.
type oneToken struct {
	chroma.Lexer
	bytes atomic.Int64
	delay time.Duration // before each token; when set, it makes empty tokens forever
}

func (l *oneToken) Tokenise(_ *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	l.bytes.Add(int64(len(text)))
	done := false
	return func() chroma.Token {
		if l.delay > 0 {
			time.Sleep(l.delay)
			return chroma.Token{Type: chroma.Keyword}
		}
		if done {
			return chroma.EOF
		}
		done = true
		return chroma.Token{Type: chroma.Keyword, Value: text}
	}, nil
}

func TestHighlightBudgets(t *testing.T) {
	block := []byte(strings.Repeat("x", maxHighlightPage/2-1024) + "\n")
	t.Run("a page highlights at most maxHighlightPage bytes", func(t *testing.T) {
		l := &oneToken{}
		var h highlighter
		var got []bool
		for range 3 {
			_, ok := h.run(l, block)
			got = append(got, ok)
		}
		if !slices.Equal(got, []bool{true, true, false}) || l.bytes.Load() != 2*int64(len(block)) {
			t.Errorf("highlighted %v, lexed %d bytes", got, l.bytes.Load())
		}
	})
	t.Run("a slow lexer is given up at the deadline and stops", func(t *testing.T) {
		l := &oneToken{delay: 20 * time.Millisecond}
		h := highlighter{budget: 100 * time.Millisecond}
		start := time.Now()
		if _, ok := h.run(l, []byte("x\n")); ok {
			t.Fatal("a lexer that never ends was highlighted")
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("gave up after %v", took)
		}
		if _, ok := h.run(&oneToken{}, []byte("x\n")); ok {
			t.Error("the page highlighted again after its deadline")
		}
		for deadline := time.Now().Add(5 * time.Second); abandoned.Load() != 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d tokenizers still running", abandoned.Load())
			}
		}
	})
	t.Run("no highlighting starts while given-up tokenizers still run", func(t *testing.T) {
		for range maxAbandoned {
			h := highlighter{budget: time.Millisecond}
			h.run(&oneToken{delay: 200 * time.Millisecond}, []byte("x\n"))
		}
		var h highlighter
		if _, ok := h.run(&oneToken{}, []byte("x\n")); ok {
			t.Errorf("highlighted with %d tokenizers given up", abandoned.Load())
		}
		for abandoned.Load() != 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if _, ok := h.run(&oneToken{}, []byte("x\n")); !ok {
			t.Error("highlighting did not resume")
		}
	})
}

func TestImages(t *testing.T) {
	for _, tt := range []struct {
		dest string
		want wiki.Title
	}{
		{"Diagram.png", "File:Diagram.png"},
		{"diagram.png", "File:Diagram.png"},
		{"./a/b.png", "File:A/b.png"},
		{"././a.png", "File:A.png"},
		{"my%20file_name.png?w=1#x", "File:My file name.png"},
		{"File:Diagram.png", "File:Diagram.png"},
		{"image:ü.png", "File:Ü.png"},
		{"서울.png", "File:서울.png"},
		{`a\b.png`, `File:A\b.png`},
		{"../up.png", ""},
		{"a/../../up.png", ""},
		{"a//b.png", ""},
		{"a<b.png", ""},
		{"%zz.png", ""},
		{"#frag", ""},
	} {
		got, ok := fileImageTitle([]byte(tt.dest), wiki.TitleRules{})
		if !ok || got != tt.want {
			t.Errorf("fileImageTitle(%q) = %q, %v; want %q", tt.dest, got, ok, tt.want)
		}
	}
	for _, dest := range []string{"", "/static/a.png", "https://example.org/a.png", "//x.test/a.png", "javascript:alert(1)", "file:///etc/passwd", "\\\\host\\a.png"} {
		if got, ok := fileImageTitle([]byte(dest), wiki.TitleRules{}); ok {
			t.Errorf("fileImageTitle(%q) = %q, names a file of the wiki", dest, got)
		}
	}
	runHTMLCases(t, []htmlCase{
		{"a relative image is a file of the wiki: without files, a link to upload it", "![A diagram](Diagram.png \"Title\") ![](./img/a.png)",
			[]string{`<a href="/wiki/Special:Upload?wpDestFile=Diagram.png" class="new" title="File:Diagram.png (upload it)">A diagram</a>`,
				`<a href="/wiki/Special:Upload?wpDestFile=Img%2Fa.png" class="new" title="File:Img/a.png (upload it)">File:Img/a.png</a>`}, []string{"<img"}},
		{"a path out of the wiki's files has no source", "![up](../up.png)",
			[]string{`<img alt="up">`}, []string{"src="}},
		{"images from other sites are still links", "![logo](https://example.org/logo.png)",
			[]string{`<a href="https://example.org/logo.png" class="external" rel="nofollow noopener">logo</a>`}, []string{"<img"}},
	})
}

func TestTablesKeepWikiLinks(t *testing.T) {
	runHTMLCases(t, []htmlCase{
		{"a piped wiki link stays in its cell", "| a | b |\n|---|---|\n| [[Foo|the foo]] | x |",
			[]string{"<td><a href=\"/wiki/Foo\" title=\"Foo\">the foo</a></td>\n<td>x</td>"}, nil},
		{"in a header cell too", "| [[Foo|f]] | b |\n|---|---|\n| 1 | 2 |",
			[]string{"<th><a href=\"/wiki/Foo\" title=\"Foo\">f</a></th>\n<th>b</th>"}, nil},
		{"escaped pipes still work", "| a | b |\n|---|---|\n| [[Foo\\|f]] | `x \\| y` |",
			[]string{"<td><a href=\"/wiki/Foo\" title=\"Foo\">f</a></td>\n<td><code>x | y</code></td>"}, nil},
		{"several links in a row", "| a | b |\n|---|---|\n| [[Foo|1]] [[Bar|2]] | [[Baz|3]] |",
			[]string{`<td><a href="/wiki/Foo" title="Foo">1</a> <a href="/wiki/Bar?action=edit&amp;redlink=1" class="new" title="Bar (page does not exist)">2</a></td>`,
				`>3</a></td>`}, nil},
		{"a pipe outside links still splits", "| a | b | c |\n|---|---|---|\n| [[Foo]] | [ | ] |",
			[]string{"<td>[</td>\n<td>]</td>"}, nil},
		{"an unclosed link does not swallow the row", "| a | b |\n|---|---|\n| [[Foo | x |",
			[]string{"<td>[[Foo</td>\n<td>x</td>"}, nil},
	})
}

func TestDefinitionLists(t *testing.T) {
	runHTMLCases(t, []htmlCase{
		{"a term and its definitions", "Apple\n: A fruit.\n: A company.\n\nCherry\n: Red.",
			[]string{"<dl>\n<dt>Apple</dt>\n<dd>A fruit.</dd>\n<dd>A company.</dd>\n<dt>Cherry</dt>\n<dd>Red.</dd>\n</dl>"}, nil},
		{"a loose definition holds paragraphs", "Term\n\n: First.\n\n    Second.",
			[]string{"<dt>Term</dt>\n<dd>\n<p>First.</p>\n<p>Second.</p>\n</dd>"}, nil},
		{"terms and definitions hold inline markup and links", "**Bold** [[Foo]]\n: *em* <b onclick=x>b</b>",
			[]string{"<dt><strong>Bold</strong> <a href=\"/wiki/Foo\" title=\"Foo\">Foo</a></dt>", "<dd><em>em</em> <b>b</b></dd>"}, []string{"onclick"}},
		{"a colon line without a term is a paragraph", ": alone",
			[]string{"<p>: alone</p>"}, []string{"<dl>"}},
	})
}

func TestRenderIsDeterministicWithHighlighting(t *testing.T) {
	src := "```go\nfunc main() {}\n```\n\nA[^1]\n\n[^1]: n\n"
	r := New()
	first, err := r.Render(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := r.Render(context.Background(), src, nil)
		if err != nil || again.HTML != first.HTML {
			t.Fatalf("render differs: %v\n%s\n%s", err, first.HTML, again.HTML)
		}
	}
}
