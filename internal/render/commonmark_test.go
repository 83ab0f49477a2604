package render

import (
	"bytes"
	"strings"
	"testing"
)

// The tests below pin what the conformance tests found, each on its own,
// so that they run without the spec data.

func TestHardLineBreakDropsTheSpacesBeforeIt(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"many spaces", "aaa     \nbbb     \n", "<p>aaa<br>\nbbb</p>\n"},
		{"spaces after words", "foo bar       \nbaz\n", "<p>foo bar<br>\nbaz</p>\n"},
		{"spaces and a tab", "foo \t  \nbaz\n", "<p>foo<br>\nbaz</p>\n"},
		{"a soft break", "foo bar \nbaz\n", "<p>foo bar\nbaz</p>\n"},
		{"a backslash keeps what stands before it", "foo  \\\nbaz\n", "<p>foo  <br>\nbaz</p>\n"},
		{"after emphasis", "*foo*     \nbar\n", "<p><em>foo</em><br>\nbar</p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustRender(t, tt.src, nil).HTML; got != tt.want {
				t.Errorf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestALinkedImageDoesNotNestLinks(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"a missing wiki file's image is its alt text", "[![moon](moon.jpg)](/uri)",
			`<p><a href="/uri">moon</a></p>` + "\n"},
		{"an image from another site", "[![moon](https://example.org/moon.jpg)](https://example.org/)",
			`<p><a href="https://example.org/" class="external" rel="nofollow noopener">moon</a></p>` + "\n"},
		{"a reference link", "[![moon](https://example.org/moon.jpg)][ref]\n\n[ref]: /uri\n",
			`<p><a href="/uri">moon</a></p>` + "\n"},
		{"an image without alt text", "[![](https://example.org/m.png)](/uri)",
			`<p><a href="/uri">https://example.org/m.png</a></p>` + "\n"},
		{"an image on the wiki stays an image", "[![moon](/moon.jpg)](/uri)",
			`<p><a href="/uri"><img src="/moon.jpg" alt="moon"></a></p>` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustRender(t, tt.src, nil).HTML; got != tt.want {
				t.Errorf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestAnImageFromElsewhereKeepsItsTitle(t *testing.T) {
	got := mustRender(t, `![foo *bar*](https://example.org/train.jpg "train & tracks")`, nil).HTML
	want := `<p><a href="https://example.org/train.jpg" title="train &amp; tracks" class="external" rel="nofollow noopener">foo bar</a></p>` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Tags outside the allow-list are shown as text, with what stands between
// them, as MediaWiki and GFM's tag filter show them; allowed ones stay
// elements.
func TestDisallowedTagsShowAsText(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"an unknown inline element", "x <foo>bar</foo> y",
			"<p>x &lt;foo&gt;bar&lt;/foo&gt; y</p>\n"},
		{"an unknown element with attributes", `Foo <responsive-image src="foo.jpg" />`,
			"<p>Foo &lt;responsive-image src=&#34;foo.jpg&#34; /&gt;</p>\n"},
		{"an unknown block keeps its case and its Markdown", "<Warning>\n*bar*\n</Warning>\n",
			"&lt;Warning&gt;\n*bar*\n&lt;/Warning&gt;\n"},
		{"a script is text, not dropped", "a <script>alert(1)</script> b",
			"<p>a &lt;script&gt;alert(1)&lt;/script&gt; b</p>\n"},
		{"a script block", "<script>\nalert(1)\n</script>\n",
			"&lt;script&gt;\nalert(1)\n&lt;/script&gt;\n"},
		{"a textarea's content is read as markup again", "<textarea><b>x</b></textarea>",
			"&lt;textarea&gt;<b>x</b>&lt;/textarea&gt;"},
		{"a style's content is sanitized like the rest", "<style><img src=x onerror=alert(1)></style>",
			"&lt;style&gt;&lt;/style&gt;"},
		{"MediaWiki's presentational elements stay", "a <center>c</center> <big>b</big> <tt>t</tt> <font color=red>f</font>",
			"<p>a <center>c</center> <big>b</big> <tt>t</tt> <font>f</font></p>\n"},
		{"an author's input is text", `x <input type="checkbox" checked>`,
			"<p>x &lt;input type=&#34;checkbox&#34; checked&gt;</p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRender(t, tt.src, nil)
			checkSafeHTML(t, res.HTML)
			if res.HTML != tt.want {
				t.Errorf("Render(%q)\n got %q\nwant %q", tt.src, res.HTML, tt.want)
			}
		})
	}
}

func TestCodeBlocksKeepTrailingSpaces(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"fenced", "```\na  \nb\t\n```\n", "<pre><code>a  \nb\t\n</code></pre>\n"},
		{"fenced at the end of the text", "```\na  ", "<pre><code>a  \n</code></pre>\n"},
		{"indented", "    a  \n    b  \n", "<pre><code>a  \nb  \n</code></pre>\n"},
		{"indented with a blank line", "    a  \n      \n    b", "<pre><code>a  \n  \nb\n</code></pre>\n"},
		{"in a list", "- x\n\n  ```\n  a  \n  ```\n", "<ul>\n<li>\n<p>x</p>\n<pre><code>a  \n</code></pre>\n</li>\n</ul>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustRender(t, tt.src, nil).HTML; got != tt.want {
				t.Errorf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestStrikethroughRunsMustMatch(t *testing.T) {
	tests := []struct{ src, want string }{
		{"~one~ ~~two~~ ~~~three~~~", "<p><del>one</del> <del>two</del> ~~~three~~~</p>\n"},
		{"No ~mismatch~~", "<p>No ~mismatch~~</p>\n"},
		{"No ~~mismatch~", "<p>No ~~mismatch~</p>\n"},
		{"This ~is ~ legit~ isn't ~ legit.", "<p>This <del>is ~ legit</del> isn&#39;t ~ legit.</p>\n"},
	}
	for _, tt := range tests {
		if got := mustRender(t, tt.src, nil).HTML; got != tt.want {
			t.Errorf("Render(%q)\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

func TestBareURLsMayHaveLettersOutsideASCII(t *testing.T) {
	got := mustRender(t, "https://ko.wikipedia.org/wiki/서울 and www.example.org/á.", nil).HTML
	for _, want := range []string{
		`<a href="https://ko.wikipedia.org/wiki/%EC%84%9C%EC%9A%B8" class="external" rel="nofollow noopener">https://ko.wikipedia.org/wiki/서울</a> and`,
		`<a href="http://www.example.org/%C3%A1" class="external" rel="nofollow noopener">www.example.org/á</a>.`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %s\ngot %s", want, got)
		}
	}
}

// FuzzEscapeTags checks that escapeTags' shortcut for a single allowed tag
// writes what the tokenizer would.
func FuzzEscapeTags(f *testing.F) {
	for _, s := range []string{"<kbd>", "</SUB >", "<a href=\"x\" title='>'>", "<b\x00>", "<img/src=x>y", "<br/>", "<a", "<x>", "<bdi\n>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !onlyAllowedTag(b) {
			return
		}
		var fast, slow bytes.Buffer
		escapeTags(bufWriter{&fast}, b)
		tokenizeTags(bufWriter{&slow}, b)
		if fast.String() != slow.String() {
			t.Fatalf("escapeTags(%q) = %q, the tokenizer gives %q", b, fast.String(), slow.String())
		}
	})
}
