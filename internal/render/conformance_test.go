package render

import (
	"context"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/wikid/wikid/internal/wiki"
)

// TestCommonMarkSpec renders every example of the CommonMark spec and
// compares the result with the spec's HTML after normalizeHTML. An example
// that differs fails the test unless commonmarkDifferences lists it; a
// listed example that passes fails it too, so that the list stays true.
func TestCommonMarkSpec(t *testing.T) {
	examples := parseSpec(specFile(t, commonmarkSpec, commonmarkSpecFile))
	if len(examples) != 652 {
		t.Fatalf("%s has %d examples, want 652", commonmarkSpecFile, len(examples))
	}
	// At least 99% of the examples pass.
	if len(commonmarkDifferences)*100 > len(examples) {
		t.Errorf("%d differences listed: more than 1%% of the examples", len(commonmarkDifferences))
	}
	runSpec(t, commonmarkSpec.pkg, examples, commonmarkDifferences)
}

// TestGFMSpec renders the examples of the GFM spec's extensions (tables,
// task lists, strikethrough, extended autolinks, disallowed raw HTML). Its
// other examples are the CommonMark spec of 2019, superseded by the one
// TestCommonMarkSpec runs.
func TestGFMSpec(t *testing.T) {
	var examples []specExample
	for _, ex := range parseSpec(specFile(t, gfmSpec, gfmSpecFile)) {
		if len(ex.Extension) > 0 {
			examples = append(examples, ex)
		}
	}
	if len(examples) != 24 {
		t.Fatalf("%s has %d extension examples, want 24", gfmSpecFile, len(examples))
	}
	runSpec(t, gfmSpec.pkg+" spec.txt", examples, gfmDifferences)
}

// TestGFMExtensions renders cmark-gfm's own extension tests.
func TestGFMExtensions(t *testing.T) {
	examples := parseSpec(specFile(t, gfmSpec, gfmExtensionsFile))
	runSpec(t, gfmSpec.pkg+" extensions.txt", examples, gfmExtensionDifferences)
}

// specDifference says why an example's output stays different.
type specDifference string

const (
	wikiLinkSyntax specDifference = "[[…]] is a wiki link, Wikid's link syntax (MediaWiki's), where " +
		"CommonMark reads brackets around a Markdown link or text. It stays: it is how pages link to pages."
	gfmAutolink specDifference = "Wikid renders GFM, whose extended autolinks link a bare URL or e-mail " +
		"address that CommonMark alone leaves as text. It stays: GFM is the dialect the wiki promises."
)

// The examples whose output differs from the reference even after
// normalizeHTML, by example number in their file. Everything else passes.
var (
	commonmarkDifferences = map[int]specDifference{
		475: "An author's raw <img> keeps its src only when it is a path on this wiki, as the " +
			"policy has it for img; the sanitizer drops src=\"foo\" and leaves the tag. " +
			"normalizeHTML turns every reference <img> from elsewhere into a link, as the renderer " +
			"does for Markdown images, and cannot tell that this one was raw HTML. It stays: " +
			"rewriting an author's HTML into other elements is more than a sanitizer should do.",
		559: wikiLinkSyntax,
		590: wikiLinkSyntax,
		608: gfmAutolink,
		611: gfmAutolink,
		612: gfmAutolink,
	}
	gfmDifferences          = map[int]specDifference{}
	gfmExtensionDifferences = map[int]specDifference{
		18: "cmark-gfm links more than the GFM spec describes: after a quote (\"http://…\"), and " +
			"a domain without a dot (http://inlines); goldmark follows the spec (a link starts " +
			"after white space or *, _, ~, ( and its domain has a dot). The rest of the example, " +
			"letters outside ASCII in domains and paths included, passes. It stays: the spec is " +
			"the contract, cmark-gfm's extras are not.",
		22: "Footnotes are not in the GFM spec, and cmark-gfm's footnote markup (<section " +
			"class=\"footnotes\">, fn-N/fnref-N ids) is its own. Wikid numbers them the same way but " +
			"writes <div class=\"footnotes\" role=\"doc-endnotes\"> with _fn-N/_fnref-N ids (a prefix " +
			"no heading id can have) and its own back-link marks: a difference of markup only.",
	}
)

func runSpec(t *testing.T, name string, examples []specExample, known map[int]specDifference) {
	r := New()
	type count struct{ pass, total int }
	var sections []string
	counts := map[string]*count{}
	pass := 0
	for _, ex := range examples {
		c := counts[ex.Section]
		if c == nil {
			c = &count{}
			counts[ex.Section] = c
			sections = append(sections, ex.Section)
		}
		c.total++
		res, err := r.Render(context.Background(), ex.Markdown, nil)
		if err != nil {
			t.Fatalf("example %d: %v", ex.Number, err)
		}
		if !IsSafe(res.HTML) {
			t.Errorf("example %d: output is not a sanitizer fixpoint:\n%q\n%q", ex.Number, res.HTML, Sanitize(res.HTML))
		}
		checkSafeHTML(t, res.HTML)
		got, want := normalizeHTML(res.HTML), normalizeHTML(ex.HTML)
		// cmark-gfm's tests write <IGNORE> where only not crashing counts.
		ok := got == want || ex.HTML == "<IGNORE>\n"
		if ok {
			c.pass++
			pass++
		}
		_, listed := known[ex.Number]
		switch {
		case !ok && !listed:
			t.Errorf("example %d (%s, line %d) differs:\nmarkdown: %q\nwant:     %q\ngot:      %q\nnormalized want: %q\nnormalized got:  %q",
				ex.Number, ex.Section, ex.Line, ex.Markdown, ex.HTML, res.HTML, want, got)
		case ok && listed:
			t.Errorf("example %d (%s) passes now: remove it from the list of differences", ex.Number, ex.Section)
		}
	}
	for _, s := range sections {
		t.Logf("%-45s %3d/%3d", s, counts[s].pass, counts[s].total)
	}
	t.Logf("%s: %d/%d examples pass (%.1f%%), %d listed differences", name, pass, len(examples), 100*float64(pass)/float64(len(examples)), len(known))
}

// blockTags are the elements around which white space does not matter, as
// in the spec's test/normalize.py.
var blockTags = map[string]bool{
	"article": true, "header": true, "aside": true, "hgroup": true, "blockquote": true,
	"hr": true, "iframe": true, "body": true, "li": true, "map": true, "button": true,
	"object": true, "canvas": true, "ol": true, "caption": true, "output": true,
	"col": true, "p": true, "colgroup": true, "pre": true, "dd": true, "progress": true,
	"div": true, "section": true, "dl": true, "table": true, "td": true, "dt": true,
	"tbody": true, "embed": true, "textarea": true, "fieldset": true, "tfoot": true,
	"figcaption": true, "th": true, "figure": true, "thead": true, "footer": true,
	"tr": true, "form": true, "ul": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "video": true, "script": true, "style": true,
}

// normalizeHTML is the one place where the conformance tests forgive the
// ways Wikid's HTML differs from the reference on purpose. Both the
// reference HTML and Wikid's go through it, so a step that only ever
// changes one side still compares like with like.
//
//  1. Wikid's rules for authors' HTML and images are applied (applyPolicy):
//     tags of elements outside the allow-list are shown as text, as on
//     MediaWiki and with GFM's tag filter, so that a reader sees what was
//     written instead of losing it or running it; images not stored on the
//     wiki become links to them, so that a reader's browser never contacts
//     another site (inside a link, their alt text alone: links do not
//     nest); an image at a relative path names a file of the wiki
//     (fileImageTitle), which these renders have none of: a link to upload
//     it, labelled with its alt text or its title.
//  2. The sanitizer's policy is applied (Sanitize): the allowed attributes
//     of each element, URLs with the schemes http, https and mailto only,
//     no comments, processing instructions or declarations (a reader never
//     sees them), and nofollow on links to other sites. On Wikid's output
//     this changes nothing: it is a fixpoint.
//  3. What Wikid adds is removed: a heading's id and its self-link (<a
//     class="anchor">#</a>), which make sections linkable as on MediaWiki;
//     the class (external, new) and rel (nofollow noopener) of links, which
//     mark links that leave the wiki and keep it from lending them its rank
//     or its window; task-list-item on list items with a check box, for
//     styling; an <a> left without attributes once the policy dropped
//     its URL, which is plain text; and the <span class> elements of
//     syntax highlighting inside <pre><code>, which colour the code
//     without changing its text.
//  4. The rest is the spec's own normalization (test/normalize.py):
//     attributes sorted, references resolved and text escaped one way,
//     runs of white space as one space outside <pre>, none next to block
//     tags, self-closing tags as start tags.
func normalizeHTML(s string) string {
	s = Sanitize(applyPolicy(s))
	var (
		out      strings.Builder
		inPre    int
		last     string // "start", "end", "text" or ""
		lastTag  string
		aKept    []bool // for each open <a>: was its start tag kept
		skipping int    // inside a heading's self-link: skip tokens
		spans    int    // open highlighting spans inside <pre>: dropped
	)
	rstrip := func() {
		t := strings.TrimRight(out.String(), " \t\n\r\f")
		out.Reset()
		out.WriteString(t)
	}
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		if skipping > 0 {
			switch {
			case tt == html.StartTagToken && tok.Data == "a":
				skipping++
			case tt == html.EndTagToken && tok.Data == "a":
				skipping--
			}
			continue
		}
		switch tt {
		case html.TextToken:
			data := tok.Data
			afterTag := last == "start" || last == "end"
			if afterTag && lastTag == "br" {
				data = strings.TrimLeft(data, "\n")
			}
			if inPre == 0 {
				data = collapseSpace(data)
				if afterTag && blockTags[lastTag] {
					if last == "start" {
						data = strings.TrimLeftFunc(data, isHTMLSpace)
					} else {
						data = strings.TrimFunc(data, isHTMLSpace)
					}
				}
			}
			out.WriteString(html.EscapeString(data))
			last = "text"
		case html.StartTagToken, html.SelfClosingTagToken:
			if tok.Data == "span" && inPre > 0 {
				spans++
				continue
			}
			attrs := slices.Clone(tok.Attr)
			switch {
			case tok.Data == "a" && hasAttr(attrs, "class", "anchor"):
				// A heading's self-link: skip it and the space before it.
				skipping = 1
				rstrip()
				continue
			case tok.Data == "a":
				attrs = dropAttrs(attrs, "class", "rel")
				keep := len(attrs) > 0
				if tt == html.StartTagToken {
					aKept = append(aKept, keep)
				}
				if !keep {
					continue
				}
			case len(tok.Data) == 2 && tok.Data[0] == 'h' && '1' <= tok.Data[1] && tok.Data[1] <= '6':
				attrs = dropAttrs(attrs, "id")
			case tok.Data == "li":
				attrs = slices.DeleteFunc(attrs, func(a html.Attribute) bool {
					return a.Key == "class" && a.Val == "task-list-item"
				})
			}
			if tok.Data == "pre" {
				inPre++
			}
			if blockTags[tok.Data] {
				rstrip()
			}
			sort.Slice(attrs, func(i, j int) bool { return attrs[i].Key < attrs[j].Key })
			out.WriteString("<" + tok.Data)
			for _, a := range attrs {
				out.WriteString(" " + a.Key + `="` + html.EscapeString(a.Val) + `"`)
			}
			out.WriteString(">")
			lastTag = tok.Data
			last = "start"
			if tt == html.SelfClosingTagToken {
				last = "end"
			}
		case html.EndTagToken:
			if tok.Data == "span" && spans > 0 {
				spans--
				continue
			}
			if tok.Data == "a" && len(aKept) > 0 {
				keep := aKept[len(aKept)-1]
				aKept = aKept[:len(aKept)-1]
				if !keep {
					continue
				}
			}
			if tok.Data == "pre" {
				inPre = max(inPre-1, 0)
			} else if blockTags[tok.Data] {
				rstrip()
			}
			out.WriteString("</" + tok.Data + ">")
			lastTag = tok.Data
			last = "end"
		}
	}
	return strings.TrimSpace(out.String())
}

// applyPolicy writes s with the tags of elements an author may not use as
// text and images from elsewhere as links (step 1 of normalizeHTML). It
// is written apart from the renderer's code on purpose, from the same
// allow-list, so that each checks the other.
func applyPolicy(s string) string {
	var out strings.Builder
	links := 0 // open <a> elements
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			out.Write(z.Raw())
			return out.String()
		}
		raw := string(z.Raw())
		if tt != html.StartTagToken && tt != html.EndTagToken && tt != html.SelfClosingTagToken {
			out.WriteString(raw)
			continue
		}
		tok := z.Token()
		switch {
		case !authorElements[tok.Data] && tok.Data != "input":
			out.WriteString(html.EscapeString(raw))
			if tt == html.StartTagToken {
				z.NextIsNotRawText()
			}
			continue
		case tok.Data == "a" && tt == html.StartTagToken:
			links++
		case tok.Data == "a" && tt == html.EndTagToken:
			links = max(links-1, 0)
		case tok.Data == "img":
			var src, alt, title string
			hasTitle := false
			for _, a := range tok.Attr {
				switch a.Key {
				case "src":
					src = a.Val
				case "alt":
					alt = a.Val
				case "title":
					title, hasTitle = a.Val, true
				}
			}
			if src == "" || imageSrc.MatchString(src) {
				break
			}
			if file, ok := fileImageTitle([]byte(src), wiki.TitleRules{}); ok {
				if file == "" { // a path that names no file: no source
					out.WriteString(`<img alt="` + html.EscapeString(alt) + `"`)
					if hasTitle {
						out.WriteString(` title="` + html.EscapeString(title) + `"`)
					}
					out.WriteString(">")
					continue
				}
				// No file exists in these renders: a link to upload it,
				// or inside a link its text alone.
				label := alt
				if label == "" {
					label = string(file)
				}
				if links > 0 {
					out.WriteString(html.EscapeString(label))
					continue
				}
				out.WriteString(`<a href="/wiki/Special:Upload?wpDestFile=` + html.EscapeString(url.QueryEscape(wiki.FileName(file))) +
					`" title="` + html.EscapeString(string(file)) + ` (upload it)">` + html.EscapeString(label) + "</a>")
				continue
			}
			label := alt
			if label == "" {
				label = src
			}
			if links > 0 {
				out.WriteString(html.EscapeString(label))
				continue
			}
			out.WriteString(`<a href="` + html.EscapeString(src) + `"`)
			if hasTitle {
				out.WriteString(` title="` + html.EscapeString(title) + `"`)
			}
			out.WriteString(">" + html.EscapeString(label) + "</a>")
			continue
		}
		out.WriteString(raw)
	}
}

// collapseSpace replaces each run of HTML white space with one space.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if isHTMLSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
}

func hasAttr(attrs []html.Attribute, key, val string) bool {
	return slices.Contains(attrs, html.Attribute{Key: key, Val: val})
}

func dropAttrs(attrs []html.Attribute, keys ...string) []html.Attribute {
	return slices.DeleteFunc(attrs, func(a html.Attribute) bool { return slices.Contains(keys, a.Key) })
}
