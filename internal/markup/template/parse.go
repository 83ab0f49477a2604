package template

import (
	"slices"
	"strings"
)

// The preprocessor turns a text into a tree of literal text, template calls
// ({{…}}) and parameters ({{{…}}}) in one left-to-right pass, the way
// MediaWiki's does: runs of opening braces and brackets go on a stack, a run
// of closing characters matches the top of the stack only, and whatever is
// still open at the end of the text turns back into literal text. Every byte
// is looked at a bounded number of times, so a page of nothing but "{{" or
// "{{a|" parses in linear time.

type nodeKind uint8

const (
	textNode nodeKind = iota // literal text
	callNode                 // {{…}}: a template, a magic word or a parser function
	argNode                  // {{{…}}}: a parameter of the template being expanded
)

type node struct {
	// text is the literal text of a textNode and the source of a callNode
	// or argNode, braces included (what a call becomes when it is kept or
	// left unexpanded).
	text  string
	parts []part // the title (or parameter name) first, then one per '|'
	// plain is set on a call or parameter whose parts are literal text and
	// whose source had nothing dropped or rewritten (no tags, no nowiki):
	// text[2:len-2] (or [3:len-3]) is then its inside exactly as written.
	plain bool
	// rewritten is set on a textNode whose text is not the source as
	// written (nowiki content): it is charged like template output.
	rewritten bool
	kind      nodeKind
}

// inner is the text between the braces of a plain call.
func (n *node) inner() string { return n.text[2 : len(n.text)-2] }

type part struct {
	nodes []node
	// eq is the index in nodes of the "=" text node that splits a named
	// argument into name and value; -1 when the part has none. Only the
	// first '=' outside nested braces and links counts.
	eq int
}

func (p *part) name() []node  { return p.nodes[:p.eq] }
func (p *part) value() []node { return p.nodes[p.eq+1:] }

// piece is an open run of '{' or '[' on the parser's stack.
type piece struct {
	parts  []part
	count  int  // how many of the run are still unmatched
	start  int  // offset of the run's first character
	edits  int  // the parser's edits when the piece was opened
	open   byte // '{' or '['
	nested bool // a call, a parameter or a rewritten text was added
}

type parser struct {
	src     string
	include bool // the text is transcluded, not viewed as a page itself
	root    []node
	stack   []piece // values, not pointers: one allocation less per brace
	lit     int     // start of the literal text not yet added to a node
	// edits counts the places where the parser dropped or rewrote source
	// text (tags, nowiki): a piece whose count did not change is plain.
	edits int
	// noClose remembers the tags (and "-->") with no closing tag after the
	// current position, so that many unclosed openers stay linear.
	noClose map[string]bool
	spans   spanIndex
}

// special marks the bytes the preprocessor stops at; every other byte is
// part of a literal run.
var special = func() (t [256]bool) {
	for _, c := range "\n{}[]|=<`" {
		t[c] = true
	}
	return t
}()

// parse builds the tree of src. include selects the transcluded view:
// <noinclude> content is dropped and only <onlyinclude> content kept;
// otherwise <includeonly> content is dropped.
func parse(src string, include bool) []node {
	if include {
		src = onlyInclude(src)
	}
	p := &parser{src: src, include: include}
	s := src
	for i := 0; i < len(s); {
		if i == 0 || s[i-1] == '\n' {
			if end := fence(s, i); end >= 0 {
				i = end // code is literal text: it stays in the pending run
				continue
			}
		}
		switch s[i] {
		case '{', '[':
			i = p.openRun(i)
		case '}', ']':
			i = p.closeRun(i)
		case '|':
			if top := p.top(); top != nil && top.open == '{' {
				p.flush(i)
				top.parts = append(top.parts, part{eq: -1})
				p.lit = i + 1
			}
			i++
		case '=':
			if top := p.top(); top != nil && top.open == '{' && len(top.parts) > 1 && top.parts[len(top.parts)-1].eq < 0 {
				p.flush(i)
				cur := &top.parts[len(top.parts)-1]
				cur.eq = len(cur.nodes)
				cur.nodes = append(cur.nodes, node{kind: textNode, text: "="})
				p.lit = i + 1
			}
			i++
		case '<':
			i = p.tag(i)
		case '`':
			i = p.codeSpan(i)
		default:
			i++
			for i < len(s) && !special[s[i]] {
				i++
			}
		}
	}
	p.flush(len(s))
	return p.finish()
}

// top is the innermost open piece; the pointer is valid until the next
// push.
func (p *parser) top() *piece {
	if len(p.stack) == 0 {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

// add appends n where the parser stands: the current part of the innermost
// open piece, or the root.
func (p *parser) add(n node) {
	top := p.top()
	if top == nil {
		p.root = append(p.root, n)
		return
	}
	if n.kind != textNode {
		top.nested = true
	}
	cur := &top.parts[len(top.parts)-1]
	cur.nodes = append(cur.nodes, n)
}

func (p *parser) addText(s string) {
	if s != "" {
		p.add(node{kind: textNode, text: s})
	}
}

// flush adds the pending literal text up to i.
func (p *parser) flush(i int) {
	if i > p.lit {
		p.addText(p.src[p.lit:i])
	}
	p.lit = i
}

// push grows the stack by doubling: append grows large slices by a
// quarter, which copies a deep stack (a page of unclosed braces) many
// times over.
func (p *parser) push(pc piece) {
	if len(p.stack) == cap(p.stack) {
		p.stack = slices.Grow(p.stack, max(16, len(p.stack)))
	}
	p.stack = append(p.stack, pc)
}

// newParts is the parts of a new piece: for braces, room for a title and
// one argument; a link has one part.
func newParts(open byte) []part {
	n := 2
	if open == '[' {
		n = 1
	}
	ps := make([]part, 1, n)
	ps[0].eq = -1
	return ps
}

func runLength(s string, i int, c byte) int { return runLengthMax(s, i, c, len(s)) }

// runLengthMax is runLength counting at most max: a long run of closing
// braces is matched a few at a time, and must not be rescanned each time.
func runLengthMax(s string, i int, c byte, max int) int {
	n := 0
	for i+n < len(s) && n < max && s[i+n] == c {
		n++
	}
	return n
}

// openRun handles a run of '{' or '[' at i; a single one is literal.
func (p *parser) openRun(i int) int {
	c := p.src[i]
	n := runLength(p.src, i, c)
	if n < 2 {
		return i + 1
	}
	p.flush(i)
	p.push(piece{open: c, count: n, start: i, parts: newParts(c), edits: p.edits})
	p.lit = i + n
	return i + n
}

// closeRun handles a run of '}' or ']' at i: it closes the innermost piece
// if that piece was opened by the matching character, and is literal text
// otherwise.
func (p *parser) closeRun(i int) int {
	s := p.src
	c := s[i]
	if len(p.stack) == 0 {
		return i + 1
	}
	top := p.stack[len(p.stack)-1]
	if (c == '}') != (top.open == '{') {
		return i + 1
	}
	// Three braces make a parameter, two a call, two brackets a link: no
	// more than that is matched at once, so no more is counted.
	most := 3
	if top.open == '[' {
		most = 2
	}
	m := runLengthMax(s, i, c, min(top.count, most))
	if m < 2 {
		return i + m
	}
	p.flush(i)
	p.stack = p.stack[:len(p.stack)-1]
	rawStart := top.start + top.count - m
	end := i + m
	plain := !top.nested && top.edits == p.edits
	var elem []node
	if top.open == '[' {
		// Links are only tracked so that their pipes do not split
		// arguments; they stay literal text.
		if plain {
			elem = []node{{kind: textNode, text: s[rawStart:end]}}
		} else {
			elem = append(elem, node{kind: textNode, text: s[rawStart : rawStart+2]})
			elem = append(elem, top.parts[0].nodes...)
			elem = append(elem, node{kind: textNode, text: s[i:end]})
		}
	} else {
		kind := callNode
		if m == 3 {
			kind = argNode
		}
		elem = []node{{kind: kind, text: s[rawStart:end], plain: plain, parts: top.parts}}
	}
	if rest := top.count - m; rest >= 2 {
		p.push(piece{open: top.open, count: rest, start: top.start, parts: newParts(top.open), edits: p.edits})
	} else if rest == 1 {
		p.addText(s[top.start : top.start+1])
	}
	for _, n := range elem {
		p.add(n)
	}
	p.lit = end
	return end
}

// finish returns the tree, with every piece still open turned back into
// literal text. The pieces are nested, each opened in the last part of the
// one below it, so their contents follow one another in stack order:
// appending them in that order (rather than folding each into its parent)
// keeps a deep stack linear.
func (p *parser) finish() []node {
	n := len(p.root)
	for k := range p.stack {
		if p.plainTail(k) {
			n++
			continue
		}
		for _, pt := range p.stack[k].parts {
			n += 1 + len(pt.nodes)
		}
	}
	out := make([]node, 0, n)
	out = append(out, p.root...)
	for k, pc := range p.stack {
		if p.plainTail(k) {
			out = append(out, node{kind: textNode, text: p.src[pc.start:p.tailEnd(k)]})
			continue
		}
		out = append(out, node{kind: textNode, text: p.src[pc.start : pc.start+pc.count]})
		for j, pt := range pc.parts {
			if j > 0 {
				out = append(out, node{kind: textNode, text: "|"})
			}
			out = append(out, pt.nodes...)
		}
	}
	p.stack = nil
	return out
}

// tailEnd is where the text of unclosed piece k ends: where the next one
// opens, or the end of the text.
func (p *parser) tailEnd(k int) int {
	if k+1 < len(p.stack) {
		return p.stack[k+1].start
	}
	return len(p.src)
}

// plainTail reports whether unclosed piece k holds only text with nothing
// rewritten: it is then the source from its braces to tailEnd, one node.
func (p *parser) plainTail(k int) bool {
	edits := p.edits
	if k+1 < len(p.stack) {
		edits = p.stack[k+1].edits
	}
	return !p.stack[k].nested && edits == p.stack[k].edits
}

// Tags the preprocessor knows; any other '<' is literal text.
const (
	tagNowiki      = "nowiki"
	tagNoinclude   = "noinclude"
	tagIncludeonly = "includeonly"
	tagOnlyinclude = "onlyinclude"
)

var tagNames = []string{tagNowiki, tagNoinclude, tagIncludeonly, tagOnlyinclude}

// readTag recognizes <name>, <name/>, <name /> and </name> (any case, white
// space allowed before '>') for the tags in tagNames at s[i] == '<'.
func readTag(s string, i int) (name string, closing, self bool, end int, ok bool) {
	j := i + 1
	if j < len(s) && s[j] == '/' {
		closing = true
		j++
	}
	for _, t := range tagNames {
		if len(s)-j >= len(t) && strings.EqualFold(s[j:j+len(t)], t) {
			name = t
			break
		}
	}
	if name == "" {
		return "", false, false, 0, false
	}
	j += len(name)
	for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') && j-i < 64 {
		j++
	}
	if !closing && j < len(s) && s[j] == '/' {
		self = true
		j++
	}
	if j >= len(s) || s[j] != '>' {
		return "", false, false, 0, false
	}
	return name, closing, self, j + 1, true
}

// findClose finds </name> (any case, white space before '>') from i.
func findClose(s string, i int, name string) (start, end int, ok bool) {
	for {
		k := strings.Index(s[i:], "</")
		if k < 0 {
			return 0, 0, false
		}
		start = i + k
		if n, closing, _, e, ok := readTag(s, start); ok && closing && n == name {
			return start, e, true
		}
		i = start + 2
	}
}

// tag handles '<' at i: HTML comments are copied as they are (never
// expanded); the include tags and nowiki act as package doc describes.
func (p *parser) tag(i int) int {
	s := p.src
	if strings.HasPrefix(s[i:], "<!--") {
		if !p.noClose["-->"] {
			if k := strings.Index(s[i+4:], "-->"); k >= 0 {
				return i + 4 + k + 3
			}
			p.markNoClose("-->")
		}
		return i + 1
	}
	name, closing, self, end, ok := readTag(s, i)
	if !ok {
		return i + 1
	}
	if closing || self {
		if name == tagNowiki && closing {
			return i + 1 // a stray </nowiki> is text
		}
		p.drop(i, end)
		return end
	}
	switch name {
	case tagNowiki:
		if !p.noClose[name] {
			if cs, ce, ok := findClose(s, end, name); ok {
				p.flush(i)
				p.edits++
				if t := escapeNowiki(s[end:cs]); t != "" {
					p.add(node{kind: textNode, text: t, rewritten: true})
				}
				p.lit = ce
				return ce
			}
			p.markNoClose(name)
		}
		return i + 1
	case tagNoinclude, tagIncludeonly:
		if (name == tagNoinclude) == p.include {
			// Dropped with its content, to the closing tag or, if there is
			// none, to the end of the text (as MediaWiki).
			ce := len(s)
			if _, e, ok := findClose(s, end, name); ok {
				ce = e
			}
			p.drop(i, ce)
			return ce
		}
	}
	p.drop(i, end) // the tag goes, its content stays
	return end
}

// drop removes s[i:end] from the output.
func (p *parser) drop(i, end int) {
	p.flush(i)
	p.edits++
	p.lit = end
}

func (p *parser) markNoClose(name string) {
	if p.noClose == nil {
		p.noClose = make(map[string]bool)
	}
	p.noClose[name] = true
}

// escapeNowiki returns the content of <nowiki> with the characters that
// would start template, link or HTML syntax written as character
// references, which the Markdown renderer shows literally.
func escapeNowiki(s string) string {
	if !strings.ContainsAny(s, "{}|[]<") {
		return s
	}
	return nowikiReplacer.Replace(s)
}

var nowikiReplacer = strings.NewReplacer(
	"{", "&#123;", "}", "&#125;", "|", "&#124;", "[", "&#91;", "]", "&#93;", "<", "&lt;")

// onlyInclude returns the content of the <onlyinclude> sections of s when
// it has any (the transcluded text is then only that), else s.
func onlyInclude(s string) string {
	const open, close = "<onlyinclude>", "</onlyinclude>"
	if !strings.Contains(s, open) || !strings.Contains(s, close) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		s = s[i+len(open):]
		j := strings.Index(s, close)
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:j])
		s = s[j+len(close):]
	}
	return b.String()
}
