package template

import (
	"math"
	"strings"
)

// The preprocessor turns a text into a tree of literal text, template calls
// ({{…}}) and parameters ({{{…}}}) in one left-to-right pass, the way
// MediaWiki's does: runs of opening braces and brackets go on a stack, a run
// of closing characters matches the top of the stack only, and whatever is
// still open at the end of the text turns back into literal text. Every byte
// is looked at a bounded number of times, so a page of nothing but "{{" or
// "{{a|" parses in linear time.
//
// Memory is bounded too, to a small multiple of the pieces and parts the
// parse creates, which count against a budget:
//
//   - A brace piece holds source offsets only (where its parts and its
//     first '=' are) as long as it is plain: literal text with nothing
//     dropped or rewritten. It makes nodes of its text when it closes, or
//     when a call, a parameter or a tag makes it not plain; a piece that
//     never closes stays the source it spans.
//   - The nodes of the open pieces that are not plain are kept on one
//     stack, and their parts on another, rather than in slices of their
//     own. A piece that closes moves its parts and their nodes to arenas
//     of the tree, which a call refers to by 32-bit indexes: a node is 32
//     bytes and a part 16, and no array is copied as the tree grows.
//   - Links are only tracked so that their pipes and braces are text:
//     their text stays in the literal run.
//   - Past the budget, the parser marks the place with a limitNode and
//     the rest of the text is one literal node. The place is before the
//     outermost piece still open, if any: the pieces that were open are
//     dropped, and the limit's error box stands between whole calls.

type nodeKind uint8

const (
	textNode  nodeKind = iota // literal text
	callNode                  // {{…}}: a template, a magic word or a parser function
	argNode                   // {{{…}}}: a parameter of the template being expanded
	limitNode                 // where the parse ran out of budget: the expansion stops
)

type node struct {
	// text is the literal text of a textNode and the source of a callNode
	// or argNode, braces included (what a call becomes when it is kept or
	// left unexpanded).
	text string
	// parts are the parts of a call or parameter in the tree's arena
	// (tree.parts): the title (or parameter name) first, then one per '|'.
	parts span
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
	nodes span // in the tree's arena of nodes (tree.kids)
	// eq is the index in nodes of the "=" text node that splits a named
	// argument into name and value; -1 when the part has none. Only the
	// first '=' outside nested braces and links counts.
	eq int32
}

// span is n consecutive elements of an arena, from first in chunk.
type span struct{ chunk, first, n int32 }

// tree is a parsed text: its top-level nodes, in chunks, and the arenas
// of the parts of its calls and of the nodes of those parts.
type tree struct {
	root  [][]node
	parts arena[part]
	kids  arena[node]
	cut   bool // the parse ran out of budget: the root ends with a limitNode
}

// partsOf returns the parts of call or parameter n.
func (t *tree) partsOf(n *node) []part { return t.parts.get(n.parts) }

// nodes returns the nodes of part p, name and value those of a named
// argument.
func (t *tree) nodes(p *part) []node { return t.kids.get(p.nodes) }
func (t *tree) name(p *part) []node  { return t.nodes(p)[:p.eq] }
func (t *tree) value(p *part) []node { return t.nodes(p)[p.eq+1:] }

// maxChunk is the size of the chunks of arenas and of a tree's root, in
// elements, once they have grown.
const maxChunk = 4096

// add appends n to the root's last chunk, or to a new one twice as large,
// up to maxChunk nodes: no chunk is copied as the tree grows (one array
// grown by doubling would allocate about three times the size of a large
// tree).
func (t *tree) add(n node) {
	r := &t.root
	if k := len(*r); k == 0 || len((*r)[k-1]) == cap((*r)[k-1]) {
		size := 8
		if k > 0 {
			size = min(maxChunk, 2*cap((*r)[k-1]))
		}
		*r = append(*r, make([]node, 0, size))
	}
	c := &(*r)[len(*r)-1]
	*c = append(*c, n)
}

// arena holds elements in chunks that are never copied; consecutive
// elements taken together are in one chunk.
type arena[T any] struct {
	chunks [][]T
	cur    int // the chunk being filled by small takes
}

// take returns room for n consecutive elements: in the chunk being
// filled, in a new one twice as large (up to maxChunk), or, for many, in
// a chunk of their own.
func (a *arena[T]) take(n int) (span, []T) {
	if n == 0 {
		return span{}, nil
	}
	if n > maxChunk/4 {
		a.chunks = append(a.chunks, make([]T, n))
		return span{chunk: int32(len(a.chunks) - 1), n: int32(n)}, a.chunks[len(a.chunks)-1]
	}
	if len(a.chunks) == 0 || cap(a.chunks[a.cur])-len(a.chunks[a.cur]) < n {
		size := 16
		if len(a.chunks) > 0 {
			size = min(maxChunk, 2*cap(a.chunks[a.cur]))
		}
		a.chunks = append(a.chunks, make([]T, 0, max(size, n)))
		a.cur = len(a.chunks) - 1
	}
	c := &a.chunks[a.cur]
	first := len(*c)
	*c = (*c)[:first+n]
	return span{chunk: int32(a.cur), first: int32(first), n: int32(n)}, (*c)[first : first+n : first+n]
}

func (a *arena[T]) get(s span) []T {
	if s.n == 0 {
		return nil
	}
	return a.chunks[s.chunk][s.first : s.first+s.n : s.first+s.n]
}

// piece is an open run of '{' or '[' on the parser's stack. Offsets and
// indexes are 32 bits (parse does not parse longer texts).
type piece struct {
	start int32 // offset of the run's first character
	count int32 // how many of the run are still unmatched
	// Brace pieces only: the index in p.bounds of its first part, and in
	// the stack of the brace piece below it (-1: none).
	parts, below int32
	open         byte // '{' or '['
	// plain is set while the piece holds nothing but literal text: it has
	// no nodes then, only the offsets in its parts' bounds.
	plain bool
}

// bound is a part of an open brace piece.
type bound struct {
	node int32 // index in p.nodes of its first node
	src  int32 // offset of its text, after the '|' or the opening braces
	// eq is the '=' that makes it a named argument, -1 when none: its
	// offset while the piece is plain, then the index of its "=" node.
	eq int32
}

type parser struct {
	src     string
	include bool // the text is transcluded, not viewed as a page itself
	// wikitext: the text is MediaWiki markup, not Markdown (wikitext.go)
	wikitext bool
	tree     tree
	// nodes holds the nodes of the open brace pieces that are not plain,
	// in stack order: each piece is opened in the last part of the one
	// below it, so the innermost one's current part is always the tail.
	nodes  []node
	bounds []bound // the parts of the open brace pieces, in stack order
	stack  []piece
	brace  int32 // index in stack of the innermost brace piece, -1 when none
	lit    int   // start of the literal text not yet added to a node
	left   int   // pieces and parts the parse may still create
	cut    int   // where the budget ran out, -1 while it has not
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
// otherwise <includeonly> content is dropped. wikitext selects MediaWiki's
// literal text (wikitext.go) instead of Markdown's code. budget is how many pieces
// (brace runs, and links while they are open) and parts the parse may
// create; parse returns the tree and how many it used.
func parse(src string, include, wikitext bool, budget int) (tree, int) {
	if include {
		src = onlyInclude(src)
	}
	if len(src) > math.MaxInt32 {
		// Offsets are 32 bits; pages are far smaller than this.
		return tree{root: [][]node{{{kind: textNode, text: src}}}}, 0
	}
	p := &parser{src: src, include: include, wikitext: wikitext, brace: -1, left: budget, cut: -1}
	s := src
	for i := 0; i < len(s) && p.cut < 0; {
		if (i == 0 || s[i-1] == '\n') && !wikitext {
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
			if top := p.braceTop(); top != nil {
				if !p.charge(i) {
					break
				}
				p.flush(i)
				p.bounds = append(grow(p.bounds), bound{node: int32(len(p.nodes)), src: int32(i + 1), eq: -1})
				p.lit = i + 1
			}
			i++
		case '=':
			if top := p.braceTop(); top != nil && len(p.bounds)-int(top.parts) > 1 && p.bounds[len(p.bounds)-1].eq < 0 {
				b := &p.bounds[len(p.bounds)-1]
				if top.plain {
					b.eq = int32(i)
				} else {
					p.flush(i)
					b.eq = int32(len(p.nodes))
					p.add(node{kind: textNode, text: "="})
					p.lit = i + 1
				}
			}
			i++
		case '<':
			i = p.tag(i)
		case '`':
			if wikitext {
				i++
				break
			}
			i = p.codeSpan(i)
		default:
			i++
			for i < len(s) && !special[s[i]] {
				i++
			}
		}
	}
	if p.cut < 0 {
		p.flush(len(s))
		p.finish()
		return p.tree, budget - p.left
	}
	if p.brace >= 0 {
		// The text before the outermost brace piece is in the root.
		k := p.brace
		for p.stack[k].below >= 0 {
			k = p.stack[k].below
		}
		p.cut = int(p.stack[k].start)
	} else {
		p.flush(p.cut)
	}
	p.tree.add(node{kind: limitNode})
	p.tree.add(node{kind: textNode, text: s[p.cut:]})
	p.tree.cut = true
	return p.tree, budget - p.left
}

// charge counts a piece or a part, found at i, against the budget. When
// there is none left it marks the cut there and returns false.
func (p *parser) charge(i int) bool {
	if p.left <= 0 {
		p.cut = i
		return false
	}
	p.left--
	return true
}

// braceTop is the innermost open piece when it is a brace piece (whose
// pipes and equals signs split parts); the pointer is valid until the next
// push.
func (p *parser) braceTop() *piece {
	if len(p.stack) == 0 || p.stack[len(p.stack)-1].open != '{' {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

// add appends n where the parser stands: the current part of the innermost
// open brace piece, or the root. A piece that is plain gets no text nodes
// (its parts' offsets stand for them); anything else must be preceded by a
// call of unplain.
func (p *parser) add(n node) {
	if p.brace < 0 {
		p.tree.add(n)
		return
	}
	if !p.stack[p.brace].plain {
		p.nodes = append(grow(p.nodes), n)
	}
}

// addNode adds n, which is no literal text of the source at i: the piece
// it goes into is no longer plain.
func (p *parser) addNode(n node, i int) {
	p.unplain(i)
	p.add(n)
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

// unplain makes nodes of the text of the innermost brace piece, up to i,
// if it is plain: something that is not literal text is added there.
func (p *parser) unplain(i int) {
	if p.brace < 0 || !p.stack[p.brace].plain {
		return
	}
	pc := &p.stack[p.brace]
	pc.plain = false
	bs := p.bounds[pc.parts:]
	for j := range bs {
		b := &bs[j]
		end := i
		if j+1 < len(bs) {
			end = int(bs[j+1].src) - 1 // the '|'
		}
		b.node = int32(len(p.nodes))
		if eq := int(b.eq); eq >= 0 {
			p.addText(p.src[b.src:eq])
			b.eq = int32(len(p.nodes))
			p.add(node{kind: textNode, text: "="})
			p.addText(p.src[eq+1 : end])
		} else {
			p.addText(p.src[b.src:end])
		}
	}
	p.lit = i
}

// grow makes room for one more element by doubling: append grows large
// slices by a quarter, which copies a deep stack (a page of unclosed
// braces) many times over.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	return append(make([]T, 0, max(16, 2*len(s))), s...)
}

// pushBrace opens a plain brace piece of count braces at start, with an
// empty title part.
func (p *parser) pushBrace(start, count int) {
	p.stack = append(grow(p.stack), piece{
		open: '{', start: int32(start), count: int32(count), plain: true,
		parts: int32(len(p.bounds)), below: p.brace,
	})
	p.brace = int32(len(p.stack) - 1)
	p.bounds = append(grow(p.bounds), bound{node: int32(len(p.nodes)), src: int32(start + count), eq: -1})
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
	if !p.charge(i) {
		return i
	}
	if c == '[' {
		// A link stays literal text: it is on the stack only so that the
		// pipes and braces in it are text too.
		p.stack = append(grow(p.stack), piece{open: c, start: int32(i), count: int32(n)})
		return i + n
	}
	p.flush(i)
	p.pushBrace(i, n)
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
	top := &p.stack[len(p.stack)-1]
	if (c == '}') != (top.open == '{') {
		return i + 1
	}
	if top.open == '[' {
		// Two brackets close a link; what is left of the run stays open.
		if runLengthMax(s, i, c, 2) < 2 {
			return i + 1
		}
		if top.count -= 2; top.count < 2 {
			p.stack = p.stack[:len(p.stack)-1]
			p.left++ // a closed link leaves nothing behind
		}
		return i + 2
	}
	// Three braces make a parameter, two a call: no more than that is
	// matched at once, so no more is counted.
	m := runLengthMax(s, i, c, min(int(top.count), 3))
	if m < 2 {
		return i + m
	}
	rest := int(top.count) - m
	if rest >= 2 && !p.charge(i) {
		return i
	}
	p.flush(i)
	pc := *top
	p.stack = p.stack[:len(p.stack)-1]
	p.brace = pc.below
	start := int(pc.start) + rest
	end := i + m
	kind := callNode
	if m == 3 {
		kind = argNode
	}
	n := node{kind: kind, text: s[start:end], plain: pc.plain, parts: p.takeParts(pc, i)}
	switch {
	case rest >= 2:
		p.pushBrace(int(pc.start), rest)
	case rest == 1 && (p.brace < 0 || !p.stack[p.brace].plain):
		p.addText(s[pc.start : pc.start+1])
	}
	// The brace left over, if any, is in the text up to start.
	p.addNode(n, start)
	p.lit = end
	return end
}

// takeParts moves the parts of brace piece pc, just taken off the stack,
// which ends at i, to the tree's arenas: from its bounds if it is plain,
// else with its nodes taken off p.nodes.
func (p *parser) takeParts(pc piece, i int) span {
	bs := p.bounds[pc.parts:]
	p.bounds = p.bounds[:pc.parts]
	ps, parts := p.tree.parts.take(len(bs))
	if pc.plain {
		// One text node per part, or name, "=" and value; no empty ones.
		partEnd := func(j int) int {
			if j+1 < len(bs) {
				return int(bs[j+1].src) - 1 // the '|'
			}
			return i
		}
		n := 0
		for j, b := range bs {
			if eq := int(b.eq); eq >= 0 {
				n += 1 + nonEmpty(int(b.src), eq) + nonEmpty(eq+1, partEnd(j))
			} else {
				n += nonEmpty(int(b.src), partEnd(j))
			}
		}
		ks, kids := p.tree.kids.take(n)
		k := 0
		text := func(s string) {
			if s != "" {
				kids[k] = node{kind: textNode, text: s}
				k++
			}
		}
		for j, b := range bs {
			from, eq := k, int32(-1)
			if e := int(b.eq); e >= 0 {
				text(p.src[b.src:e])
				eq = int32(k - from)
				text("=")
				text(p.src[e+1 : partEnd(j)])
			} else {
				text(p.src[b.src:partEnd(j)])
			}
			parts[j] = part{nodes: span{chunk: ks.chunk, first: ks.first + int32(from), n: int32(k - from)}, eq: eq}
		}
		return ps
	}
	base := int(bs[0].node)
	ks, kids := p.tree.kids.take(len(p.nodes) - base)
	copy(kids, p.nodes[base:])
	for j, b := range bs {
		from, to := int(b.node)-base, len(kids)
		if j+1 < len(bs) {
			to = int(bs[j+1].node) - base
		}
		eq := int32(-1)
		if b.eq >= 0 {
			eq = b.eq - b.node
		}
		parts[j] = part{nodes: span{chunk: ks.chunk, first: ks.first + int32(from), n: int32(to - from)}, eq: eq}
	}
	clear(p.nodes[base:]) // no stale references past the end
	p.nodes = p.nodes[:base]
	return ps
}

func nonEmpty(from, to int) int {
	if to > from {
		return 1
	}
	return 0
}

// finish adds to the root every brace piece still open, turned back into
// literal text (links are text already). The pieces are nested, each
// opened in the last part of the one below it, so their contents follow
// one another in stack order: appending them in that order (rather than
// folding each into its parent) keeps a deep stack linear. A plain piece
// is the source from its braces to the next piece, and consecutive ones
// are one text node.
func (p *parser) finish() {
	if p.brace < 0 {
		return
	}
	var braces []int32 // the open brace pieces, innermost first
	for k := p.brace; k >= 0; k = p.stack[k].below {
		braces = append(braces, k)
	}
	text := -1 // start of the source of plain pieces not yet added
	for j := len(braces) - 1; j >= 0; j-- {
		pc := &p.stack[braces[j]]
		if pc.plain {
			if text < 0 {
				text = int(pc.start)
			}
			continue
		}
		if text >= 0 {
			p.tree.add(node{kind: textNode, text: p.src[text:pc.start]})
			text = -1
		}
		endNodes, endParts := len(p.nodes), len(p.bounds)
		if j > 0 {
			next := &p.stack[braces[j-1]]
			endParts = int(next.parts)
			endNodes = int(p.bounds[endParts].node)
		}
		p.tree.add(node{kind: textNode, text: p.src[pc.start : pc.start+pc.count]})
		for k := int(pc.parts); k < endParts; k++ {
			if k > int(pc.parts) {
				p.tree.add(node{kind: textNode, text: "|"})
			}
			to := endNodes
			if k+1 < endParts {
				to = int(p.bounds[k+1].node)
			}
			for _, n := range p.nodes[p.bounds[k].node:to] {
				p.tree.add(n)
			}
		}
	}
	if text >= 0 {
		p.tree.add(node{kind: textNode, text: p.src[text:]})
	}
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
		if p.wikitext {
			return p.comment(i)
		}
		if !p.noClose["-->"] {
			if k := strings.Index(s[i+4:], "-->"); k >= 0 {
				return i + 4 + k + 3
			}
			p.markNoClose("-->")
		}
		return i + 1
	}
	if p.wikitext {
		if end, ok := p.verbatim(i); ok {
			return end // it stays in the pending literal run
		}
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
				p.unplain(i)
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
	p.unplain(i)
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
