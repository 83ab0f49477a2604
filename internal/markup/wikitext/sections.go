package wikitext

import (
	"context"
	"strings"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// Sections are numbered as MediaWiki numbers them: the "== h ==" lines of
// the page's own text, in order, from 1, section 0 being the text before
// the first. A heading inside a comment, an extension tag's content
// (<nowiki>, <pre>, <ref>…) or a template call's braces is none.

// Section marks, as the Markdown renderer writes them (see
// render.MarkSections): private-use characters around a nonce and the
// section number, at the start of the heading's text.
const (
	markOpen  = "\uE000"
	markSep   = "\uE001"
	markClose = "\uE002"
)

// section is a heading line found in the source.
type section struct {
	render.Section
	mark int // where the heading's text starts: the mark goes there
}

// Sections returns the sections of src: element i is section i, element 0
// the text before the first heading (possibly empty). A source too large
// to read within the render time limit is an error.
func (r *Renderer) Sections(src string) (secs []render.Section, err error) {
	ss, err := r.sections(src)
	if err != nil {
		return nil, err
	}
	secs = make([]render.Section, len(ss))
	for i, s := range ss {
		secs[i] = s.Section
	}
	return secs, nil
}

func (r *Renderer) sections(src string) (secs []section, err error) {
	defer func() {
		if timedOut(recover()) {
			secs, err = nil, wiki.Errorf(wiki.KindTooLarge, "the page is too large or complex to find its sections in time; edit the whole page instead")
		}
	}()
	b, done := r.start(context.Background())
	defer done()
	hidden := hiddenRanges(src, append([]string{"ref", "references", "gallery", "includeonly", "noinclude"}, literalTags...))
	secs = []section{{Section: render.Section{Index: 0}}}
	depth := 0 // template braces open
	k := 0     // hidden ranges before the line
	for start := 0; start < len(src); {
		b.check()
		end := strings.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		for k < len(hidden) && hidden[k][1] <= start {
			k++
		}
		inHidden := k < len(hidden) && hidden[k][0] <= start
		if depth == 0 && !inHidden && start < len(src) && src[start] == '=' {
			if level, text, textStart, ok := headingLine(src[start:end]); ok {
				d := &doc{r: r, b: b}
				plain := strings.TrimSpace(strings.ReplaceAll(d.plainOf(d.headingInline(d.strip(clean(text), false))), "\n", " "))
				secs = append(secs, section{
					Section: render.Section{Index: len(secs), Level: level, Heading: plain, Start: start},
					mark:    start + textStart,
				})
			}
		}
		// Braces outside hidden text, for the next lines.
		for i := start; i < end; i++ {
			if render.InRanges(hidden, i) {
				continue
			}
			if i+1 < end && src[i] == '{' && src[i+1] == '{' {
				depth++
				i++
			} else if i+1 < end && src[i] == '}' && src[i+1] == '}' && depth > 0 {
				depth--
				i++
			}
		}
		start = end + 1
	}
	render.SetSectionEnds(secs, len(src), func(s *section) *render.Section { return &s.Section })
	return secs, nil
}

// headingLine reads a heading line as the heading pass does (a trailing
// comment allowed): its level, its text and where the text starts. A
// comment the line does not close runs on past it (to a later line, or to
// the end of the text, as the first pass reads it): the line ends where
// it starts.
func headingLine(line string) (level int, text string, textStart int, ok bool) {
	body := strings.TrimRight(line, " \t\r")
	for {
		i := strings.LastIndex(body, "<!--")
		if i < 0 || (strings.Contains(body[i+4:], "-->") && !strings.HasSuffix(body, "-->")) {
			break
		}
		body = strings.TrimRight(body[:i], " \t")
	}
	lead, trail := 0, 0
	for lead < len(body) && lead < 6 && body[lead] == '=' {
		lead++
	}
	for trail < len(body) && trail < 6 && body[len(body)-1-trail] == '=' {
		trail++
	}
	level = min(lead, trail)
	if len(body)-2*level < 1 {
		level = (len(body) - 1) / 2
	}
	if level < 1 {
		return 0, "", 0, false
	}
	return level, body[level : len(body)-level], level, true
}

// MarkSections returns src with the mark of nonce (letters and digits) at
// the start of each section heading's text (see Sections).
func (r *Renderer) MarkSections(src, nonce string) (string, error) {
	secs, err := r.sections(src)
	if err != nil {
		return "", err
	}
	if len(secs) == 1 {
		return src, nil
	}
	var b strings.Builder
	b.Grow(len(src) + (len(secs)-1)*(len(nonce)+16))
	last := 0
	for _, s := range secs[1:] {
		b.WriteString(src[last:s.mark])
		b.WriteString(markOpen + nonce + markSep + itoa(s.Index) + markClose)
		last = s.mark
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d [20]byte
	i := len(d)
	for n > 0 {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return string(d[i:])
}

// literalTags are the elements whose text shows as written: no signature
// is expanded there.
var literalTags = []string{"nowiki", "pre", "code", "syntaxhighlight", "source", "math"}

// hiddenRanges returns the ranges of src taken by comments and by the
// elements names (start tag to end tag, any case; to the end of src when
// a comment is not closed; an element not closed is no element), sorted.
func hiddenRanges(src string, names []string) [][2]int {
	var rs [][2]int
	noClose := map[string]bool{}
	for i := 0; i < len(src); {
		k := strings.IndexByte(src[i:], '<')
		if k < 0 {
			break
		}
		i += k
		if strings.HasPrefix(src[i:], "<!--") {
			end := len(src)
			if e := strings.Index(src[i+4:], "-->"); e >= 0 {
				end = i + 4 + e + 3
			}
			rs = append(rs, [2]int{i, end})
			i = end
			continue
		}
		name, _, self, end, ok := startTag(src, i, names)
		if !ok || self || noClose[name] {
			i++
			continue
		}
		_, ce, ok := closeTag(src, end, name)
		if !ok {
			noClose[name] = true
			i++
			continue
		}
		rs = append(rs, [2]int{i, ce})
		i = ce
	}
	return rs
}

// ExpandTildes replaces each run of three to five tildes in src outside
// comments and <nowiki>, <pre>, <code>, <syntaxhighlight>, <source> and
// <math> by sig(n), n the number of tildes: signatures ~~~ (name), ~~~~
// (name and time) and ~~~~~ (time). A longer run is read from its start as
// fives, then a four or a three; one or two tildes left over stay.
func (r *Renderer) ExpandTildes(src string, sig func(n int) string) (string, error) {
	if !strings.Contains(src, "~~~") {
		return src, nil
	}
	lit := hiddenRanges(src, literalTags)
	return render.ReplaceTildes(src, func(i int) bool { return render.InRanges(lit, i) }, sig), nil
}

// headingInline runs the inline passes on a heading's text as they run on
// it in the page, where it stands inside a line: no table starts there.
func (d *doc) headingInline(s string) string {
	s = d.tags(s)
	s = d.internalLinks(s)
	s = d.quotes(s)
	s = d.externalLinks(s)
	return d.bareURLs(s)
}
