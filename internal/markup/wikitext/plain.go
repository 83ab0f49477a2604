package wikitext

import (
	"strings"
)

// plainText is the text of the parsed page for the search index.
func (d *doc) plainText() string { return d.plainOf(d.body) }

// plainOf is the text of s, a text after the passes: tags left out,
// markers replaced by their text, references resolved.
func (d *doc) plainOf(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	d.plainMarkers(&b, s, 0)
	return htmlText(blockEnds.Replace(b.String()))
}

// blockEnds makes the ends of blocks and lines newlines in plain text. A
// Replacer is built once: building one costs more than replacing in a
// heading's text, and a page may have a hundred thousand headings.
var blockEnds = strings.NewReplacer("<br>", "\n", "</p>", "\n", "</li>", "\n", "</dd>", "\n", "</dt>", "\n", "</td>", "\n", "</th>", "\n", "</tr>", "\n", "</caption>", "\n")

func (d *doc) plainMarkers(b *strings.Builder, s string, depth int) {
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != markerChar {
			continue
		}
		kind, n, end, ok := readMarker(s, i)
		if !ok {
			continue
		}
		b.WriteString(s[last:i])
		last, i = end, end-1
		if depth > maxMarkDepth {
			continue
		}
		switch kind {
		case kindHeadClose:
			b.WriteByte('\n')
		case kindInline, kindBlock:
			if n >= len(d.marks) {
				continue
			}
			m := &d.marks[n]
			switch {
			case m.refs != nil:
				for _, r := range m.refs.refs {
					d.plainMarkers(b, r.fullText(), depth+1)
					b.WriteByte('\n')
				}
			case m.plain != "":
				b.WriteString(escapeText(m.plain))
				if kind == kindBlock {
					b.WriteByte('\n')
				}
			}
		}
	}
	b.WriteString(s[last:])
}
