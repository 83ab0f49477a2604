package wikitext

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ToMarkdown converts wikitext to the Markdown the Markdown renderer
// reads, as well as it can: headings, bold and italic, lists, definition
// lists, rules, external links, <pre>, <syntaxhighlight> and indented
// lines (as fences), references (as footnotes) and simple tables (as GFM
// tables; others as HTML). What both markups read alike stays as written:
// wiki links, categories, files, redirects, templates, <nowiki>, comments
// and the HTML tags. It is for a reader to check before saving, not a
// lossless conversion.
//
// Its cost is linear in src but for what it hands to the renderer (tables
// it cannot write as Markdown's), and ctx bounds it all: once ctx is done
// the conversion stops and returns ctx's error.
func (r *Renderer) ToMarkdown(ctx context.Context, src string) (out string, err error) {
	c := &mdConv{r: r, ctx: ctx}
	defer func() {
		if v := recover(); v != nil {
			stop, ok := v.(mdStop)
			if !ok {
				panic(v)
			}
			out, err = "", fmt.Errorf("wikitext: convert to Markdown: %w", stop.err)
		}
	}()
	c.check()
	src = clean(src)
	src = c.protect(src)
	src = magicWordsMD(src)
	src = c.refs(src)
	out = c.blocks(src)
	if len(c.notes) > 0 && !c.listed {
		out = strings.TrimRight(out, "\n") + "\n\n" + c.noteDefs()
	}
	out = c.restore(out)
	for strings.Contains(out, "\n\n\n") {
		out = strings.ReplaceAll(out, "\n\n\n", "\n\n")
	}
	return strings.Trim(out, "\n") + "\n", nil
}

type mdConv struct {
	r       *Renderer
	noteAt  map[string]int  // the index in notes of each label listed there
	ctx     context.Context // the conversion stops once it is done (check)
	steps   int
	saved   []string // protected text, restored at the end
	notes   []mdNote
	named   map[string]string
	listed  bool
	counter int
}

type mdNote struct{ label, text string }

// mdStop is the panic value that ends a conversion whose context is done.
type mdStop struct{ err error }

// check is a step of the conversion: every 1,024 steps it reads whether
// the context is done, and ends the conversion if it is. Each loop over
// the text takes one per step, and no step costs more than a few KB of
// reading (enclosedNested's bound, for the longest).
func (c *mdConv) check() {
	if c.steps++; c.steps%1024 != 1 {
		return
	}
	if err := c.ctx.Err(); err != nil {
		panic(mdStop{err})
	}
}

// placeholder stands for saved text: markerChar cannot come from the source.
func (c *mdConv) save(s string) string {
	c.saved = append(c.saved, s)
	return marker('m', len(c.saved)-1)
}

func (c *mdConv) restore(s string) string {
	for k := 0; k < 3 && strings.IndexByte(s, markerChar) >= 0; k++ {
		var b strings.Builder
		last := 0
		for i := 0; i < len(s); i++ {
			if s[i] != markerChar {
				continue
			}
			c.check()
			if kind, n, end, ok := readMarker(s, i); ok && kind == 'm' && n < len(c.saved) {
				b.WriteString(s[last:i])
				b.WriteString(c.saved[n])
				last, i = end, end-1
			}
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// protect saves what must not be converted: comments and <nowiki> as
// they are, <pre> and <syntaxhighlight> as fences on lines of their own.
func (c *mdConv) protect(s string) string {
	var b strings.Builder
	noClose := map[string]bool{}
	last := 0
	for i := 0; i < len(s); {
		c.check()
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			break
		}
		i += k
		if strings.HasPrefix(s[i:], "<!--") {
			end := len(s)
			if e := strings.Index(s[i+4:], "-->"); e >= 0 {
				end = i + 4 + e + 3
			}
			b.WriteString(s[last:i])
			b.WriteString(c.save(s[i:end]))
			i, last = end, end
			continue
		}
		name, attrs, self, end, ok := startTag(s, i, []string{"nowiki", "pre", "syntaxhighlight", "source"})
		if !ok || noClose[name] {
			i++
			continue
		}
		content, after := "", end
		if !self {
			cs, ce, ok := closeTag(s, end, name)
			if !ok {
				noClose[name] = true
				i++
				continue
			}
			content, after = s[end:cs], ce
		}
		b.WriteString(s[last:i])
		switch name {
		case "nowiki":
			b.WriteString(c.save(s[i:after]))
		default:
			lang := ""
			if name != "pre" {
				lang = attrValue(attrs, "lang")
			}
			if name == "pre" {
				content = removeNowikiTags(content)
			}
			b.WriteString("\n" + c.save(fence(lang, strings.Trim(content, "\n"))) + "\n")
		}
		i, last = after, after
	}
	b.WriteString(s[last:])
	return b.String()
}

// fence is code in a fenced block, the fence longer than any backtick run
// inside.
func fence(lang, code string) string {
	n := 3
	for run, i := 0, 0; i < len(code); i++ {
		if code[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + code + "\n" + f
}

// refs turns references into footnotes: [^n] in the text, the notes
// where <references/> stands or at the end.
func (c *mdConv) refs(s string) string {
	if !strings.Contains(asciiLower(s), "<ref") {
		return s
	}
	var b strings.Builder
	last := 0
	noClose := false
	for i := 0; i < len(s); {
		c.check()
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			break
		}
		i += k
		name, attrs, self, end, ok := startTag(s, i, []string{"references", "ref"})
		if !ok {
			i++
			continue
		}
		content, after := "", end
		if !self {
			if noClose {
				i++
				continue
			}
			cs, ce, ok := closeTag(s, end, name)
			if !ok {
				noClose = true
				i++
				continue
			}
			content, after = s[end:cs], ce
		}
		b.WriteString(s[last:i])
		if name == "references" {
			c.listed = true
			b.WriteString("\n" + c.save(c.noteDefs()) + "\n")
		} else {
			b.WriteString(c.save(c.note(attrValue(attrs, "name"), content)))
		}
		i, last = after, after
	}
	b.WriteString(s[last:])
	return b.String()
}

func (c *mdConv) note(name, content string) string {
	if name != "" {
		if c.named == nil {
			c.named = map[string]string{}
		}
		if label, ok := c.named[name]; ok {
			if i, listed := c.noteAt[label]; listed && c.notes[i].text == "" && strings.TrimSpace(content) != "" {
				c.notes[i].text = c.inline(strings.TrimSpace(content))
			}
			return "[^" + label + "]"
		}
	}
	c.counter++
	label := strconv.Itoa(c.counter)
	if name != "" {
		c.named[name] = label
	}
	if c.noteAt == nil {
		c.noteAt = map[string]int{}
	}
	c.noteAt[label] = len(c.notes)
	c.notes = append(c.notes, mdNote{label: label, text: c.inline(strings.Join(strings.Fields(content), " "))})
	return "[^" + label + "]"
}

func (c *mdConv) noteDefs() string {
	var b strings.Builder
	for _, n := range c.notes {
		fmt.Fprintf(&b, "[^%s]: %s\n", n.label, n.text)
	}
	c.notes = nil
	clear(c.noteAt)
	return strings.TrimRight(b.String(), "\n")
}

// blocks converts line by line: headings, lists, rules, indented code and
// tables.
func (c *mdConv) blocks(s string) string {
	var b strings.Builder
	ls := strings.Split(s, "\n")
	for i := 0; i < len(ls); i++ {
		c.check()
		line := ls[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(strings.TrimLeft(trimmed, ":"), "{|"):
			j := i
			depth := 0
			for ; j < len(ls); j++ {
				c.check()
				t := strings.TrimSpace(ls[j])
				if strings.HasPrefix(strings.TrimLeft(t, ":"), "{|") {
					depth++
				} else if strings.HasPrefix(t, "|}") {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			end := min(j, len(ls)-1)
			b.WriteString(c.table(ls[i : end+1]))
			b.WriteString("\n")
			i = end
		case strings.HasPrefix(line, "="):
			if level, text, _, ok := headingLine(line); ok {
				b.WriteString(strings.Repeat("#", level) + " " + c.inline(strings.TrimSpace(text)) + "\n")
			} else {
				b.WriteString(c.inline(line) + "\n")
			}
		case strings.HasPrefix(line, "----"):
			b.WriteString("\n---\n")
			if rest := strings.TrimLeft(line, "-"); strings.TrimSpace(rest) != "" {
				b.WriteString(c.inline(rest) + "\n")
			}
		case line != "" && strings.IndexByte("*#:;", line[0]) >= 0:
			b.WriteString(c.listLine(line))
		case strings.HasPrefix(line, " ") && trimmed != "":
			var code []string
			for ; i < len(ls) && strings.HasPrefix(ls[i], " "); i++ {
				code = append(code, ls[i][1:])
			}
			i--
			b.WriteString(fence("", strings.Join(code, "\n")) + "\n")
		default:
			b.WriteString(c.inline(line) + "\n")
		}
	}
	return b.String()
}

// magicWordsMD removes the behaviour switches, which Markdown pages do
// without (their table of contents is automatic).
func magicWordsMD(s string) string {
	d := &doc{b: &budget{}, tocHere: true} // tocHere: __TOC__ leaves no mark
	return d.magicWords(s)
}

// listLine converts a list line: "*" and "#" items, ":" indents (as
// quotes at the top level, continuations inside lists), ";" terms.
func (c *mdConv) listLine(line string) string {
	n := 0
	for n < len(line) && n < maxListDepth && strings.IndexByte("*#:;", line[n]) >= 0 {
		n++
	}
	prefix, text := line[:n], strings.TrimSpace(line[n:])
	indent := ""
	for _, ch := range prefix[:n-1] {
		switch ch {
		case '#':
			indent += "   "
		case ':', ';':
			if indent == "" {
				indent = "> "
			} else {
				indent += "  "
			}
		default:
			indent += "  "
		}
	}
	switch prefix[n-1] {
	case '*':
		return indent + "- " + c.inline(text) + "\n"
	case '#':
		return indent + "1. " + c.inline(text) + "\n"
	case ';':
		term, def, ok := findColon(text)
		if !ok {
			return indent + c.inline(text) + "\n"
		}
		return indent + c.inline(strings.TrimSpace(term)) + "\n" + indent + ": " + c.inline(strings.TrimSpace(def)) + "\n"
	}
	if strings.HasPrefix(indent, ">") || indent == "" {
		return strings.Repeat("> ", strings.Count(prefix, ":")) + c.inline(text) + "\n"
	}
	return indent + c.inline(text) + "\n"
}

// table converts a table: a GFM table when it is simple (one header row
// first, one line per cell or row, no attributes on cells, nothing
// nested), HTML otherwise.
func (c *mdConv) table(lines []string) string {
	var rows [][]string
	header := false
	simple := true
	var row []string
	flush := func() {
		if row != nil {
			rows = append(rows, row)
			row = nil
		}
	}
	for k, l := range lines {
		c.check()
		t := strings.TrimSpace(l)
		switch {
		case k == 0:
			continue
		case strings.HasPrefix(t, "|}"):
			flush()
		case strings.HasPrefix(t, "|-"):
			flush()
		case strings.HasPrefix(t, "|+"):
			simple = false
		case strings.HasPrefix(t, "!"):
			if len(rows) > 0 {
				simple = false
			}
			header = true
			for _, cell := range strings.Split(strings.ReplaceAll(t[1:], "!!", "||"), "||") {
				if _, _, piped := cutCellAttrs(cell); piped {
					simple = false
				}
				row = append(row, strings.TrimSpace(cell))
			}
		case strings.HasPrefix(t, "|"):
			for _, cell := range strings.Split(t[1:], "||") {
				if _, _, piped := cutCellAttrs(cell); piped {
					simple = false
				}
				row = append(row, strings.TrimSpace(cell))
			}
		case t == "":
		default:
			simple = false // a cell on several lines
		}
	}
	flush()
	width, cells := 0, 0
	for _, r := range rows {
		width, cells = max(width, len(r)), cells+len(r)
	}
	// Every row of a Markdown table has the header's cells: rows much
	// shorter than the widest would be padded to a table many times the
	// size of the text (a wide header and many short rows), so that such
	// a table is written as HTML, as the renderer draws it.
	if simple && header && len(rows) > 0 && width*len(rows) <= 2*cells+64 {
		var b strings.Builder
		for i, r := range rows {
			c.check()
			b.WriteString("|")
			for j := 0; j < width; j++ {
				cell := ""
				if j < len(r) {
					cell = strings.ReplaceAll(c.restore(c.inline(r[j])), "|", `\|`)
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString("\n")
			if i == 0 {
				b.WriteString(strings.Repeat("| --- ", width) + "|\n")
			}
		}
		return b.String()
	}
	// Not simple: the table as HTML, its cells' text converted.
	res, err := c.r.Render(c.ctx, c.restore(strings.Join(lines, "\n")), nil)
	if err := c.ctx.Err(); err != nil {
		panic(mdStop{err})
	}
	if err != nil || res.TimedOut {
		return c.save(strings.Join(lines, "\n"))
	}
	return "\n" + c.save(render2MD(res.HTML)) + "\n"
}

// render2MD keeps rendered HTML as a Markdown HTML block: without blank
// lines inside, which would end it.
func render2MD(h string) string {
	var b strings.Builder
	for _, l := range strings.Split(h, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// inline converts the text of a line: external links, bold and italic;
// wiki links, templates and URLs stay as written, Markdown's own
// characters in the text are escaped.
func (c *mdConv) inline(s string) string {
	var b strings.Builder
	var braces *braceIndex // built at the first "{{"
	lastClose := strings.LastIndexByte(s, ']')
	for i := 0; i < len(s); {
		c.check()
		switch {
		case strings.HasPrefix(s[i:], "[["):
			if inner, ok := enclosedNested(s[i+2:], maxFileEmbed); ok {
				b.WriteString(c.save(s[i : i+4+len(inner)]))
				i += 4 + len(inner)
				continue
			}
			b.WriteString(`\[`)
			i++
		case strings.HasPrefix(s[i:], "{{"):
			if braces == nil {
				braces = newBraceIndex(s, c.check)
			}
			j := braces.end(i)
			if j < 0 {
				b.WriteString(`\{`)
				i++
				continue
			}
			b.WriteString(c.save(s[i:j]))
			i = j
		case s[i] == '[' && protocolAt(s[i+1:]) > 0:
			p := protocolAt(s[i+1:])
			ue := urlEnd(s, i+1+p)
			le := -1
			if ue <= lastClose { // else no ']' follows: not read again for each "["
				le = strings.IndexByte(s[ue:], ']')
			}
			if le < 0 {
				b.WriteString(`\[`)
				i++
				continue
			}
			url := s[i+1 : ue]
			label := strings.TrimSpace(s[ue : ue+le])
			if label == "" {
				b.WriteString(c.save("<" + url + ">"))
			} else {
				b.WriteString(c.save("[" + c.inline(label) + "](" + strings.ReplaceAll(url, ")", "%29") + ")"))
			}
			i = ue + le + 1
		case protocolAt(s[i:]) > 2 && strings.Contains(s[i:i+protocolAt(s[i:])], "://"):
			ue := urlEnd(s, i+protocolAt(s[i:]))
			b.WriteString(c.save(s[i:ue]))
			i = ue
		case s[i] == markerChar:
			if _, _, end, ok := readMarker(s, i); ok {
				b.WriteString(s[i:end])
				i = end
				continue
			}
			i++
		case strings.IndexByte("*`_\\", s[i]) >= 0:
			b.WriteByte('\\')
			b.WriteByte(s[i])
			i++
		case s[i] == '[' || s[i] == ']':
			b.WriteByte('\\')
			b.WriteByte(s[i])
			i++
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	out := b.String()
	if strings.Contains(out, "''") {
		out = tagsToMarkdown.Replace(doQuotes(out))
	}
	if len(out) > 0 && strings.IndexByte("#>+-=|", out[0]) >= 0 {
		out = `\` + out
	}
	return out
}

// braceIndex tells where the template starting at a "{{" of a text ends,
// as a scan from it would find it: braces counted in pairs ("{{" one
// deeper, "}}" one shallower), the template ending with the "}}" that
// brings the count back to zero, unclosed when none does. One pass over
// the text finds every end; a scan from each "{{" would read the rest of
// the text for each unclosed one.
//
// A scan pairs the braces of every run of them from the run's first, but
// for the run it starts in, which it pairs from where it starts. So the
// pass pairs every run from its first brace, and a start inside a run of
// m opening braces, at offset off, is the pair of the run at offset
// 2(m/2 − (m−off)/2): after the run, the scan from either is as deep, and
// the deepest of the run's pairs closes first.
type braceIndex struct {
	pairs []int32 // the offsets of the pass's "{{", in order
	ends  []int32 // the end of each one's template; -1: unclosed
	runs  []int32 // the offsets of the runs of "{" with a pair, in order
	lens  []int32 // and their lengths
}

func newBraceIndex(s string, step func()) *braceIndex {
	x := &braceIndex{}
	var open []int32 // indexes in pairs
	for j := 0; j+1 < len(s); {
		step()
		switch {
		case s[j] == '{' && s[j+1] == '{':
			if j == 0 || s[j-1] != '{' { // a run's first pair: the pass starts runs at their start
				n := 0
				for j+n < len(s) && s[j+n] == '{' {
					n++
				}
				x.runs, x.lens = append(x.runs, int32(j)), append(x.lens, int32(n))
			}
			open = append(open, int32(len(x.pairs)))
			x.pairs, x.ends = append(x.pairs, int32(j)), append(x.ends, -1)
			j += 2
		case s[j] == '}' && s[j+1] == '}':
			if len(open) > 0 {
				x.ends[open[len(open)-1]] = int32(j + 2)
				open = open[:len(open)-1]
			}
			j += 2
		default:
			j++
		}
	}
	return x
}

// end returns where the template starting at i ("{{") ends, or -1 when it
// is not closed.
func (x *braceIndex) end(i int) int {
	k, _ := slices.BinarySearch(x.runs, int32(i+1))
	if k == 0 {
		return -1
	}
	start, m := int(x.runs[k-1]), int(x.lens[k-1])
	if i+1 >= start+m {
		return -1 // no "{{" at i
	}
	pair := start + 2*(m/2-(m-(i-start))/2)
	if p, ok := slices.BinarySearch(x.pairs, int32(pair)); ok {
		return int(x.ends[p])
	}
	return -1
}

// tagsToMarkdown writes the bold and italic of doQuotes the Markdown way.
var tagsToMarkdown = strings.NewReplacer("<b>", "**", "</b>", "**", "<i>", "*", "</i>", "*")
