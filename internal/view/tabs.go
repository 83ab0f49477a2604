package view

import (
	"bytes"
	"html/template"
	"strings"
)

// Tab is one of the page actions above the content, or one of the
// namespace tabs (the page and its discussion).
type Tab struct {
	Label  string
	URL    string
	Active bool
	New    bool // it names a page that does not exist: a red link
	// Class is an extra class of the link (the watch star's "watch" or
	// "watch watched", which its script toggles).
	Class string
}

// WriteTabs writes the tab bar. The layout and the logged-in splice path
// both use it, so the two cannot drift apart.
func WriteTabs(b *bytes.Buffer, tabs []Tab) { writeNav(b, "tabs", "Page actions", tabs) }

func writeNav(b *bytes.Buffer, class, label string, tabs []Tab) {
	if len(tabs) == 0 {
		return
	}
	b.WriteString(`<nav class="` + class + `" aria-label="` + label + `">`)
	for _, t := range tabs {
		b.WriteString(`<a href="`)
		template.HTMLEscape(b, []byte(t.URL))
		b.WriteByte('"')
		class := t.Class
		if t.Active {
			class = strings.TrimSpace("active " + class)
		}
		if t.New {
			class = strings.TrimSpace(class + " new")
		}
		if class != "" {
			b.WriteString(` class="`)
			template.HTMLEscape(b, []byte(class))
			b.WriteByte('"')
		}
		if t.Active {
			b.WriteString(` aria-current="page"`)
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

// namespaceTabsHTML writes the namespace tabs: a page's subject page and
// talk page. They are the same for every reader (not spliced per user).
func namespaceTabsHTML(tabs []Tab) template.HTML {
	var b bytes.Buffer
	writeNav(&b, "tabs ns-tabs", "Namespaces", tabs)
	return template.HTML(b.String())
}
