package render

import (
	"html"
	"strings"
)

// minTOC is the number of headings from which a page shows a table of contents.
const minTOC = 3

// TOCHTML returns a <nav class="toc"> with nested <ol> lists for toc, or ""
// when the page has fewer than three headings. A jump of several levels
// nests one list deeper, as in MediaWiki.
func TOCHTML(toc []Heading) string {
	if len(toc) < minTOC {
		return ""
	}
	return TOCList(toc)
}

// TOCList is TOCHTML for any number of headings (a page that asks for its
// table of contents); "" for none.
func TOCList(toc []Heading) string {
	if len(toc) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<nav class="toc" aria-label="Contents">`)
	var open []int // level of each open <ol>
	for i, h := range toc {
		switch {
		case i == 0:
			b.WriteString("<ol>")
			open = append(open, h.Level)
		case h.Level > open[len(open)-1]:
			b.WriteString("<ol>")
			open = append(open, h.Level)
		default:
			b.WriteString("</li>")
			for len(open) > 1 && h.Level <= open[len(open)-2] {
				open = open[:len(open)-1]
				b.WriteString("</ol></li>")
			}
			// 2, 4, 3: the 3 is a sibling of the 4, and a later 4 nests under it.
			open[len(open)-1] = h.Level
		}
		b.WriteString(`<li><a href="#`)
		b.WriteString(html.EscapeString(escapeFragment(h.ID)))
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(h.Text))
		b.WriteString("</a>")
	}
	b.WriteString("</li>")
	for len(open) > 1 {
		open = open[:len(open)-1]
		b.WriteString("</ol></li>")
	}
	b.WriteString("</ol></nav>")
	return b.String()
}
