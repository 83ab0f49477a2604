package render

import (
	"testing"

	"github.com/wikid/wikid/internal/wiki"
)

func TestSummary(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", "plain"},
		{"**bold** _em_ `code` <b>x</b> & 'q'", "**bold** _em_ `code` &lt;b&gt;x&lt;/b&gt; &amp; &#39;q&#39;"},
		{"see [[Foo]]", `see <a href="/wiki/Foo" title="Foo">Foo</a>`},
		{"[[foo bar|the <bar>]]!", `<a href="/wiki/Foo_bar" title="Foo bar">the &lt;bar&gt;</a>!`},
		{"[[Foo#Some section]]", `<a href="/wiki/Foo#Some_section" title="Foo">Foo#Some section</a>`},
		{"[[Category:Cats]] [[:Category:Dogs]]", `<a href="/wiki/Category:Cats" title="Category:Cats">Category:Cats</a> <a href="/wiki/Category:Dogs" title="Category:Dogs">Category:Dogs</a>`},
		{"[[#Local]] [[a<b]] [[]] [[x", "#Local [[a&lt;b]] [[]] [[x"},
		{"[[Foo|<img src=x onerror=alert(1)>]]", `<a href="/wiki/Foo" title="Foo">&lt;img src=x onerror=alert(1)&gt;</a>`},
		{"[[javascript:alert(1)]]", `<a href="/wiki/Javascript:alert%281%29" title="Javascript:alert(1)">javascript:alert(1)</a>`},
		{"[[[[Foo]] [[[Foo]]]", "[[[[Foo]] [[[Foo]]]"},
		{"/* Watering */ new section", `<span class="autocomment">→Watering:</span> new section`},
		{"/* <b>H</b> */", `<span class="autocomment">→&lt;b&gt;H&lt;/b&gt;</span>`},
		{"fix /* Care */ see [[Foo]]", `fix <span class="autocomment">→Care:</span> see <a href="/wiki/Foo" title="Foo">Foo</a>`},
		{"/* */ empty", "/* */ empty"},
		{"/* unclosed", "/* unclosed"},
	} {
		got := Summary(tt.in, wiki.TitleRules{})
		if got != tt.want {
			t.Errorf("Summary(%q) =\n %s\nwant\n %s", tt.in, got, tt.want)
		}
		if !IsSafe(got) {
			t.Errorf("Summary(%q) is not a sanitizer fixpoint: %s", tt.in, got)
		}
	}
}

func TestSummaryCaseSensitive(t *testing.T) {
	got := Summary("[[apple]] [[user:bob]]", wiki.NewTitleRules(false))
	want := `<a href="/wiki/apple" title="apple">apple</a> <a href="/wiki/User:Bob" title="User:Bob">user:bob</a>`
	if got != want {
		t.Errorf("Summary with capital_links false =\n %s\nwant\n %s", got, want)
	}
}
