package diff

import (
	"html"
	"strconv"
	"strings"
)

// HTML renders hunks as a four-column table (old line number, old text, new
// line number, new text) in MediaWiki's class vocabulary. Whole deleted and
// added lines are wrapped in <del> and <ins>; changed words inside a changed
// line in <del class="diffchange"> and <ins class="diffchange">. Text left out
// of a long line is marked with an ellipsis that says how much. All text is
// escaped. No hunks render as an empty string.
func HTML(hunks []Hunk) string {
	if len(hunks) == 0 {
		return ""
	}
	var w strings.Builder
	w.WriteString(`<table class="diff">` + "\n")
	w.WriteString(`<caption class="diff-caption">Differences between the old and the new version</caption>` + "\n")
	w.WriteString(`<colgroup><col class="diff-number"><col class="diff-content"><col class="diff-number"><col class="diff-content"></colgroup>` + "\n")
	w.WriteString(`<thead><tr><th scope="col" class="diff-number">Line</th><th scope="col">Old version</th>` +
		`<th scope="col" class="diff-number">Line</th><th scope="col">New version</th></tr></thead>` + "\n")
	for _, h := range hunks {
		w.WriteString(`<tbody>` + "\n")
		w.WriteString(`<tr class="diff-lineno"><th scope="rowgroup" colspan="2">Line ` + strconv.Itoa(h.OldStart) +
			`:</th><th scope="rowgroup" colspan="2">Line ` + strconv.Itoa(h.NewStart) + ":</th></tr>\n")
		for _, r := range h.Rows {
			writeRow(&w, r)
		}
		w.WriteString("</tbody>\n")
	}
	w.WriteString("</table>\n")
	return w.String()
}

func writeRow(w *strings.Builder, r Row) {
	w.WriteString(`<tr class="diff-` + r.Kind.String() + `">`)
	switch r.Kind {
	case Unchanged:
		number(w, r.OldLine)
		w.WriteString(`<td class="diff-context">`)
		writeText(w, r.Old, r.OldOmitted)
		w.WriteString(`</td>`)
		number(w, r.NewLine)
		w.WriteString(`<td class="diff-context">`)
		writeText(w, r.New, r.NewOmitted)
		w.WriteString(`</td>`)
	case Deleted:
		number(w, r.OldLine)
		w.WriteString(`<td class="diff-deletedline"><del>`)
		writeText(w, r.Old, r.OldOmitted)
		w.WriteString(`</del></td>`)
		w.WriteString(`<td class="diff-empty" colspan="2"></td>`)
	case Added:
		w.WriteString(`<td class="diff-empty" colspan="2"></td>`)
		number(w, r.NewLine)
		w.WriteString(`<td class="diff-addedline"><ins>`)
		writeText(w, r.New, r.NewOmitted)
		w.WriteString(`</ins></td>`)
	case Changed:
		number(w, r.OldLine)
		w.WriteString(`<td class="diff-deletedline">`)
		writeSegments(w, r.OldWords, "del")
		w.WriteString(`</td>`)
		number(w, r.NewLine)
		w.WriteString(`<td class="diff-addedline">`)
		writeSegments(w, r.NewWords, "ins")
		w.WriteString(`</td>`)
	}
	w.WriteString("</tr>\n")
}

func number(w *strings.Builder, n int) {
	w.WriteString(`<td class="diff-number">` + strconv.Itoa(n) + `</td>`)
}

func writeText(w *strings.Builder, s string, omitted int) {
	w.WriteString(html.EscapeString(s))
	writeOmitted(w, omitted)
}

// writeOmitted marks where n bytes of a line are not shown.
func writeOmitted(w *strings.Builder, n int) {
	if n > 0 {
		w.WriteString(`<span class="diff-omitted" title="` + strconv.Itoa(n) + ` bytes not shown">…</span>`)
	}
}

func writeSegments(w *strings.Builder, segs []Segment, tag string) {
	for _, s := range segs {
		switch {
		case s.Omitted > 0:
			writeOmitted(w, s.Omitted)
		case s.Changed:
			w.WriteString("<" + tag + ` class="diffchange">` + html.EscapeString(s.Text) + "</" + tag + ">")
		default:
			w.WriteString(html.EscapeString(s.Text))
		}
	}
}
