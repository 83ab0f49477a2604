package wikitext

import (
	"context"
	"strings"
	"testing"

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
			got, err := r.ToMarkdown(tt.src)
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
	got, err := r.ToMarkdown("x\n{| class=\"wikitable\"\n|+ Cap\n| colspan=2 | a\n|}\ny")
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
