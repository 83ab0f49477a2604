package template

import (
	"context"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// Loader returns the source text of page t (its latest revision) and
// whether it exists.
type Loader func(ctx context.Context, t wiki.Title) (text string, ok bool, err error)

// Page is what the magic words know about the page being rendered, and
// the title rules of its wiki.
type Page struct {
	Title    wiki.Title // PAGENAME, FULLPAGENAME, NAMESPACE
	SiteName string     // SITENAME
	// Rules make template names and redirect targets titles: with
	// capital_links false, {{foo}} is Template:foo.
	Rules wiki.TitleRules
	// Wikitext selects the preprocessor of MediaWiki's markup (see
	// wikitext.go): backticks and fences are text, and <nowiki>, <pre>,
	// <syntaxhighlight>, <source> and <math> elements are copied as
	// written. False is the Markdown preprocessor.
	Wikitext bool
}

// Limits bound one expansion; a zero field takes its default.
type Limits struct {
	Depth      int // templates within templates, default 40
	PostExpand int // bytes produced by templates, parameters and parser functions, default 2 MiB
	Nodes      int // calls, parameters and their arguments visited (and, apart, built by the preprocessor), default 300,000
	Templates  int // distinct pages loaded, default 500
	Nesting    int // braces within braces in one text (arguments of arguments…), default 100
	// Expr is the bytes of #expr and #ifexpr expressions evaluated, each
	// distinct expression once (and 16 bytes more for each), default 1 MiB.
	Expr int
}

// Default limits.
const (
	DefaultDepth      = 40
	DefaultPostExpand = 2 << 20
	DefaultNodes      = 300_000
	DefaultTemplates  = 500
	DefaultNesting    = 100
	DefaultExpr       = 1 << 20
)

func (l Limits) withDefaults() Limits {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.Depth, DefaultDepth)
	set(&l.PostExpand, DefaultPostExpand)
	set(&l.Nodes, DefaultNodes)
	set(&l.Templates, DefaultTemplates)
	set(&l.Nesting, DefaultNesting)
	set(&l.Expr, DefaultExpr)
	return l
}

// Result is an expanded page.
type Result struct {
	Text string // the expanded source
	// Templates lists every page transcluded, directly or through other
	// templates, existing or not (and both a redirect and its target),
	// without repeats, in order of first use.
	Templates []wiki.Title
	Errors    int // error boxes emitted: loops, limits, expression errors
	// DefaultSort is the page's default category sort key, as the last
	// {{DEFAULTSORT:key}} expanded set it ("" for none).
	DefaultSort string
}

// Has reports whether src may contain anything to expand: "{{" or one of
// the tags the expander removes (nowiki, noinclude, includeonly,
// onlyinclude). It does not allocate; when it is false, Expand would
// return src unchanged.
func Has(src string) bool {
	if strings.Contains(src, "{{") {
		return true
	}
	for i := strings.IndexByte(src, '<'); i >= 0; {
		if _, _, _, _, ok := readTag(src, i); ok {
			return true
		}
		k := strings.IndexByte(src[i+1:], '<')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// Expand expands the templates in src, the text of page p. keep reports
// a {{…}} to leave exactly as written (the renderer's own macros); it gets
// the text between the braces. The error is ctx's or load's; whatever an
// author writes becomes text, an error box at worst.
func Expand(ctx context.Context, src string, p Page, load Loader, keep func(inner string) bool, lim Limits) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	e := newExpander(ctx, src, p, load, keep, lim.withDefaults())
	text, err := e.run(src)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: text, Templates: e.templates, Errors: e.errors, DefaultSort: e.sortKey}, nil
}
