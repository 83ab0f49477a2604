package render

import (
	"regexp"

	"github.com/microcosm-cc/bluemonday"
)

// policy is the allow-list for rendered pages. Render passes only the
// author's raw HTML through it, one node at a time (sanitizeRaw), and writes
// everything else already in the form the policy leaves unchanged
// (canon.go), so that a whole page is a fixpoint: IsSafe(page) holds. It is
// built once; bluemonday policies are safe for concurrent use once built.
var policy = newPolicy()

// Sanitize returns html with everything outside the allow-list removed.
func Sanitize(html string) string { return policy.Sanitize(html) }

// IsSafe reports whether html is already sanitized: Sanitize(html) == html.
func IsSafe(html string) bool { return policy.Sanitize(html) == html }

// plainElements are the elements allowed with no attributes or only the
// attributes newPolicy lists for them.
var plainElements = []string{
	"p", "br", "hr", "div", "span", "nav",
	"b", "i", "strong", "em", "u", "s", "del", "ins", "mark", "small",
	"kbd", "code", "pre", "samp", "var", "sub", "sup", "abbr", "cite", "dfn", "q",
	"blockquote", "ul", "ol", "li", "dl", "dt", "dd",
	"table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td", "colgroup", "col",
	"details", "summary", "figure", "figcaption",
	"h1", "h2", "h3", "h4", "h5", "h6",
	"ruby", "rt", "rp", "rb", "rtc", "wbr", "time",
	// Presentational elements MediaWiki keeps, so that pages written for
	// it show their text as intended rather than the tags.
	"bdi", "big", "center", "font", "strike", "tt",
}

// authorElements are the elements an author's raw HTML may use: the
// policy's elements except <input>, which it allows only for the task
// list check boxes the renderer writes. The tags of every other element
// are shown as text (see escapeTags).
var authorElements = func() map[string]bool {
	m := map[string]bool{"a": true, "img": true}
	for _, e := range plainElements {
		m[e] = true
	}
	return m
}()

// linkClass is a class of the wiki's own links: red links, links out,
// heading anchors, links around images, Media: links, and links to files
// that cannot be shown as pictures (file.go's whyClass).
const linkClass = `(?:new|external|anchor|image|internal|file-not-image|file-too-large|file-unsupported)`

// mediaSrcset is the policy's rule for img srcset: the wiki's own media
// URLs (wiki.ThumbURL, wiki.OriginalURL: a SHA-256 and a name escaped by
// url.PathEscape, so without '/', ',' or white space) for 1.5 and then 2
// times the density, as imageSources writes them.
var mediaSrcset = regexp.MustCompile(`^/media/[0-9a-f]{64}/[A-Za-z0-9._~$&+:=@%-]+ 1\.5x(?:, /media/[0-9a-f]{64}/[A-Za-z0-9._~$&+:=@%-]+ 2x)?$`)

func newPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(true)
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnFullyQualifiedLinks(true)

	p.AllowElements(plainElements...)
	p.AllowNoAttrs().OnElements(plainElements...) // else bluemonday drops <big>, <font>… that have none

	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("title").OnElements("a", "img", "abbr", "dfn")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^` + linkClass + `(?: ` + linkClass + `)*$`)).OnElements("a")
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^(?:nofollow|noopener|noreferrer)(?: (?:nofollow|noopener|noreferrer))*$`)).OnElements("a")
	p.AllowAttrs("aria-hidden").Matching(regexp.MustCompile(`^true$`)).OnElements("a", "span")

	p.AllowAttrs("src").Matching(regexp.MustCompile(`^/[^/\\]`)).OnElements("img") // the wiki's own images only (imageSrc)
	p.AllowAttrs("alt").OnElements("img")
	p.AllowAttrs("width", "height").Matching(bluemonday.NumberOrPercent).OnElements("img")
	p.AllowElements("img")
	// Files shown in pages (file.go): thumbnails for denser screens from
	// the wiki's own media URLs only, loaded when scrolled to, and the
	// classes that place them.
	p.AllowAttrs("srcset").Matching(mediaSrcset).OnElements("img")
	p.AllowAttrs("loading").Matching(regexp.MustCompile(`^lazy$`)).OnElements("img")
	p.AllowAttrs("decoding").Matching(regexp.MustCompile(`^async$`)).OnElements("img")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^thumbborder$`)).OnElements("img")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^thumb t(?:left|right|center|none)$`)).OnElements("figure")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(?:thumb t(?:left|right|center|none)|thumbcaption|image-(?:left|right|center))$`)).OnElements("span")

	p.AllowAttrs("id").Matching(regexp.MustCompile(`^\S{1,256}$`)).OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^toc$`)).OnElements("nav")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^error$`)).OnElements("strong") // template expansion's error boxes
	// The boxes templates are made of, styled by the wiki's style sheet:
	// an infobox floats beside the text, a message box stands out, a
	// navigation box closes the page.
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(?:infobox|navbox|mbox)$`)).OnElements("div")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^wikitable$`)).OnElements("table")
	p.AllowAttrs("aria-label").OnElements("nav")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^wikid-macro$`)).OnElements("div", "span")
	p.AllowAttrs("data-macro").Matching(regexp.MustCompile(`^(?:recentchanges|pagecount|allpages)$`)).OnElements("div", "span")
	p.AllowAttrs("data-prefix").OnElements("div")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^task-list-item$`)).OnElements("li")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\p{L}\p{N}_+#.-]{1,64}$`)).OnElements("code")
	p.AllowAttrs("class").Matching(tokenClassRule()).OnElements("span")                                     // highlighted code (highlight.go)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(mw-editsection|autocomment)$`)).OnElements("span") // section edit links (sections.go), section comments of summaries (summary.go)

	// Footnotes (footnote.go): ids in their own "_fn" namespace, which no
	// heading id can enter, and the DPUB-ARIA roles of notes and their links.
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^_fnref-[1-9][0-9]{0,6}(?:-[1-9][0-9]{0,6})?$`)).OnElements("sup")
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^_fn-[1-9][0-9]{0,6}$`)).OnElements("li")
	p.AllowAttrs("role").Matching(regexp.MustCompile(`^doc-(?:noteref|backlink)$`)).OnElements("a")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^footnotes$`)).OnElements("div")
	p.AllowAttrs("role").Matching(regexp.MustCompile(`^doc-endnotes$`)).OnElements("div")

	// Task list check boxes; raw <input> from authors is escaped before this.
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")

	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("align").Matching(bluemonday.CellAlign).OnElements("td", "th")
	p.AllowAttrs("colspan", "rowspan").Matching(bluemonday.Integer).OnElements("td", "th")
	p.AllowAttrs("open").Matching(regexp.MustCompile(`^$`)).OnElements("details")
	p.AllowAttrs("datetime").Matching(bluemonday.ISO8601).OnElements("time")
	return p
}
