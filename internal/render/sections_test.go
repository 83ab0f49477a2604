package render

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func sectionTexts(t *testing.T, src string) []string {
	t.Helper()
	secs, err := New().Sections(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, s := range secs {
		if s.Index != i {
			t.Fatalf("section %d has index %d", i, s.Index)
		}
		out = append(out, src[s.Start:s.End])
	}
	return out
}

func TestSectionsNumbering(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"a page without headings is section 0", "just text\n", []string{"just text\n"}},
		{"section 0 is the text before the first heading", "intro\n\n## A\na\n## B\nb\n",
			[]string{"intro\n\n", "## A\na\n", "## B\nb\n"}},
		{"a section runs over its subsections", "# A\n## A1\nx\n### A1a\ny\n## A2\nz\n# B\n",
			[]string{"", "# A\n## A1\nx\n### A1a\ny\n## A2\nz\n", "## A1\nx\n### A1a\ny\n", "### A1a\ny\n", "## A2\nz\n", "# B\n"}},
		{"headings in code blocks are code", "## A\n```\n## not a heading\n```\n    ## indented code\n\n## B\n",
			[]string{"", "## A\n```\n## not a heading\n```\n    ## indented code\n\n", "## B\n"}},
		{"setext headings count", "intro\n\nFirst\n=====\ntext\n\nSecond\n------\nmore\n",
			[]string{"intro\n\n", "First\n=====\ntext\n\nSecond\n------\nmore\n", "Second\n------\nmore\n"}},
		{"headings in quotes and lists are not sections", "## A\n> ## quoted\n- ## listed\n\n## B\n",
			[]string{"", "## A\n> ## quoted\n- ## listed\n\n", "## B\n"}},
		{"a redirect line stays in section 0", "#REDIRECT [[Elsewhere]]\n## A\nx\n",
			[]string{"#REDIRECT [[Elsewhere]]\n", "## A\nx\n"}},
		{"empty and closed ATX headings", "##\n## B ##\n", []string{"", "##\n", "## B ##\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sectionTexts(t, c.src)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("sections of %q:\n got %q\nwant %q", c.src, got, c.want)
			}
		})
	}
}

func TestSectionsHeadingText(t *testing.T) {
	secs, err := New().Sections("## The *first* [[Page|one]]\n\nA\n===\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 3 || secs[1].Heading != "The first one" || secs[2].Heading != "A" || secs[1].Level != 2 || secs[2].Level != 1 {
		t.Errorf("sections = %+v", secs)
	}
}

var editLinkRE = regexp.MustCompile(`<span class="mw-editsection"><a href="([^"]*)"[^>]*>edit</a></span>`)

func editLinks(html string) []string {
	var out []string
	for _, m := range editLinkRE.FindAllStringSubmatch(html, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestRenderEditLinks(t *testing.T) {
	r := New()
	src := "intro\n\n## A\n```\n## code\n```\n> ## quoted\n\nB\n-\n### C ###\n"
	res, err := r.RenderWith(context.Background(), src, nil, Options{EditPage: wiki.MustTitle("Talk:Some page")})
	if err != nil {
		t.Fatal(err)
	}
	if !IsSafe(res.HTML) {
		t.Fatalf("not a sanitizer fixpoint:\n%s\nvs\n%s", res.HTML, Sanitize(res.HTML))
	}
	want := []string{
		"/wiki/Talk:Some_page?action=edit&amp;section=1",
		"/wiki/Talk:Some_page?action=edit&amp;section=2",
		"/wiki/Talk:Some_page?action=edit&amp;section=3",
	}
	if got := editLinks(res.HTML); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("edit links = %q, want %q\n%s", got, want, res.HTML)
	}
	if !strings.Contains(res.HTML, `<h2 id="A">A <a class="anchor" href="#A" aria-hidden="true">#</a> <span class="mw-editsection"><a href="/wiki/Talk:Some_page?action=edit&amp;section=1" title="Edit section: A">edit</a></span></h2>`) {
		t.Errorf("heading markup:\n%s", res.HTML)
	}
	if stripped := StripEditLinks(res.HTML); strings.Contains(stripped, "mw-editsection") || !strings.Contains(stripped, `<h2 id="A">A <a class="anchor" href="#A" aria-hidden="true">#</a></h2>`) {
		t.Errorf("StripEditLinks left:\n%s", stripped)
	}
	// Without an edit page (previews, old revisions), no links.
	plain, err := r.Render(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.HTML, "mw-editsection") {
		t.Errorf("a render without EditPage has edit links:\n%s", plain.HTML)
	}
}

// After template expansion, only the page's own headings, found by their
// marks, get edit links, numbered as the source's sections; a heading a
// template wrote gets none, and a mark a template copies twice links once.
func TestRenderEditLinksMarked(t *testing.T) {
	r := New()
	src := "## {{Title}}\ntext\n\nSetext\n======\n\n{{Box|\n## In argument\n}}\n## Last\n"
	marked, err := r.MarkSections(src, "n0nce")
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in for the expansion: {{Title}} writes a heading's text and
	// a heading of its own; {{Box}} repeats its argument.
	expanded := strings.Replace(marked, "{{Title}}", "Named\n## From a template", 1)
	arg := marked[strings.Index(marked, "{{Box|\n")+len("{{Box|\n") : strings.Index(marked, "\n}}")]
	expanded = strings.Replace(expanded, "{{Box|\n"+arg+"\n}}", arg+"\n\n"+arg+"\n\n## \uE000guess\uE0011\uE002 Forged?", 1)
	res, err := r.RenderWith(context.Background(), expanded, nil, Options{EditPage: wiki.MustTitle("P"), SectionMark: "n0nce"})
	if err != nil {
		t.Fatal(err)
	}
	got := editLinks(res.HTML)
	want := []string{"/wiki/P?action=edit&amp;section=1", "/wiki/P?action=edit&amp;section=2",
		"/wiki/P?action=edit&amp;section=3", "/wiki/P?action=edit&amp;section=4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("edit links = %q, want %q\n%s", got, want, res.HTML)
	}
	if strings.Contains(res.HTML, "n0nce") {
		t.Errorf("a mark shows in the page:\n%s", res.HTML)
	}
	for _, h := range []string{`<h2 id="Named">Named `, `<h1 id="Setext">Setext `, `<h2 id="In_argument">In argument `, `<h2 id="Last">Last `} {
		if !strings.Contains(res.HTML, h) {
			t.Errorf("missing %q in\n%s", h, res.HTML)
		}
	}
}

func TestExpandTildes(t *testing.T) {
	sig := func(n int) string { return map[int]string{3: "NAME", 4: "NAME TIME", 5: "TIME"}[n] }
	cases := []struct{ name, src, want string }{
		{"the three forms", "a ~~~ b ~~~~ c ~~~~~\n", "a NAME b NAME TIME c TIME\n"},
		{"strikethrough and single tildes stay", "~~gone~~ and ~x\n", "~~gone~~ and ~x\n"},
		{"longer runs", "x ~~~~~~ ~~~~~~~~\n", "x TIME~ TIMENAME\n"},
		{"a line starting with tildes opens a code fence", "~~~~ at the start\n", "~~~~ at the start\n"},
		{"not in code spans", "sign `~~~~` here ~~~~\n", "sign `~~~~` here NAME TIME\n"},
		{"not in fenced code, fences of tildes included", "~~~~\ncode ~~~~\n~~~~\n\nafter ~~~~\n", "~~~~\ncode ~~~~\n~~~~\n\nafter NAME TIME\n"},
		{"not in backtick fences", "```\n~~~~\n```\nok ~~~\n", "```\n~~~~\n```\nok NAME\n"},
		{"not in indented code", "para\n\n    ~~~~\n\nend ~~~~~\n", "para\n\n    ~~~~\n\nend TIME\n"},
		{"not in nowiki, pre or comments", "<nowiki>~~~~</nowiki> <!-- ~~~~ --> <pre>~~~</pre> ~~~\n", "<nowiki>~~~~</nowiki> <!-- ~~~~ --> <pre>~~~</pre> NAME\n"},
		{"escaped", `\~~~~ x` + "\n", `\~~~~ x` + "\n"},
		{"in a list item", "- reply ~~~~\n", "- reply NAME TIME\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := New().ExpandTildes(c.src, sig)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("ExpandTildes(%q) = %q, want %q", c.src, got, c.want)
			}
		})
	}
}

func TestWikiLinks(t *testing.T) {
	got := New().WikiLinks("[[User:Ann|Ann]] ([[Special:Contributions/Ann|c]]) [[Category:X]] `[[Code]]`")
	want := []wiki.Title{"User:Ann", "Special:Contributions/Ann"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("WikiLinks = %q, want %q", got, want)
	}
}
