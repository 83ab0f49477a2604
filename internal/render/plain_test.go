package render

import (
	"strings"
	"testing"
)

func TestPlainText(t *testing.T) {
	src := "#REDIRECT [[Elsewhere]]\n# Title *em*\n\nSome **bold**, `code`, [a link](https://example.org) and [[Foo|a wiki link]] [[Category:Hidden]].\n\n" +
		"| h1 | h2 |\n|---|---|\n| c1 | [[Bar]] |\n\n```go\nfunc main() {}\n```\n\n<div class=\"x\">In <b>HTML</b><script>evil()</script></div>\n\n" +
		"Term\n: Definition[^1]\n\n![An image](Diagram.png) {{RecentChanges}} 서울 &amp; &#44033; https://auto.link\n\n[^1]: The note."
	got := New().PlainText(src)
	for _, w := range []string{"Title em\n", "Some bold, code, a link and a wiki link .\n", "h1\nh2\nc1\nBar\n", "func main() {}\n",
		"In  HTML", "Term\nDefinition\n", "An image  서울 & 각 https://auto.link\n", "The note.\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("plain text lacks %q:\n%s", w, got)
		}
	}
	for _, n := range []string{"REDIRECT", "Elsewhere", "**", "[[", "example.org", "Hidden", "evil", "<", "{{", "Recent", "Diagram"} {
		if strings.Contains(got, n) {
			t.Errorf("plain text contains %q:\n%s", n, got)
		}
	}
}
