package render

import (
	"bytes"
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
	Exists   bool   // set before rendering
	open     string // the <a> start tag, set before rendering
	// SortKey is a category link's sort key ([[Category:X|key]]), trimmed:
	// "" when none is given, " " when only white space is (MediaWiki's
	// idiom for a category's main article, listed first).
	SortKey string
}

func (n *wikiLink) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiLink) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Raw": n.Raw, "Target": string(n.Target)}, nil)
}

// wikiLinkParser parses [[…]], resolving targets by the wiki's title rules.
type wikiLinkParser struct{ rules wiki.TitleRules }

func (wikiLinkParser) Trigger() []byte { return []byte{'['} }

func (p wikiLinkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	inner, ok := enclosed(line, "[[", "]]", maxWikiLink)
	if ok && !bytes.Contains(inner, []byte("[[")) && !bytes.ContainsAny(inner, "\n\r") {
		block.Advance(len(inner) + 4)
		raw := string(line[:len(inner)+4])
		if n, ok := parseFileLink(raw, string(inner), p.rules); ok {
			return n
		}
		return parseWikiLink(raw, string(inner), p.rules)
	}
	// A file's caption may hold links, and be longer than other links:
	// [[File:X.png|thumb|A [[Y]] b]].
	if !hasFilePrefix(line) {
		return nil
	}
	if inner, ok = enclosedNested(line, maxFileEmbed); !ok {
		return nil
	}
	n, ok := parseFileLink(string(line[:len(inner)+4]), string(inner), p.rules)
	if e, embed := n.(*fileEmbed); !ok || !embed || e.media {
		return nil // a Media: link's label holds no links
	}
	block.Advance(len(inner) + 4)
	return n
}

// enclosed returns what stands between open at the start of line and the
// first close after it, looking at most max bytes ahead (so that many
// unclosed openers stay linear).
func enclosed(line []byte, open, close string, max int) ([]byte, bool) {
	if len(line) < 4 || !bytes.HasPrefix(line, []byte(open)) {
		return nil, false
	}
	rest := line[2:]
	if len(rest) > max {
		rest = rest[:max]
	}
	end := bytes.Index(rest, []byte(close))
	if end < 0 {
		return nil, false
	}
	return rest[:end], true
}

// parseWikiLink interprets the inside of [[…]], its target by rules.
func parseWikiLink(raw, inner string, rules wiki.TitleRules) *wikiLink {
	// In a GFM table cell the pipe may be written \| (wikiLinkCells keeps
	// an unescaped one in its cell too).
	inner = strings.ReplaceAll(inner, `\|`, "|")
	target, label, piped := strings.Cut(inner, "|")
	n := &wikiLink{Raw: raw}
	target = strings.TrimSpace(target)
	colon := strings.HasPrefix(target, ":")
	if colon {
		target = strings.TrimSpace(target[1:])
	}
	t, frag, err := rules.ParseLink(target)
	if err != nil {
		n.Invalid = true
		return n
	}
	n.Target, n.Fragment = t, frag
	n.Category = !colon && t.Namespace() == wiki.NSCategory
	if n.Category && piped && label != "" {
		n.SortKey = strings.TrimSpace(label)
		if n.SortKey == "" {
			n.SortKey = " "
		}
	}
	label = strings.TrimSpace(label)
	if !piped || label == "" {
		label = target
	}
	n.Label = label
	return n
}

// ExternalRel is the rel attribute of links that leave the wiki.
const externalRel = "nofollow noopener"

// wikiLinkOpen returns the <a> start tag of a valid, non-category link
// (empty when the sanitizer would drop it) once n.Exists is known.
func wikiLinkOpen(n *wikiLink) string {
	var b bytes.Buffer
	w := bufWriter{&b}
	if n.Target == "" {
		writeAnchor(w, "", "#"+escapeFragment(fragmentID(n.Fragment)), "", false)
		return b.String()
	}
	href := n.Target.URL()
	var attrs strings.Builder
	if n.Exists || n.Target.IsSpecial() {
		if n.Fragment != "" {
			href += "#" + escapeFragment(fragmentID(n.Fragment))
		}
		attrs.WriteString(` title="`)
		canonEscapeString(stringsWriter{&attrs}, string(n.Target))
		attrs.WriteString(`"`)
		writeAnchor(w, "", href, attrs.String(), false)
	} else {
		attrs.WriteString(` title="`)
		canonEscapeString(stringsWriter{&attrs}, string(n.Target))
		attrs.WriteString(` (page does not exist)"`)
		writeAnchor(w, "", href+"?action=edit&redlink=1", ` class="new"`+attrs.String(), false)
	}
	return b.String()
}

func renderWikiLink(w util.BufWriter, n *wikiLink) {
	if n.Invalid {
		canonEscapeString(w, n.Raw)
		return
	}
	if n.Category {
		return
	}
	_, _ = w.WriteString(n.open)
	canonEscapeString(w, n.Label)
	if n.open != "" {
		_, _ = w.WriteString(`</a>`)
	}
}

// escapeFragment percent-encodes an id for use after '#' in a URL.
func escapeFragment(id string) string {
	return (&url.URL{Fragment: id}).EscapedFragment()
}
