package view

import (
	"bytes"
	"html/template"
)

// Tab is one of the page actions above the content.
type Tab struct {
	Label  string
	URL    string
	Active bool
}

// WriteTabs writes the tab bar. The layout and the logged-in splice path
// both use it, so the two cannot drift apart.
func WriteTabs(b *bytes.Buffer, tabs []Tab) {
	if len(tabs) == 0 {
		return
	}
	b.WriteString(`<nav class="tabs" aria-label="Page actions">`)
	for _, t := range tabs {
		b.WriteString(`<a href="`)
		template.HTMLEscape(b, []byte(t.URL))
		b.WriteByte('"')
		if t.Active {
			b.WriteString(` class="active" aria-current="page"`)
		}
		b.WriteByte('>')
		template.HTMLEscape(b, []byte(t.Label))
		b.WriteString(`</a>`)
	}
	b.WriteString(`</nav>`)
}

func tabsHTML(tabs []Tab) template.HTML {
	var b bytes.Buffer
	WriteTabs(&b, tabs)
	return template.HTML(b.String())
}
