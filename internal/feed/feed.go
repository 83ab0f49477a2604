// Package feed writes Atom 1.0 (RFC 4287) and RSS 2.0 documents. A feed
// is a title, its own and its page's URLs, the time it last changed and
// its entries; the caller decides what they are (recent changes, a
// page's history, a user's contributions, a category's new members, a
// watchlist) and this package only writes them, escaping everything.
//
// Every string is cleaned of what XML 1.0 cannot carry (control
// characters but tab, line feed and carriage return; U+FFFE and U+FFFF;
// invalid UTF-8) and escaped, so no user-supplied text can end an element
// or a section early. HTML content travels as escaped text (Atom's
// type="html", RSS's description), never in CDATA.
package feed

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Format is a feed's format, as the feed parameter names it.
type Format string

// The formats.
const (
	Atom Format = "atom"
	RSS  Format = "rss"
)

// Formats are the values of the feed parameter, in the order links offer them.
var Formats = []string{string(Atom), string(RSS)}

// ContentType is the media type a document of format f is served as.
func (f Format) ContentType() string {
	if f == RSS {
		return "application/rss+xml; charset=utf-8"
	}
	return "application/atom+xml; charset=utf-8"
}

// MediaType is f's media type without parameters, for <link type>.
func (f Format) MediaType() string {
	if f == RSS {
		return "application/rss+xml"
	}
	return "application/atom+xml"
}

// Feed is one feed document.
type Feed struct {
	Title    string
	Subtitle string // RSS's required description; Atom's subtitle
	// ID is the feed's permanent, absolute IRI (Atom's id): the same for
	// every request of the same feed.
	ID        string
	Self      string    // this document's absolute URL
	Alternate string    // the absolute URL of the HTML page it follows
	Updated   time.Time // the newest entry's time, or when the feed's subject last changed
	Language  string    // e.g. "en"; "" for none
	Generator string    // the software's name
	Entries   []Entry
}

// Entry is one item of a feed.
type Entry struct {
	// ID is the entry's permanent, absolute IRI: stable across requests
	// and feeds (the same change has the same ID in every feed showing it).
	ID      string
	Title   string
	Link    string // absolute URL of what the entry is about
	Updated time.Time
	Author  string
	Summary string // plain text (an edit summary); "" for none
	// Content is an HTML fragment (a diff table, the start of a text),
	// already safe HTML; it is escaped into the document as text.
	Content string
}

// Write returns f as a document of format format.
func Write(f *Feed, format Format) []byte {
	var b strings.Builder
	b.Grow(4096 + 1024*len(f.Entries))
	if format == RSS {
		writeRSS(&b, f)
	} else {
		writeAtom(&b, f)
	}
	return []byte(b.String())
}

const (
	atomNS = "http://www.w3.org/2005/Atom"
	dcNS   = "http://purl.org/dc/elements/1.1/"
)

func writeAtom(b *strings.Builder, f *Feed) {
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<feed xmlns="` + atomNS + `"`)
	if f.Language != "" {
		attr(b, "xml:lang", f.Language)
	}
	b.WriteString(">\n")
	elem(b, "id", f.ID)
	b.WriteString(`<title type="text">`)
	b.WriteString(Escape(f.Title))
	b.WriteString("</title>\n")
	if f.Subtitle != "" {
		b.WriteString(`<subtitle type="text">`)
		b.WriteString(Escape(f.Subtitle))
		b.WriteString("</subtitle>\n")
	}
	link(b, "self", "application/atom+xml", f.Self)
	link(b, "alternate", "text/html", f.Alternate)
	elem(b, "updated", f.Updated.UTC().Format(time.RFC3339))
	if f.Generator != "" {
		elem(b, "generator", f.Generator)
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		b.WriteString("<entry>\n")
		elem(b, "id", e.ID)
		b.WriteString(`<title type="text">`)
		b.WriteString(Escape(e.Title))
		b.WriteString("</title>\n")
		link(b, "alternate", "text/html", e.Link)
		elem(b, "updated", e.Updated.UTC().Format(time.RFC3339))
		b.WriteString("<author><name>")
		b.WriteString(Escape(authorOf(e)))
		b.WriteString("</name></author>\n")
		if e.Summary != "" {
			b.WriteString(`<summary type="text">`)
			b.WriteString(Escape(e.Summary))
			b.WriteString("</summary>\n")
		}
		b.WriteString(`<content type="html">`)
		b.WriteString(Escape(e.Content))
		b.WriteString("</content>\n")
		b.WriteString("</entry>\n")
	}
	b.WriteString("</feed>\n")
}

func writeRSS(b *strings.Builder, f *Feed) {
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<rss version="2.0" xmlns:atom="` + atomNS + `" xmlns:dc="` + dcNS + `">` + "\n<channel>\n")
	elem(b, "title", f.Title)
	elem(b, "link", f.Alternate)
	desc := f.Subtitle
	if desc == "" {
		desc = f.Title
	}
	elem(b, "description", desc)
	if f.Language != "" {
		elem(b, "language", f.Language)
	}
	elem(b, "lastBuildDate", f.Updated.UTC().Format(time.RFC1123Z))
	if f.Generator != "" {
		elem(b, "generator", f.Generator)
	}
	b.WriteString(`<atom:link rel="self" type="application/rss+xml"`)
	attr(b, "href", f.Self)
	b.WriteString("/>\n")
	for i := range f.Entries {
		e := &f.Entries[i]
		b.WriteString("<item>\n")
		elem(b, "title", e.Title)
		elem(b, "link", e.Link)
		b.WriteString(`<guid isPermaLink="false">`)
		b.WriteString(Escape(e.ID))
		b.WriteString("</guid>\n")
		// RSS has no summary beside the description: the summary leads it.
		content := e.Content
		if e.Summary != "" {
			content = "<p>" + EscapeHTML(e.Summary) + "</p>" + content
		}
		elem(b, "description", content)
		elem(b, "pubDate", e.Updated.UTC().Format(time.RFC1123Z))
		// RSS's author must be an e-mail address; a wiki user name goes
		// in Dublin Core's creator, as MediaWiki writes it.
		elem(b, "dc:creator", authorOf(e))
		b.WriteString("</item>\n")
	}
	b.WriteString("</channel>\n</rss>\n")
}

func authorOf(e *Entry) string {
	if strings.TrimSpace(Clean(e.Author)) == "" {
		return "unknown"
	}
	return e.Author
}

func elem(b *strings.Builder, name, text string) {
	b.WriteString("<" + name + ">")
	b.WriteString(Escape(text))
	b.WriteString("</" + name + ">\n")
}

func attr(b *strings.Builder, name, value string) {
	b.WriteString(" " + name + `="`)
	b.WriteString(escapeAttr(value))
	b.WriteString(`"`)
}

func link(b *strings.Builder, rel, typ, href string) {
	b.WriteString(`<link rel="` + rel + `" type="` + typ + `"`)
	attr(b, "href", href)
	b.WriteString("/>\n")
}

// Clean returns s without what XML 1.0 cannot carry or a reader would
// not want: invalid UTF-8 becomes U+FFFD; C0 controls but tab, line feed
// and carriage return, DEL, C1 controls, U+FFFE and U+FFFF are dropped.
func Clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexFunc(s, dropped) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if dropped(r) {
			return -1
		}
		return r
	}, s)
}

func dropped(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20, r >= 0x7f && r < 0xa0, r == 0xfffe, r == 0xffff:
		return true
	}
	return false
}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;")
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;",
		"\r", "&#xD;", "\n", "&#xA;", "\t", "&#x9;")
	htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
)

// Escape cleans s and escapes it as XML character data.
func Escape(s string) string { return textEscaper.Replace(Clean(s)) }

func escapeAttr(s string) string { return attrEscaper.Replace(Clean(s)) }

// EscapeHTML cleans s and escapes it as HTML text, for content built
// from plain text (a summary, the start of a page's text).
func EscapeHTML(s string) string { return htmlEscaper.Replace(Clean(s)) }
