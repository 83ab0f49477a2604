// Package wikitext renders MediaWiki's markup (wikitext) into the same
// sanitized HTML the Markdown renderer (package render) writes, and
// extracts the links a page makes.
//
// The renderer follows the passes of MediaWiki's parser (Parser.php), each
// a linear scan of the text: extension tags and comments are taken out
// first and replaced by markers (nowiki, pre, syntaxhighlight, math, ref,
// references); then the author's HTML tags are checked against the allowed
// list, tables, horizontal rules, magic words, headings, internal links,
// bold and italic, external links and bare URLs are turned into HTML; then
// the block pass makes paragraphs, lists and preformatted text, and the
// markers are replaced by their HTML once the link targets and files have
// been looked up (once each per render). The page is balanced by an HTML
// parse and passed through render.Sanitize, so its HTML is a fixpoint of
// the sanitizer whatever the author wrote. Templates are expanded before
// (package template, in its wikitext mode).
package wikitext

import (
	"context"
	"errors"
	"time"

	"github.com/wikid/wikid/internal/render"
	"github.com/wikid/wikid/internal/wiki"
)

// Version changes whenever the HTML output for the same source changes.
// Renders are stored by Renderer.Version, which sets it far apart from
// render.Version's numbers and moves with them (the file embeds and code
// blocks are the Markdown renderer's HTML).
const Version = 2

// versionBase sets the wikitext renderer's versions apart from the
// Markdown renderer's (below 1<<20, with its case-sensitive bit 1<<20).
const versionBase = 1 << 21

// caseSensitiveVersion marks the version of a renderer whose links keep the
// first letter of titles as written, as render does.
const caseSensitiveVersion = 1 << 20

// Renderer renders wikitext. It is safe for concurrent use.
type Renderer struct {
	rules   wiki.TitleRules
	timeout time.Duration
	md      *render.Renderer // renders file embeds, as Markdown pages show them
}

// Option configures New.
type Option func(*options)

type options struct {
	rules   wiki.TitleRules
	timeout time.Duration
}

// WithTitleRules sets the wiki's title rules, by which link targets,
// redirect targets and file names become titles.
func WithTitleRules(rules wiki.TitleRules) Option { return func(o *options) { o.rules = rules } }

// WithTimeout sets the render's CPU time limit (default
// render.DefaultTimeout); 0 or less means none.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// New builds a Renderer; build one per process and share it.
func New(opts ...Option) *Renderer {
	o := options{timeout: render.DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	return &Renderer{
		rules:   o.rules,
		timeout: o.timeout,
		md:      render.New(render.WithTitleRules(o.rules), render.WithTimeout(0)),
	}
}

// TitleRules are the title rules r resolves links by.
func (r *Renderer) TitleRules() wiki.TitleRules { return r.rules }

// Version is what r's renders are stored under (see Version).
func (r *Renderer) Version() int {
	v := versionBase | render.Version<<8 | Version
	if !r.rules.CapitalLinks() {
		v |= caseSensitiveVersion
	}
	return v
}

// budget is one render's time limit, checked every checkEvery steps.
type budget struct {
	ctx      context.Context
	now      func() time.Duration
	deadline time.Duration
	steps    int
}

const checkEvery = 256

// errTimeout is the panic value that ends a render over its time limit.
var errTimeout = errors.New("wikitext: time limit reached")

// stopRender is the panic value that ends a render whose context is done.
type stopRender struct{ err error }

func (b *budget) check() {
	if b.steps++; b.steps < checkEvery {
		return
	}
	b.steps = 0
	if b.ctx != nil {
		if err := b.ctx.Err(); err != nil {
			panic(stopRender{err})
		}
	}
	if b.deadline > 0 && b.now() > b.deadline {
		panic(errTimeout)
	}
}

// start starts the clock of a render's time limit; done stops it.
func (r *Renderer) start(ctx context.Context) (b *budget, done func()) {
	if r.timeout <= 0 {
		return &budget{ctx: ctx}, func() {}
	}
	now, done := render.CPUClock()
	return &budget{ctx: ctx, now: now, deadline: now() + r.timeout}, done
}

// redirectLinks is the link set of src's #REDIRECT line alone.
func (r *Renderer) redirectLinks(src string) wiki.LinkSet {
	redirect, _ := render.SplitRedirect(src, r.rules)
	ls := wiki.LinkSet{Redirect: redirect}
	if redirect != "" && !redirect.IsSpecial() {
		ls.Links = []wiki.Title{redirect}
	}
	return ls
}

// timedOut recovers a parse that ran out of time: it reports whether v
// was errTimeout, and panics again with anything else.
func timedOut(v any) bool {
	if v == nil {
		return false
	}
	if v != errTimeout {
		panic(v)
	}
	return true
}

// Links parses src and returns its link set without rendering HTML (the
// redirect only, when the parse runs out of time).
func (r *Renderer) Links(src string) (ls wiki.LinkSet) {
	defer func() {
		if timedOut(recover()) {
			ls = r.redirectLinks(src)
		}
	}()
	b, done := r.start(context.Background())
	defer done()
	d := r.parse(src, b)
	return d.linkSet()
}

// Analyze parses src once for its link set (see Links) and its plain text
// (see PlainText).
func (r *Renderer) Analyze(src string) (ls wiki.LinkSet, plain string) {
	defer func() {
		if timedOut(recover()) {
			ls, plain = r.redirectLinks(src), src
		}
	}()
	b, done := r.start(context.Background())
	defer done()
	d := r.parse(src, b)
	return d.linkSet(), d.plainText()
}

// PlainText returns the text a reader of src sees, without markup: what
// the search index holds. Link labels, reference texts and code are text;
// categories, URLs, tags and the redirect line are not. A parse that runs
// out of time returns src as it is.
func (r *Renderer) PlainText(src string) string {
	_, plain := r.Analyze(src)
	return plain
}

// WikiLinks returns the targets of the wiki links in src, special pages
// included, in order (for checking what a signature links to).
func (r *Renderer) WikiLinks(src string) (out []wiki.Title) {
	defer func() {
		if timedOut(recover()) {
			out = nil
		}
	}()
	b, done := r.start(context.Background())
	defer done()
	d := r.parse(src, b)
	for _, l := range d.links {
		if l.target != "" {
			out = append(out, l.target)
		}
	}
	return out
}
