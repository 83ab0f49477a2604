package render

import (
	"bytes"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// Summary returns an edit summary as HTML, the way MediaWiki shows one:
// the text escaped, with [[Target]] and [[Target|label]] made links (to
// the page; a summary's links are not coloured by existence, which would
// make every history and recent-changes listing depend on other pages);
// no other markup. A link to a section of no page ("[[#Section]]") and a
// link that names no page stay text. Targets are titles by rules, the
// wiki's.
//
// A section comment ("/* Heading */ rest", which section edits write) shows
// as MediaWiki shows it: "→Heading: rest", marked as such.
func Summary(s string, rules wiki.TitleRules) string {
	var out strings.Builder
	if pre, rest, ok := strings.Cut(s, "/*"); ok {
		if heading, post, ok := strings.Cut(rest, "*/"); ok && strings.TrimSpace(heading) != "" {
			summaryLinks(&out, pre, rules)
			out.WriteString(`<span class="autocomment">→`)
			canonEscapeString(stringsWriter{&out}, strings.TrimSpace(heading))
			post = strings.TrimSpace(post)
			if post != "" {
				out.WriteString(":</span> ")
				summaryLinks(&out, post, rules)
			} else {
				out.WriteString("</span>")
			}
			return out.String()
		}
	}
	summaryLinks(&out, s, rules)
	return out.String()
}

// summaryLinks writes s escaped, with its wiki links made links (Summary).
func summaryLinks(out *strings.Builder, s string, rules wiki.TitleRules) {
	w := stringsWriter{out}
	b := []byte(s)
	for {
		i := bytes.Index(b, []byte("[["))
		if i < 0 {
			break
		}
		inner, ok := enclosed(b[i:], "[[", "]]", maxWikiLink)
		if !ok || bytes.Contains(inner, []byte("[[")) || bytes.ContainsAny(inner, "\n\r") {
			canonEscape(w, b[:i+1])
			b = b[i+1:]
			continue
		}
		canonEscape(w, b[:i])
		end := i + len(inner) + 4
		l := parseWikiLink(string(b[i:end]), string(inner), rules)
		switch {
		case l.Invalid:
			canonEscapeString(w, l.Raw)
		case l.Target == "":
			canonEscapeString(w, l.Label)
		default:
			l.Category, l.Exists = false, true
			open := wikiLinkOpen(l)
			out.WriteString(open)
			canonEscapeString(w, l.Label)
			if open != "" {
				out.WriteString("</a>")
			}
		}
		b = b[end:]
	}
	canonEscape(w, b)
}
