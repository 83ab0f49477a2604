package template

import "strings"

// In wikitext mode (Page.Wikitext) the preprocessor reads MediaWiki's
// markup: backticks and fences are ordinary text, and the elements whose
// content MediaWiki's preprocessor leaves alone are copied as written,
// tags included, for the wikitext renderer to show: <nowiki>, <pre>,
// <syntaxhighlight>, <source> and <math>. HTML comments are removed, as
// MediaWiki's preprocessor removes them (see comment). <nowiki/> is copied too, since it separates markup (a link
// from its trail). An element that is never closed is no element: its
// start tag is text and what follows is expanded.

// verbatimTags are the elements copied as written in wikitext mode.
var verbatimTags = []string{"nowiki", "pre", "syntaxhighlight", "source", "math"}

// maxStartTag bounds how far a start tag's attributes may run, so that
// many unterminated "<pre" cost linear time.
const maxStartTag = 1024

// verbatim handles a start tag of one of verbatimTags at s[i] == '<' and
// returns the offset past the element (past the tag when it closes
// itself); ok is false when there is none.
func (p *parser) verbatim(i int) (end int, ok bool) {
	s := p.src
	name := ""
	for _, t := range verbatimTags {
		if len(s)-i-1 >= len(t) && strings.EqualFold(s[i+1:i+1+len(t)], t) {
			name = t
			break
		}
	}
	if name == "" {
		return 0, false
	}
	j := i + 1 + len(name)
	if j >= len(s) || (s[j] != '>' && s[j] != '/' && s[j] != ' ' && s[j] != '\t' && s[j] != '\n') {
		return 0, false // <prefix…> is another tag
	}
	limit := min(len(s), j+maxStartTag)
	k := strings.IndexByte(s[j:limit], '>')
	if k < 0 {
		return 0, false
	}
	end = j + k + 1
	if s[end-2] == '/' {
		return end, true
	}
	key := "</" + name
	if p.noClose[key] {
		return 0, false
	}
	if cs, ok := findCloseName(s, end, name); ok {
		return cs, true
	}
	p.markNoClose(key)
	return 0, false
}

// findCloseName finds the end of </name …> (any case) from i.
func findCloseName(s string, i int, name string) (int, bool) {
	for {
		k := strings.Index(s[i:], "</")
		if k < 0 {
			return 0, false
		}
		start := i + k
		j := start + 2
		if len(s)-j >= len(name) && strings.EqualFold(s[j:j+len(name)], name) {
			j += len(name)
			for j < len(s) && j-start < 64 && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
				j++
			}
			if j < len(s) && s[j] == '>' {
				return j + 1, true
			}
		}
		i = start + 2
	}
}

// lineStart puts a template's output that begins a list item, an indent,
// a definition or a table (written to o from start) on a line of its own
// in wikitext mode, as MediaWiki does: a newline goes before it when it
// does not follow one already.
func (e *expander) lineStart(o *out, start int) {
	if !e.page.Wikitext || start == 0 || start >= len(o.b) || o.b[start-1] == '\n' {
		return
	}
	switch c := o.b[start]; {
	case c == '*' || c == '#' || c == ':' || c == ';', c == '{' && start+1 < len(o.b) && o.b[start+1] == '|':
		o.b = append(o.b, 0)
		copy(o.b[start+1:], o.b[start:])
		o.b[start] = '\n'
	}
}

// comment removes the HTML comment at s[i] ("<!--") in wikitext mode and
// returns where the text goes on: an unclosed comment runs to the end of
// the text, and one that stands alone on its line (white space around it,
// not on the first line) takes the line with it, as in MediaWiki. A line
// that holds a template call besides the comment stays, empty once the
// call expands to nothing.
func (p *parser) comment(i int) int {
	s := p.src
	end := len(s)
	if !p.noClose["-->"] {
		if k := strings.Index(s[i+4:], "-->"); k >= 0 {
			end = i + 4 + k + 3
		} else {
			p.markNoClose("-->")
		}
	}
	start, ws := i, i
	for ws > p.lit && (s[ws-1] == ' ' || s[ws-1] == '\t') {
		ws--
	}
	e := end
	for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
		e++
	}
	if ws > 0 && ws >= p.lit && s[ws-1] == '\n' && e < len(s) && s[e] == '\n' {
		start, end = ws, e+1
	}
	p.drop(start, end)
	return end
}
