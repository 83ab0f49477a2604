package render

import (
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/wikid/wikid/internal/wiki"
)

// maxMacro bounds how far the parser looks for "}}".
const maxMacro = 512

// Dynamic macros render as placeholders that the browser fills in, so that
// the page itself stays cacheable while the lists change.
const (
	MacroRecentChanges = "recentchanges"
	MacroPageCount     = "pagecount"
	MacroAllPages      = "allpages"
)

type macroSpec struct {
	Name      string // one of the Macro* constants
	Prefix    string // allpages: prefix=…
	HasPrefix bool
}

var (
	kindMacro      = ast.NewNodeKind("Macro")
	kindMacroBlock = ast.NewNodeKind("MacroBlock")
)

// macro is {{Name|param=value}} inside a line of text.
type macro struct {
	ast.BaseInline
	spec macroSpec
}

func (n *macro) Kind() ast.NodeKind { return kindMacro }
func (n *macro) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Name": n.spec.Name}, nil)
}

// macroBlock is a macro that stood alone in its paragraph.
type macroBlock struct {
	ast.BaseBlock
	spec macroSpec
}

func (n *macroBlock) Kind() ast.NodeKind { return kindMacroBlock }
func (n *macroBlock) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Name": n.spec.Name}, nil)
}

type macroParser struct{}

func (macroParser) Trigger() []byte { return []byte{'{'} }

func (macroParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	inner, ok := enclosed(line, "{{", "}}", maxMacro)
	if !ok {
		return nil
	}
	spec, ok := parseMacro(string(inner))
	if !ok {
		return nil
	}
	block.Advance(len(inner) + 4)
	return &macro{spec: spec}
}

// IsMacro reports whether inner, the text inside {{…}}, is one of the
// dynamic macros: template expansion leaves those to the renderer.
func IsMacro(inner string) bool {
	_, ok := parseMacro(inner)
	return ok
}

// parseMacro interprets the inside of {{…}}; unknown macros are not macros.
func parseMacro(inner string) (macroSpec, bool) {
	name, params, _ := strings.Cut(inner, "|")
	var s macroSpec
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "recentchanges":
		s.Name = MacroRecentChanges
	case "pagecount":
		s.Name = MacroPageCount
	case "allpages":
		s.Name = MacroAllPages
	default:
		return s, false
	}
	if params == "" {
		return s, !strings.Contains(inner, "|")
	}
	if s.Name != MacroAllPages {
		return s, false
	}
	key, value, ok := strings.Cut(params, "=")
	if !ok || strings.ToLower(strings.TrimSpace(key)) != "prefix" || strings.ContainsAny(value, "|{}\n") {
		return s, false
	}
	s.Prefix, s.HasPrefix = strings.TrimSpace(value), true
	return s, true
}

// isBlock reports whether the macro renders as a <div> when it stands alone.
func (s macroSpec) isBlock() bool { return s.Name != MacroPageCount }

// renderMacro writes the placeholder of macro s; rules make its prefix a
// title.
func renderMacro(w util.BufWriter, s macroSpec, block bool, rules wiki.TitleRules) {
	tag := "span"
	if block && s.isBlock() {
		tag = "div"
	}
	_, _ = w.WriteString("<" + tag + ` class="wikid-macro" data-macro="` + s.Name + `"`)
	href, text := "/wiki/Special:AllPages", "All pages"
	switch s.Name {
	case MacroRecentChanges:
		href, text = "/wiki/Special:RecentChanges", "Recent changes"
	case MacroPageCount:
		text = "page count"
	case MacroAllPages:
		if s.HasPrefix && s.Prefix != "" {
			// The prefix is written as the server's canonical URLs have it
			// (a title key), so that neither the link nor the script's
			// request costs a redirect.
			key := strings.ReplaceAll(s.Prefix, " ", "_")
			if t, err := rules.Parse(s.Prefix); err == nil {
				key = t.Key()
			}
			// The policy allows data-prefix on <div> only.
			if tag == "div" {
				_, _ = w.WriteString(` data-prefix="`)
				canonEscapeString(w, key)
				_ = w.WriteByte('"')
			}
			href = "/wiki/Special:AllPages?prefix=" + url.QueryEscape(key)
			text = "Pages starting with " + s.Prefix
		}
	}
	_ = w.WriteByte('>')
	if writeAnchor(w, "", href, "", false) {
		canonEscapeString(w, text)
		_, _ = w.WriteString("</a>")
	} else {
		canonEscapeString(w, text)
	}
	_, _ = w.WriteString("</" + tag + ">")
	if tag == "div" {
		_ = w.WriteByte('\n')
	}
}
