package wikitext

import (
	"strings"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// doc is one parse of a page: its text after the passes that precede the
// block pass, and what the markers in it stand for.
type doc struct {
	r        *Renderer
	b        *budget
	redirect wiki.Title
	body     string // the page's text, block pass done, with markers

	marks []mark
	links []*link
	heads []*heading
	files []*fileEmbed

	categories []wiki.Title
	inCategory map[wiki.Title]bool // categories, to find one at once
	sortKeys   map[wiki.Title]string

	cite      cite
	autoNum   int               // numbered external links: [http://x]
	sanitized map[string]string // the author's start tags as the sanitizer leaves them

	noTOC, forceTOC, tocHere, noEditSection bool
}

// link is an internal link: its start tag is written once existence is
// known. Target is "" for a link to a section of this page.
type link struct {
	target   wiki.Title
	fragment string
}

// heading is a section heading; its id is made from its text when the
// page is rendered.
type heading struct {
	level int
}

// parse runs every pass but the rendering of markers. It panics with
// errTimeout or stopRender when b runs out.
func (r *Renderer) parse(src string, b *budget) *doc {
	d := &doc{r: r, b: b}
	src = clean(src)
	d.redirect, src = render.SplitRedirect(src, r.rules)
	s := d.strip(src, true)
	s = d.inline(s, true)
	s += d.pendingRefs()
	d.body = d.blocks(s)
	return d
}

// clean makes newlines LF and replaces the characters the parser uses
// for itself (markers) and NUL.
func clean(s string) string {
	if !strings.ContainsAny(s, "\r\x00\x7f") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return cleaner.Replace(s)
}

var cleaner = strings.NewReplacer("\r", "\n", "\x00", "\uFFFD", "\x7f", "\uFFFD")

// inline runs the passes between the strip pass and the block pass on s:
// the author's tags, then (when page, for the page's own text rather than
// a reference's) tables, rules, magic words and headings; then links,
// bold and italic, external links and bare URLs.
func (d *doc) inline(s string, page bool) string {
	s = d.tags(s)
	s = d.tables(s)
	if page {
		s = d.rules(s)
		s = d.magicWords(s)
		s = d.headings(s)
	}
	s = d.internalLinks(s)
	s = d.quotes(s)
	s = d.externalLinks(s)
	s = d.bareURLs(s)
	return s
}

// linkSet is the parse's link set.
func (d *doc) linkSet() wiki.LinkSet {
	ls := wiki.LinkSet{Redirect: d.redirect}
	seen := map[wiki.Title]bool{}
	add := func(t wiki.Title) {
		if t != "" && !t.IsSpecial() && !seen[t] {
			seen[t] = true
			ls.Links = append(ls.Links, t)
		}
	}
	add(d.redirect)
	shownLinks, shownMarks := d.shown()
	seenFile := map[wiki.Title]bool{}
	for i, m := range d.marks {
		if m.file == nil || !shownMarks[i] {
			continue
		}
		for _, t := range m.file.links {
			add(t)
		}
		if t := m.file.title; !seenFile[t] {
			seenFile[t] = true
			ls.Files = append(ls.Files, t)
		}
	}
	for i, l := range d.links {
		if shownLinks[i] {
			add(l.target)
		}
	}
	ls.Categories = d.categories
	ls.SortKeys = d.sortKeys
	return ls
}

// rules turns a line starting with four or more hyphens into a rule; the
// rest of the line stays.
func (d *doc) rules(s string) string {
	if !strings.Contains(s, "----") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for line := range lines(s) {
		if strings.HasPrefix(line, "----") {
			n := 4
			for n < len(line) && line[n] == '-' {
				n++
			}
			b.WriteString("<hr>")
			line = line[n:]
		}
		b.WriteString(line)
	}
	return b.String()
}

// lines yields the lines of s, each with its '\n' (the last may have none).
func lines(s string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				yield(s)
				return
			}
			if !yield(s[:i+1]) {
				return
			}
			s = s[i+1:]
		}
	}
}

// magicWordNames are the behaviour switches MediaWiki knows (any case);
// they are removed from the text, and the table of contents ones obeyed.
var magicWordNames = []string{
	"NOTOC", "FORCETOC", "TOC", "NOEDITSECTION", "NEWSECTIONLINK", "NONEWSECTIONLINK",
	"NOGALLERY", "HIDDENCAT", "EXPECTUNUSEDCATEGORY", "NOCONTENTCONVERT", "NOCC",
	"NOTITLECONVERT", "NOTC", "INDEX", "NOINDEX", "STATICREDIRECT", "DISAMBIG",
	"NOGLOBAL", "EXPECTUNUSEDTEMPLATE", "ARCHIVEDTALK", "NOTALK",
}

func (d *doc) magicWords(s string) string {
	if !strings.Contains(s, "__") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i+4 <= len(s); {
		k := strings.Index(s[i:], "__")
		if k < 0 {
			break
		}
		i += k
		matched := ""
		for _, w := range magicWordNames {
			if len(s)-i-2 >= len(w)+2 && strings.EqualFold(s[i+2:i+2+len(w)], w) && s[i+2+len(w)] == '_' && s[i+3+len(w)] == '_' {
				matched = w
				break
			}
		}
		if matched == "" {
			i++
			continue
		}
		b.WriteString(s[last:i])
		switch matched {
		case "NOTOC":
			d.noTOC = true
		case "FORCETOC":
			d.forceTOC = true
		case "TOC":
			if !d.tocHere {
				d.tocHere = true
				b.WriteString(d.addMark(mark{kind: kindBlock, toc: true}))
			}
		case "NOEDITSECTION":
			d.noEditSection = true
		}
		i += len(matched) + 4
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// headings turns "== text ==" lines into headings: the level is the
// smaller of the runs of '=' at both ends (at most 6), the rest is text.
func (d *doc) headings(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/32)
	for line := range lines(s) {
		if line[0] != '=' {
			b.WriteString(line)
			continue
		}
		d.b.check()
		body := strings.TrimRight(line, " \t\n")
		lead, trail := 0, 0
		for lead < len(body) && lead < 6 && body[lead] == '=' {
			lead++
		}
		for trail < len(body) && trail < 6 && body[len(body)-1-trail] == '=' {
			trail++
		}
		level := min(lead, trail)
		if len(body)-2*level < 1 {
			level = (len(body) - 1) / 2
		}
		if level < 1 {
			b.WriteString(line)
			continue
		}
		d.heads = append(d.heads, &heading{level: level})
		n := len(d.heads) - 1
		b.WriteString(marker(kindHeadOpen, n))
		b.WriteString(strings.TrimSpace(body[level : len(body)-level]))
		b.WriteString(marker(kindHeadClose, n))
		b.WriteString(line[len(body):])
	}
	return b.String()
}

// shown reports which links and marks the page shows: those whose markers
// the writer reaches from the body, as it expands them. A note never
// listed (of a group with no <references> tag) shows none of its links,
// and the link set holds only what the page shows.
func (d *doc) shown() (links, marks []bool) {
	links, marks = make([]bool, len(d.links)), make([]bool, len(d.marks))
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		for i := 0; i < len(s); i++ {
			if s[i] != markerChar {
				continue
			}
			kind, n, end, ok := readMarker(s, i)
			if !ok {
				continue
			}
			i = end - 1
			if depth > maxMarkDepth {
				continue
			}
			switch kind {
			case kindLinkOpen:
				if n < len(links) {
					links[n] = true
				}
			case kindInline, kindBlock:
				if n >= len(marks) || marks[n] {
					continue
				}
				marks[n] = true
				m := &d.marks[n]
				if m.refs != nil {
					for _, r := range m.refs.refs {
						walk(r.fullText(), depth+1)
					}
				} else if m.file == nil && !m.toc && m.code == "" && m.lang == "" {
					walk(m.html, depth+1)
				}
			}
		}
	}
	walk(d.body, 0)
	return links, marks
}
