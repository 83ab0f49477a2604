package render

import (
	"bytes"
	"html"
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/wikid/wikid/internal/wiki"
)

// maxWikiLink bounds how far the parser looks for "]]", so that a line of
// unclosed "[[" costs linear time.
const maxWikiLink = 1024

var kindWikiLink = ast.NewNodeKind("WikiLink")

// wikiLink is [[Target#Fragment|Label]].
type wikiLink struct {
	ast.BaseInline
	Raw      string     // the whole source text, rendered literally when Invalid
	Target   wiki.Title // "" for a same-page [[#Section]]
	Fragment string     // as written, without '#'
	Label    string     // plain text
	Category bool       // [[Category:X]]: categorizes, renders nothing
	Invalid  bool
	Exists   bool // set before rendering
}

func (n *wikiLink) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiLink) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Raw": n.Raw, "Target": string(n.Target)}, nil)
}

type wikiLinkParser struct{}

func (wikiLinkParser) Trigger() []byte { return []byte{'['} }

func (wikiLinkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) < 4 || line[0] != '[' || line[1] != '[' {
		return nil
	}
	rest := line[2:]
	if len(rest) > maxWikiLink {
		rest = rest[:maxWikiLink]
	}
	end := bytes.Index(rest, []byte("]]"))
	if end < 0 {
		return nil
	}
	inner := rest[:end]
	if bytes.Contains(inner, []byte("[[")) || bytes.ContainsAny(inner, "\n\r") {
		return nil
	}
	block.Advance(2 + end + 2)
	return parseWikiLink(string(line[:2+end+2]), string(inner))
}

// parseWikiLink interprets the inside of [[…]].
func parseWikiLink(raw, inner string) *wikiLink {
	// In a GFM table cell the pipe must be written \|.
	inner = strings.ReplaceAll(inner, `\|`, "|")
	target, label, piped := strings.Cut(inner, "|")
	n := &wikiLink{Raw: raw}
	target = strings.TrimSpace(target)
	colon := strings.HasPrefix(target, ":")
	if colon {
		target = strings.TrimSpace(target[1:])
	}
	t, frag, err := wiki.ParseLink(target)
	if err != nil {
		n.Invalid = true
		return n
	}
	n.Target, n.Fragment = t, frag
	n.Category = !colon && t.Namespace() == wiki.NSCategory
	label = strings.TrimSpace(label)
	if !piped || label == "" {
		label = target
	}
	n.Label = label
	return n
}

// ExternalRel is the rel attribute of links that leave the wiki.
const externalRel = "nofollow noopener"

func renderWikiLink(w util.BufWriter, n *wikiLink) {
	if n.Invalid {
		_, _ = w.WriteString(html.EscapeString(n.Raw))
		return
	}
	if n.Category {
		return
	}
	label := html.EscapeString(n.Label)
	if n.Target == "" {
		_, _ = w.WriteString(`<a href="#`)
		_, _ = w.WriteString(html.EscapeString(escapeFragment(anchorID(n.Fragment))))
		_, _ = w.WriteString(`">`)
		_, _ = w.WriteString(label)
		_, _ = w.WriteString(`</a>`)
		return
	}
	title := html.EscapeString(string(n.Target))
	href := n.Target.URL()
	if n.Exists || n.Target.IsSpecial() {
		if n.Fragment != "" {
			href += "#" + escapeFragment(anchorID(n.Fragment))
		}
		_, _ = w.WriteString(`<a href="`)
		_, _ = w.WriteString(html.EscapeString(href))
		_, _ = w.WriteString(`" title="`)
		_, _ = w.WriteString(title)
		_, _ = w.WriteString(`">`)
	} else {
		_, _ = w.WriteString(`<a href="`)
		_, _ = w.WriteString(html.EscapeString(href))
		_, _ = w.WriteString(`?action=edit&amp;redlink=1" class="new" title="`)
		_, _ = w.WriteString(title)
		_, _ = w.WriteString(` (page does not exist)">`)
	}
	_, _ = w.WriteString(label)
	_, _ = w.WriteString(`</a>`)
}

// escapeFragment percent-encodes an id for use after '#' in a URL.
func escapeFragment(id string) string {
	return (&url.URL{Fragment: id}).EscapedFragment()
}
