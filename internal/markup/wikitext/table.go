package wikitext

import (
	"strings"
)

// maxTableDepth bounds how deeply tables nest; a deeper "{|" is text.
const maxTableDepth = 64

// tableState is one open table of the table pass (MediaWiki's
// doTableStuff keeps the same in parallel stacks).
type tableState struct {
	inCell    bool   // a cell (or caption) is open
	cellTag   string // its element
	inRow     bool   // a row is open
	rowTag    string // the start tag of the next row started implicitly
	hasRow    bool   // the table has had a row
	indent    int    // ":" before "{|": the table is in that many <dl><dd>
	captioned bool
}

// tables turns {| … |} tables into HTML, line by line, as MediaWiki's
// doTableStuff does: "{|" opens a table, "|+" a caption, "|-" a row,
// "|" and "!" data and header cells ("||" and "!!" more on the line),
// "|}" closes. A cell's "attrs | text" has attributes before its first
// single pipe.
func (d *doc) tables(s string) string {
	if !strings.Contains(s, "{|") {
		return s
	}
	var out strings.Builder
	out.Grow(len(s) + len(s)/4)
	var stack []*tableState
	for raw := range lines(s) {
		d.b.check()
		nl := strings.HasSuffix(raw, "\n")
		outLine := strings.TrimSuffix(raw, "\n")
		line := strings.TrimSpace(outLine)
		if line == "" {
			out.WriteString(outLine)
			out.WriteByte('\n')
			continue
		}
		colons := 0
		for colons < len(line) && line[colons] == ':' {
			colons++
		}
		rest := strings.TrimLeft(line[colons:], " \t")
		switch {
		case strings.HasPrefix(rest, "{|") && len(stack) < maxTableDepth:
			// As deep as a list may go: each colon is two elements.
			t := &tableState{indent: min(colons, maxListDepth)}
			stack = append(stack, t)
			outLine = strings.Repeat("<dl><dd>", t.indent) + d.openTag("table", stripMarkers(rest[2:]))
		case len(stack) == 0:
			// not in a table
		case strings.HasPrefix(line, "|}"):
			t := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			l := "</table>" + line[2:]
			if !t.hasRow {
				l = "<tr><td></td></tr>" + l
			}
			if t.inRow {
				l = "</tr>" + l
			}
			if t.inCell {
				l = "</" + t.cellTag + ">" + l
			}
			if t.indent > 0 {
				l = strings.TrimRight(l, " \t") + strings.Repeat("</dd></dl>", t.indent)
			}
			outLine = l
		case strings.HasPrefix(line, "|-"):
			t := stack[len(stack)-1]
			a := strings.TrimLeft(line, "|-")
			t.rowTag = d.openTag("tr", stripMarkers(a))
			l := ""
			if t.inRow {
				l = "</tr>"
			}
			if t.inCell {
				l = "</" + t.cellTag + ">" + l
			}
			t.hasRow, t.inRow, t.inCell = true, false, false
			outLine = l
		case line[0] == '|' || line[0] == '!':
			t := stack[len(stack)-1]
			first := line[0]
			line = line[1:]
			if first == '|' && strings.HasPrefix(line, "+") {
				first = '+'
				line = line[1:]
			}
			if first == '!' {
				line = strings.ReplaceAll(line, "!!", "||")
			}
			var l strings.Builder
			for _, cell := range strings.Split(line, "||") {
				previous := ""
				if first != '+' {
					if !t.inRow {
						previous = "<tr>\n"
						if t.rowTag != "" {
							previous = t.rowTag + "\n"
						}
						t.rowTag = ""
					}
					t.inRow, t.hasRow = true, true
				}
				if t.inCell {
					previous = "</" + t.cellTag + ">\n" + previous
				}
				switch first {
				case '|':
					t.cellTag = "td"
				case '!':
					t.cellTag = "th"
				default:
					t.cellTag = "caption"
				}
				attrs, data, piped := cutCellAttrs(cell)
				l.WriteString(previous)
				if piped {
					l.WriteString(d.openTag(t.cellTag, stripMarkers(attrs)))
				} else {
					l.WriteString("<" + t.cellTag + ">")
				}
				l.WriteString(strings.TrimSpace(data))
				t.inCell = true
			}
			outLine = l.String()
		}
		out.WriteString(outLine)
		if nl {
			out.WriteByte('\n')
		}
	}
	if len(stack) == 1 && !stack[0].hasRow && strings.TrimSuffix(out.String(), "\n") == "<table>" {
		return "" // "{||}" alone, no table after it: nothing, as MediaWiki
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.inCell {
			out.WriteString("</" + t.cellTag + ">\n")
		}
		if t.inRow {
			out.WriteString("</tr>\n")
		}
		if !t.hasRow {
			out.WriteString("<tr><td></td></tr>\n")
		}
		out.WriteString("</table>" + strings.Repeat("</dd></dl>", t.indent) + "\n")
	}
	return out.String()
}

// cutCellAttrs splits a cell at its first single '|' into attributes and
// content, unless a link or language conversion starts before it (its
// pipe is the link's).
func cutCellAttrs(cell string) (attrs, data string, ok bool) {
	i := strings.IndexByte(cell, '|')
	if i < 0 {
		return "", cell, false
	}
	if strings.Contains(cell[:i], "[[") || strings.Contains(cell[:i], "-{") {
		return "", cell, false
	}
	return cell[:i], cell[i+1:], true
}
