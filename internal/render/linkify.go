package render

import (
	"bytes"
	"regexp"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// fastLinkify is GFM's autolink extension with a cheap test in front:
// goldmark's linkify parser runs at every space and scans each word for an
// e-mail address, about a sixth of a render. Here a word is handed to it
// only if it could start a link: http:, https:, ftp:, www., or an '@'
// before the next space. The links found are exactly the same.
type fastLinkify struct{}

func (fastLinkify) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(
		util.Prioritized(&linkifyGate{inner: newLinkify()}, 999),
	))
}

func newLinkify() parser.InlineParser {
	return extension.NewLinkifyParser(
		extension.WithLinkifyURLRegexp(linkifyURL),
		extension.WithLinkifyWWWRegexp(linkifyWWW),
	)
}

// schemeLinkify is fastLinkify for a source with URLs but no '@' (so no
// e-mail address) and no backslash. Linkify runs at every space, at '*',
// '_', '~' and '(' no other parser took, and wherever goldmark starts
// reading afresh (a line's start, the end of a node a parser returned);
// and goldmark cuts the text wherever an inline parser runs, a third of
// the parse of plain prose. This runs at the ':' of http:, https: and
// ftp: and at the '.' of www. instead, looks back to where linkify would
// have run for that URL, and runs linkify from there, which finds the
// same links (FuzzNoAutolinks, TestSchemeLinkifyPieces). A backslash
// would not do: goldmark carries an escape over a node linkify returns at
// a space, and over a line's end.
type schemeLinkify struct{}

func (schemeLinkify) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(
		util.Prioritized(schemeParser{inner: newLinkify()}, 999),
	))
}

type schemeParser struct{ inner parser.InlineParser }

func (schemeParser) Trigger() []byte { return []byte{':', '.'} }

func (p schemeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if inLinkLabel(pc) {
		return nil
	}
	l, cur := block.Position()
	src := block.Source()
	at := cur.Start // the ':' or the '.'
	n := schemeBefore(src, at, false)
	lines := parent.Lines()
	if n == 0 || l >= lines.Len() {
		return nil
	}
	start := at - n // the scheme's first byte
	// The scheme is in the text goldmark has just added (no other parser
	// runs at its letters).
	last, ok := parent.LastChild().(*ast.Text)
	if !ok || last.Segment.Stop != at || last.Segment.Start > start {
		return nil
	}
	// Where linkify ran for it: at the scheme, where goldmark read afresh
	// (the line's start, or a node's end: a text node starts there, or
	// the text a parser returned ends there), or at the character
	// before, if it is one that linkify takes and no parser before it
	// took (it is in the text; nothing escapes it, the source has no
	// backslash). A tab runs linkify too, which does not take it: no
	// link starts after one.
	line := lines.At(l)
	from := start
	if start != line.Start && start != last.Segment.Start && !textEndsAt(pc, start) {
		from = start - 1
		if from < last.Segment.Start {
			return nil
		}
		switch src[from] {
		case ' ', '*', '_', '~', '(':
		default:
			return nil
		}
	}
	// The text from there on goes back to the reader, for linkify.
	saved := last.Segment
	removed := from == last.Segment.Start
	if removed {
		parent.RemoveChild(parent, last)
	} else {
		last.Segment = last.Segment.WithStop(from)
	}
	seg := text.NewSegment(from, cur.Stop)
	if from == line.Start {
		seg.Padding = line.Padding
	}
	block.SetPosition(l, seg)
	link := p.inner.Parse(parent, block, pc)
	if link == nil {
		if removed {
			parent.AppendChild(parent, last)
		} else {
			last.Segment = saved
		}
		block.SetPosition(l, cur)
		return nil
	}
	// Where goldmark places a node linkify returns when it runs there.
	link.(interface{ SetPos(int) }).SetPos(from)
	return link
}

// textEndKey holds where the last text node an inline parser returned
// ends (codeSpanParser's backticks that open nothing): goldmark reads
// afresh there, and the text after it joins that node. Every inline
// parser of schemeLinkify's renderer that returns an *ast.Text does so
// through returnText. One position is enough: schemeParser asks about the
// text just before it, and goldmark reads forward.
var textEndKey = parser.NewContextKey()

// returnText is ast.NewTextSegment(s) for an inline parser to return.
func returnText(pc parser.Context, s text.Segment) *ast.Text {
	pc.Set(textEndKey, s.Stop)
	return ast.NewTextSegment(s)
}

func textEndsAt(pc parser.Context, pos int) bool {
	end, ok := pc.Get(textEndKey).(int)
	return ok && end == pos
}

// linkifyURL and linkifyWWW are goldmark's expressions for links written
// without angle brackets, with letters outside ASCII allowed in the domain
// and after it: GFM ends such a link at white space or "<" only, and
// goldmark's own cut "https://ko.wikipedia.org/wiki/서울" after "/wiki/".
var (
	linkifyURL = regexp.MustCompile(`^(?:http|https|ftp)://[-a-zA-Z0-9@:%._\+~#=\x{80}-\x{10FFFF}]{1,256}\.[a-z]+(?::\d+)?(?:[/#?][-a-zA-Z0-9@:%_+.~#$!?&/=\(\);,'">\^{}\[\]` + "`" + `\x{80}-\x{10FFFF}]*)?`)
	linkifyWWW = regexp.MustCompile(`^www\.[-a-zA-Z0-9@:%._\+~#=\x{80}-\x{10FFFF}]{1,256}\.[a-z]+(?:[/#?][-a-zA-Z0-9@:%_\+.~#!?&/=\(\);,'">\^{}\[\]` + "`" + `\x{80}-\x{10FFFF}]*)?`)
)

type linkifyGate struct{ inner parser.InlineParser }

func (g *linkifyGate) Trigger() []byte { return g.inner.Trigger() }

func (g *linkifyGate) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	// goldmark's linkify asks goldmark's link parser, replaced by Wikid's
	// (links.go), whether this is link text: no links in links.
	if inLinkLabel(pc) {
		return nil
	}
	line, _ := block.PeekLine()
	if !mayLink(line) {
		return nil
	}
	return g.inner.Parse(parent, block, pc)
}

// mayLink reports whether the word at the start of line (after one trigger
// character) could be a URL or an e-mail address for linkify.
func mayLink(line []byte) bool {
	if len(line) > 0 {
		switch line[0] {
		case ' ', '*', '_', '~', '(':
			line = line[1:]
		}
	}
	if len(line) == 0 {
		return false
	}
	switch line[0] | 0x20 {
	case 'h', 'f', 'w':
		if hasPrefixFold(line, "http:") || hasPrefixFold(line, "https:") || hasPrefixFold(line, "ftp:") || hasPrefixFold(line, "www.") {
			return true
		}
	}
	// An e-mail address is at most 254 bytes: looking further for its '@'
	// would make a long line without spaces quadratic.
	if len(line) > 254 {
		line = line[:254]
	}
	for _, c := range line {
		switch c {
		case '@':
			return true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return false
}

// autolinks says how src is parsed: with fastLinkify when it has an '@'
// (an e-mail address) or a backslash (see schemeLinkify), with
// schemeLinkify when it has http:, https:, ftp: or www. (in any case),
// and without linkify when it has none (mayLink holds nowhere in it).
func autolinks(src []byte) autolinkKind {
	if bytes.IndexByte(src, '@') >= 0 || bytes.IndexByte(src, '\\') >= 0 {
		return autolinkAll
	}
	for _, c := range []byte{':', '.'} {
		for i := 0; ; i++ {
			j := bytes.IndexByte(src[i:], c)
			if j < 0 {
				break
			}
			if i += j; schemeBefore(src, i, true) > 0 {
				return autolinkURL
			}
		}
	}
	return autolinkNone
}

// schemeBefore returns the length of the scheme that ends src[:at] when
// src[at] is the character after it: http, https or ftp before a ':', www
// before a '.'; 0 when there is none. fold compares in any case.
func schemeBefore(src []byte, at int, fold bool) int {
	schemes := []string{"http", "https", "ftp"}
	if src[at] == '.' {
		schemes = []string{"www"}
	} else if src[at] != ':' {
		return 0
	}
	for _, s := range schemes {
		if at >= len(s) && (string(src[at-len(s):at]) == s || fold && bytes.EqualFold(src[at-len(s):at], []byte(s))) {
			return len(s)
		}
	}
	return 0
}

type autolinkKind int

const (
	autolinkNone autolinkKind = iota
	autolinkURL
	autolinkAll
)

func hasPrefixFold(b []byte, p string) bool {
	return len(b) >= len(p) && bytes.EqualFold(b[:len(p)], []byte(p))
}
