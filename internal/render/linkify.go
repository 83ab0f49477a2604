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
		util.Prioritized(&linkifyGate{inner: extension.NewLinkifyParser(
			extension.WithLinkifyURLRegexp(linkifyURL),
			extension.WithLinkifyWWWRegexp(linkifyWWW),
		)}, 999),
	))
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

// mayAutolink reports whether mayLink could hold anywhere in src: whether
// it has an '@', or http:, https:, ftp: or www. in any case. A source
// without is parsed without linkify (Renderer.noAutolinks).
func mayAutolink(src []byte) bool {
	if bytes.IndexByte(src, '@') >= 0 {
		return true
	}
	for i := 0; ; i++ {
		j := bytes.IndexByte(src[i:], ':')
		if j < 0 {
			break
		}
		i += j
		if hasSuffixFold(src[:i], "http") || hasSuffixFold(src[:i], "https") || hasSuffixFold(src[:i], "ftp") {
			return true
		}
	}
	for i := 0; ; i++ {
		j := bytes.IndexByte(src[i:], '.')
		if j < 0 {
			return false
		}
		i += j
		if hasSuffixFold(src[:i], "www") {
			return true
		}
	}
}

func hasSuffixFold(b []byte, s string) bool {
	return len(b) >= len(s) && bytes.EqualFold(b[len(b)-len(s):], []byte(s))
}

func hasPrefixFold(b []byte, p string) bool {
	return len(b) >= len(p) && bytes.EqualFold(b[:len(p)], []byte(p))
}
