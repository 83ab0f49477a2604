package render

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/wiki"
)

// The functions below let another markup's renderer (the wikitext one)
// write the HTML this package writes, in the same canonical form (canon.go),
// so that links, headings and code look and behave alike in both modes.

// WikiLinkOpen returns the <a> start tag of a wiki link to target, or to
// fragment of this page when target is "": blue when exists, red (to the
// edit form) when not. It is "" when the sanitizer would drop the tag.
func WikiLinkOpen(target wiki.Title, fragment string, exists bool) string {
	return wikiLinkOpen(&wikiLink{Target: target, Fragment: fragment, Exists: exists})
}

// ExternalLinkOpen returns the <a> start tag of a link out of the wiki to
// href, as a Markdown link out is written; "" when the sanitizer would
// drop it (a scheme other than http, https or mailto).
func ExternalLinkOpen(href string) string {
	var b bytes.Buffer
	if _, ok := cleanURL(href); !ok {
		return ""
	}
	writeAnchor(bufWriter{&b}, "", href, ` class="external" rel="`+externalRel+`"`, true)
	return b.String()
}

// EscapeText returns s escaped as text or an attribute value in the
// sanitizer's canonical form.
func EscapeText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	canonEscapeString(stringsWriter{&b}, s)
	return b.String()
}

// AnchorID is the id of a heading whose plain text is text, as Markdown
// headings get (before repeats are numbered, see UniqueID).
func AnchorID(text string) string { return anchorID(text) }

// UniqueID returns id the first time, then id__2, id__3…: how the ids of
// repeated headings are numbered; seen remembers them.
func UniqueID(seen map[string]int, id string) string {
	s := idSet{seen: seen}
	return s.unique(id)
}

// EditSectionHTML is the edit link a heading of section n of page gets
// (Options.EditPage), heading its plain text.
func EditSectionHTML(page wiki.Title, n int, heading string) string {
	var b bytes.Buffer
	writeEditSection(bufWriter{&b}, editSection{href: SectionEditURL(page, n), heading: heading})
	return b.String()
}

// SplitRedirect returns the target of src's "#REDIRECT [[X]]" first line,
// if any, parsed by rules, and the rest of src to render.
func SplitRedirect(src string, rules wiki.TitleRules) (wiki.Title, string) {
	return splitRedirect(src, rules)
}

// TimedOutHTML is what a page whose render ran out of time shows: src as
// plain text under a notice.
func TimedOutHTML(src string) string { return timedOut([]byte(src)) }

// NestedTooDeepHTML is what a page whose elements nest deeper than an
// HTML parser goes (512) shows instead of html: its text, the tags left
// out (unmatched end tags among them would close the skin's own elements),
// under a note saying why.
func NestedTooDeepHTML(html string) string {
	var text strings.Builder
	htmlText(&text, []byte(html))
	return plainPage("<strong>This page nests its elements more than 512 deep, which browsers cannot show, so its text is shown without its markup.</strong> "+
		"Editors: close the tags, lists or tables it opens.", []byte(text.String()), "")
}

// TooLargeHTML is what a page whose HTML would be size bytes, over limit,
// shows instead: its source as plain text, with a note saying why. Escaped,
// a byte of source takes up to six (&quot;): the text shown stops where
// it could pass limit.
func TooLargeHTML(src string, size, limit int) string {
	shown := src
	if n := limit / 6; len(shown) > n {
		for n > 0 && !utf8.RuneStart(shown[n]) {
			n--
		}
		shown = shown[:n]
	}
	var after string
	if len(shown) < len(src) {
		after = fmt.Sprintf("<p>(The first %s of %s of the source.)</p>\n", wiki.ByteSize(int64(len(shown))), wiki.ByteSize(int64(len(src))))
	}
	return plainPage(fmt.Sprintf("<strong>This page would be %s of HTML, more than the %s a page may render to, so it is shown as plain text.</strong> "+
		"Editors: split it into smaller pages (many thousands of headings or links are the usual cause).", wiki.ByteSize(int64(size)), wiki.ByteSize(int64(limit))),
		[]byte(shown), after)
}

// Highlighter highlights the code blocks of one render within the
// render's highlighting budget (see highlight.go). The zero value uses
// the default budget; it is not safe for concurrent use.
type Highlighter struct{ h highlighter }

// NewHighlighter returns a Highlighter with budget d (0: the default).
func NewHighlighter(d time.Duration) *Highlighter {
	return &Highlighter{h: highlighter{budget: d}}
}

// Highlight returns code highlighted as lang, the inside of its
// <code class="language-…">, or false when it is to be shown plain
// (unknown language, too large, or out of time).
func (h *Highlighter) Highlight(lang, code string) (string, bool) {
	return h.h.highlight([]byte(lang), []byte(code))
}

// Cut reports whether a block was left plain for lack of time: such a
// render is not kept for good (Result.Partial).
func (h *Highlighter) Cut() bool { return h.h.cut }

// CodeLanguageClass returns the class attribute value of a code block in
// lang ("language-go"), or "" when the sanitizer would drop it.
func CodeLanguageClass(lang string) string {
	c := "language-" + lang
	if !codeLanguage.MatchString(c) {
		return ""
	}
	return EscapeText(c)
}

// HeadingAnchor is the link to itself a heading with id shows after its
// text, with the space before it.
func HeadingAnchor(id string) string {
	var b bytes.Buffer
	_ = b.WriteByte(' ')
	writeAnchor(bufWriter{&b}, ` class="anchor"`, "#"+escapeFragment(id), ` aria-hidden="true"`, false)
	b.WriteString(`#</a>`)
	return b.String()
}

// CPUClock returns the clock render time limits are measured on (the
// render's thread's CPU time where it can be read, see cpuclock_*.go) and
// the function to call when the render ends.
func CPUClock() (now func() time.Duration, done func()) { return cpuClock() }
