// Package pathological generates inputs built to make a Markdown renderer
// slow or hungry: the shapes of cmark's test/pathological_tests.py and
// commonmark.js's, and wiki-specific ones (wiki links, macros, headings for
// the table of contents). The renderer's tests, its fuzz seeds and the
// benchmark harness (go run ./bench -pathological) share them.
package pathological

import (
	"strconv"
	"strings"
)

// PageLimit is the default page size limit (config's max_page_bytes),
// the size the shapes are measured at.
const PageLimit = 2 << 20

// Shape is one kind of hostile input.
type Shape struct {
	Name string // short, for tables and test names
	What string // what it is, for people
	// Gen returns a document of at most size bytes (and close to it).
	Gen func(size int) string
}

// Shapes returns every shape, cmark's first, then the wiki's.
func Shapes() []Shape { return append(append([]Shape(nil), markdownShapes...), wikiShapes...) }

// Find returns the shape named name.
func Find(name string) (Shape, bool) {
	for _, s := range Shapes() {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// repeat is unit repeated to fill size bytes.
func repeat(unit string, size int) string {
	return strings.Repeat(unit, max(size/len(unit), 0))
}

// nested is open repeated n times, then middle, then close n times, n as
// large as size allows.
func nested(open, middle, close string, size int) string {
	n := max((size-len(middle))/(len(open)+len(close)), 0)
	return strings.Repeat(open, n) + middle + strings.Repeat(close, n)
}

// lines writes line(i) for i = 0, 1, … while the document stays within size.
func lines(size int, line func(i int) string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		l := line(i)
		if b.Len()+len(l) > size {
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// prefixed is head followed by tail(size-len(head)).
func prefixed(head string, size int, tail func(int) string) string {
	if size < len(head) {
		return ""
	}
	return head + tail(size-len(head))
}

var markdownShapes = []Shape{
	{"nested-emphasis", "*a **a *a … b … a* a** a*", func(n int) string { return nested("*a **a ", "b", " a** a*", n) }},
	{"emphasis-closers", "a_ a_ a_ … (closers without openers)", func(n int) string { return repeat("a_ ", n) }},
	{"emphasis-openers", "_a _a _a … (openers without closers)", func(n int) string { return repeat("_a ", n) }},
	{"emphasis-mismatched", "*a_ *a_ … (openers and closers that never match)", func(n int) string { return repeat("*a_ ", n) }},
	{"emphasis-mod3", "a**b c* c* c* … (the rule of 3)", func(n int) string { return prefixed("a**b", n, func(n int) string { return repeat("c* ", n) }) }},
	{"emphasis-star-runs", "*** *** *** … one line", func(n int) string { return repeat("a*** ", n) }},
	{"emphasis-in-link-openers", "[ a_[ a_[ a_ … (link openers and emphasis closers)", func(n int) string { return repeat("[ a_", n) }},
	{"link-closers", "a]a]a] … (link closers without openers)", func(n int) string { return repeat("a]", n) }},
	{"link-openers", "[a[a[a … (link openers without closers)", func(n int) string { return repeat("[a", n) }},
	{"nested-brackets", "[[[[ … a … ]]]]", func(n int) string { return nested("[", "a", "]", n) }},
	{"nested-brackets-link", "[[[ … ](u) … ]]] with a destination", func(n int) string { return nested("[", "a](u)", "]", n) }},
	{"brackets-paren", "[ (](  [ (](  … (cmark's \"[ (](\" pattern)", func(n int) string { return repeat("[ (](", n) }},
	{"unclosed-links-angle", "[a](<b[a](<b … (unclosed angle destinations)", func(n int) string { return repeat("[a](<b", n) }},
	{"unclosed-links", "[a](b[a](b … (unclosed destinations)", func(n int) string { return repeat("[a](b", n) }},
	{"unclosed-link-titles", "[a](b \"c[a](b \"c …", func(n int) string { return repeat(`[a](b "c`, n) }},
	{"link-in-link-text", "[a [b](c) [b](c) … ](d)", func(n int) string {
		return prefixed("[a ", n-4, func(n int) string { return repeat("[b](c) ", n) }) + "](d)"
	}},
	{"image-openers", "![a![a![a …", func(n int) string { return repeat("![a", n) }},
	{"nested-images", "![![![ … ](u) … ](u)](u)", func(n int) string { return nested("![", "a", "](u)", n) }},
	{"nested-block-quotes", "> > > > … a", func(n int) string { return nested("> ", "a", "", n) }},
	{"nested-block-quotes-lines", "> > > … a, then many lines of text", func(n int) string {
		return nested(">", "a\n", "", min(n/2, 20000)) + repeat("b\n", n-min(n/2, 20000)-2)
	}},
	{"deep-lists", "1000 lists, each indented one step deeper", func(n int) string {
		return lines(n, func(i int) string { return strings.Repeat("  ", i%1000) + "* a\n" })
	}},
	{"deep-list-markers", "- - - - … a (every marker opens a list)", func(n int) string { return nested("- ", "a", "", n) }},
	{"deep-lists-blank-lines", "- - - … a, then blank lines", func(n int) string {
		return nested("- ", "a\n", "", min(n/4, 20000)) + repeat("\n", n-min(n/4, 20000)*2-2)
	}},
	{"list-items", "- a\\n- a\\n … (one long list)", func(n int) string { return repeat("- a\n", n) }},
	{"backtick-runs", "e`e``e```e```` … (code span openers of every length)", func(n int) string {
		return lines(n, func(i int) string { return "e" + strings.Repeat("`", i%5000+1) })
	}},
	{"backtick-runs-lines", "e`\ne``\ne```\n … code span openers of every length, one a line", func(n int) string {
		return lines(n, func(i int) string { return "e" + strings.Repeat("`", i%5000+1) + "\n" })
	}},
	{"backticks", "`a`a`a … unmatched backtick runs", func(n int) string { return repeat("``a`", n) }},
	{"code-fences", "``` lines opening and closing fences", func(n int) string { return repeat("```\na\n", n) }},
	{"link-reference-definitions", "[a1]: u … one paragraph of definitions", func(n int) string {
		return lines(n, func(i int) string { return "[a" + strconv.Itoa(i) + "]: u\n" })
	}},
	{"link-reference-definitions-used", "definitions, then references to them", func(n int) string {
		defs := lines(n/2, func(i int) string { return "[a" + strconv.Itoa(i) + "]: /u" + strconv.Itoa(i) + "\n" })
		refs := lines(n-len(defs)-1, func(i int) string { return "[a" + strconv.Itoa(i) + "] " })
		return defs + "\n" + refs
	}},
	{"link-reference-titles", "[a]: u\\n( … definitions whose title never closes", func(n int) string {
		return lines(n, func(i int) string { return "[a" + strconv.Itoa(i) + "]: u\n(\n" })
	}},
	{"link-reference-quotes", "[a]: u\\n\" … definitions whose title never closes", func(n int) string {
		return lines(n, func(i int) string { return "[a" + strconv.Itoa(i) + "]:\nu\n'a\n" })
	}},
	{"reference-labels", "[a][a][a] … with no definitions", func(n int) string { return repeat("[a][a]", n) }},
	{"reference-label-openers", "[a][[a][ … unclosed reference labels", func(n int) string { return repeat("[a][", n) }},
	{"html-comments", "</<!--<!--<!-- … (unclosed comments)", func(n int) string { return "</" + repeat("<!--", n-2) }},
	{"html-processing", "<?<?<? … (unclosed processing instructions)", func(n int) string { return repeat("a<?", n) }},
	{"html-declarations", "<!A<!A … (unclosed declarations)", func(n int) string { return repeat("a<!A ", n) }},
	{"html-cdata", "<![CDATA[<![CDATA[ … (unclosed CDATA)", func(n int) string { return repeat("a<![CDATA[", n) }},
	{"html-openers", "<a<a<a … and <> pairs", func(n int) string { return repeat("<a <>", n) }},
	{"html-attributes", "<a x=\"<a x=\" … (unclosed attribute values)", func(n int) string { return repeat(`<a x="`, n) }},
	{"html-tags", "<div><span><b> … nested inline and block tags", func(n int) string { return repeat("<span><b><i>", n) }},
	{"html-blocks", "<div>\\na\\n\\n … many HTML blocks", func(n int) string { return repeat("<div>\n*a*\n\n", n) }},
	{"entities", "&amp;&#35;&#x41;&copy; …", func(n int) string { return repeat("&amp;&#35;&#x41;&copy;&bogus;", n) }},
	{"entity-openers", "&&&&#&#x … (entity openers)", func(n int) string { return repeat("&#&#x&a", n) }},
	{"backslashes", "\\\\\\* … escapes", func(n int) string { return repeat(`\*\[\\`, n) }},
	{"nul-bytes", "abc\\0de\\0 …", func(n int) string { return repeat("abc\x00de\x00", n) }},
	{"autolinks", "<http://a> www.a.b x@y.z …", func(n int) string { return repeat("<http://a.b/c> www.a.bc x@y.zz ", n) }},
	{"autolink-openers", "<http:<http: … (unclosed autolinks)", func(n int) string { return repeat("<http:", n) }},
	{"linkify-words", "www.a…. one word", func(n int) string { return "www." + repeat("a.", n-4) }},
	{"emails", "a@a@a@ … one word of @", func(n int) string { return repeat("a@", n) }},
	{"strikethrough", "~~a ~a ~~~ …", func(n int) string { return repeat("~~a ~a ~~~ ", n) }},
	{"headings", "# a\\n## a\\n … many headings", func(n int) string {
		return lines(n, func(i int) string { return strings.Repeat("#", i%6+1) + " a\n" })
	}},
	{"setext-headings", "a\\n=\\n … many setext headings", func(n int) string { return repeat("a\n=\n", n) }},
	{"thematic-breaks", "***\\n---\\n …", func(n int) string { return repeat("***\n---\n", n) }},
	{"tables-wide", "a table with many columns and rows of one cell", func(n int) string {
		cols := min(n/16, 5000)
		head := "|" + strings.Repeat("a|", cols) + "\n|" + strings.Repeat("-|", cols) + "\n"
		return prefixed(head, n, func(n int) string { return repeat("|x\n", n) })
	}},
	{"tables-long", "a table with many rows", func(n int) string {
		return prefixed("|a|b|c|\n|-|-|-|\n", n, func(n int) string { return repeat("|x|y|z|\n", n) })
	}},
	{"tables-pipes", "| | | | … one long row", func(n int) string {
		return prefixed("|a|\n|-|\n", n, func(n int) string { return repeat("| ", n) })
	}},
	{"task-lists", "- [ ] a\\n- [x] b …", func(n int) string { return repeat("- [ ] a\n- [x] b\n", n) }},
	{"hard-breaks", "a  \\n … many hard line breaks", func(n int) string { return repeat("a  \n", n) }},
	{"tabs", "\\t- \\t> \\t … tabs in containers", func(n int) string { return nested("\t- \t> ", "a", "", n) }},
	{"indented-code", "    a\\n … one long code block", func(n int) string { return repeat("    a\n", n) }},
	{"long-line", "one 2 MB line of words", func(n int) string { return repeat("word ", n) }},
}

var wikiShapes = []Shape{
	{"wiki-links", "[[Page 1]] [[Page 2]] … distinct targets", func(n int) string {
		return lines(n, func(i int) string { return "[[Page " + strconv.Itoa(i) + "]] " })
	}},
	{"wiki-links-same", "[[a]][[a]][[a]] … one target", func(n int) string { return repeat("[[a]]", n) }},
	{"wiki-links-piped", "[[A 1|b]] [[A 2|b]] … piped links", func(n int) string {
		return lines(n, func(i int) string { return "[[A " + strconv.Itoa(i) + "|b]] " })
	}},
	{"wiki-links-sections", "[[#s1]] [[A#s]] … fragments", func(n int) string {
		return lines(n, func(i int) string { return "[[#s" + strconv.Itoa(i) + "]] [[A#s" + strconv.Itoa(i) + "]] " })
	}},
	{"wiki-links-categories", "[[Category:C1]] … many categories", func(n int) string {
		return lines(n, func(i int) string { return "[[Category:C" + strconv.Itoa(i) + "]]\n" })
	}},
	{"wiki-link-openers", "[[[[[[ … (unclosed wiki links)", func(n int) string { return repeat("[[", n) }},
	{"wiki-link-openers-text", "[[a [[a [[a … then ]]", func(n int) string { return repeat("[[a ", n-2) + "]]" }},
	{"wiki-links-nested", "[[a [[b [[c … ]] … ]]", func(n int) string { return nested("[[a ", "b", "]]", n) }},
	{"wiki-links-in-links", "[x [[a]] [[b]] … ](u)", func(n int) string {
		return prefixed("[x ", n-4, func(n int) string { return repeat("[[a]] ", n) }) + "](u)"
	}},
	{"wiki-links-in-emphasis", "*[[a]] _[[b]] … nested emphasis around links", func(n int) string { return nested("*[[a]] _", "b", "_ a*", n) }},
	{"wiki-links-invalid", "[[a<b>]] [[a|b|c]] … invalid targets", func(n int) string { return repeat("[[a<b>]] [[{x}]] ", n) }},
	{"wiki-links-long", "[[aaaa…]] targets near the length limit", func(n int) string {
		return repeat("[["+strings.Repeat("a", 250)+"]] ", n)
	}},
	{"macros", "{{RecentChanges}} {{PageCount}} {{AllPages|prefix=a}} …", func(n int) string {
		return repeat("{{RecentChanges}} {{PageCount}} {{AllPages|prefix=a}} ", n)
	}},
	{"macro-blocks", "{{AllPages|prefix=aN}} alone in paragraphs", func(n int) string {
		return lines(n, func(i int) string { return "{{AllPages|prefix=a" + strconv.Itoa(i) + "}}\n\n" })
	}},
	{"macro-openers", "{{{{{{ … (unclosed macros)", func(n int) string { return repeat("{{", n) }},
	{"macros-unknown", "{{Unknown|x}} … macros that are not", func(n int) string { return repeat("{{Unknown|x}}{{a", n) }},
	{"toc-headings", "## Heading 1\\n … thousands of headings for the TOC", func(n int) string {
		return lines(n, func(i int) string { return strings.Repeat("#", i%6+1) + " Heading " + strconv.Itoa(i) + "\n" })
	}},
	{"toc-same-headings", "# A\\n# A\\n … headings whose ids collide", func(n int) string { return repeat("# A\n", n) }},
	{"toc-numbered-collisions", "# A_2 … # A_N then # A many times", func(n int) string {
		head := lines(n/2, func(i int) string { return "# A_" + strconv.Itoa(i+2) + "\n" })
		return head + repeat("# A\n", n-len(head))
	}},
	{"toc-long-headings", "headings near the id length limit", func(n int) string {
		return repeat("# "+strings.Repeat("x ", 150)+"\n", n)
	}},
	{"redirect-and-links", "#REDIRECT [[A]] then links", func(n int) string {
		return prefixed("#REDIRECT [[A]]\n", n, func(n int) string { return repeat("[[a]] ", n) })
	}},
	{"raw-html-links", "<a href=\"/x\">[[a]]</a> … raw HTML around links", func(n int) string {
		return repeat(`<a href="/x" title="t">[[a]]</a> `, n)
	}},
	{"file-embeds", "[[File:P1.png|thumb|left|200px|alt=a|Caption [[Page 1]]]] … distinct files", func(n int) string {
		return lines(n, func(i int) string {
			return "[[File:P" + strconv.Itoa(i) + ".png|thumb|left|200px|alt=a|Caption [[Page " + strconv.Itoa(i) + "]]]]\n"
		})
	}},
	{"file-embeds-inline", "a [[File:a.png|thumb|x]] a [[File:a.png|50px]] … embeds in text", func(n int) string {
		return repeat("a [[File:a.png|thumb|x]] a [[File:a.png|50px]] ", n)
	}},
	{"file-embed-openers", "[[File:a|[[File:a|… (unclosed embeds)", func(n int) string { return repeat("[[File:a|", n) }},
	{"file-embed-openers-nested", "[[File:a|[[b]] [[File:a|[[b]] … (unclosed embeds, closed links)", func(n int) string {
		return repeat("[[File:a|[[b]] ", n)
	}},
	{"file-captions-unclosed", "[[File:a| then links near the caption limit, unclosed, again and again", func(n int) string {
		return repeat("[[File:a|"+strings.Repeat("[[b]] ", 600), n)
	}},
	{"file-options", "[[File:a.png|thumb|left|200px|upright=2|…]] options near the limit", func(n int) string {
		return repeat("[[File:a.png|"+strings.Repeat("thumb|left|200x100px|upright=2|link=b|alt=c|", 80)+"d]]\n", n)
	}},
	{"file-images", "![a](File:a.png) ![b](b.png) … Markdown images of files", func(n int) string {
		return repeat("![a](File:a.png) ![b](b.png) ", n)
	}},
	{"media-links", "[[Media:a.pdf|x]] [[Media:b.pdf]] … links to files' bytes", func(n int) string {
		return repeat("[[Media:a.pdf|x]] [[Media:b.pdf]] ", n)
	}},
}
