package wikitext

import (
	"context"
	"fmt"
	"testing"
)

func TestSmoke(t *testing.T) {
	src := `Intro with '''bold''' and ''italic'' and [[Foo|a link]]s and [[Bar]].<ref>A note [[Baz]]</ref>

== First ==
* one
** two
# three
; term : def
 pre line
{| class="wikitable"
|+ Cap
! H1 !! H2
|-
| a || b
|}
[http://example.com label] [http://example.com] http://bare.org/x.
<nowiki>[[no]]</nowiki> <span style="x" onclick="y">s</span> <script>x</script>
[[Category:Cat|key]]
== Second ==
<syntaxhighlight lang="go">
func f() {}
</syntaxhighlight>
`
	r := New()
	res, err := r.RenderWith(context.Background(), src, nil, renderOpts("P"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(res.HTML)
	fmt.Printf("%+v\n%+v\n", res.Links, res.TOC)
	fmt.Println(r.PlainText(src))
}
