// Package render turns wiki markup (CommonMark + GFM + wiki links and macros)
// into sanitized HTML and extracts the links a page makes.
package render

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/wikid/wikid/internal/wiki"
)

// Version changes whenever the HTML output for the same source changes;
// it is part of render cache keys (through Renderer.Version).
const Version = 13

// caseSensitiveVersion marks the Version of a renderer whose links keep the
// first letter of titles as written (capital_links false): the same source
// renders other links there, so its renders are stored under another key.
// Far above any Version, so that the two never meet.
const caseSensitiveVersion = 1 << 20

// Heading is one entry of a page's table of contents.
type Heading struct {
	Level int    // 1–6
	Text  string // plain text, not escaped
	ID    string // the heading's id attribute, not escaped
}

// Result is a rendered page.
type Result struct {
	HTML   string // sanitized body HTML: a fixpoint of Sanitize
	TOC    []Heading
	Links  wiki.LinkSet // links (deduplicated, no fragments, no Special: or same-page), categories, redirect, files
	Macros []string     // dynamic macros used, in order of first use: "recentchanges", "pagecount", "allpages"
	// TimedOut is set when the render ran out of time (WithTimeout): HTML
	// is then the source as plain text under a notice, and Links holds the
	// redirect only. It depends on the machine's load: do not store it for
	// good.
	TimedOut bool
	// Partial is set when code blocks were left without colours because
	// highlighting ran out of its time: like TimedOut, not for good.
	Partial bool
}

// Exists reports which titles exist. Render calls it at most once, with
// every distinct link target that is not a special page.
type Exists func(ctx context.Context, titles []wiki.Title) (map[wiki.Title]bool, error)

// Renderer renders wiki markup. It is safe for concurrent use.
type Renderer struct {
	md goldmark.Markdown
	// schemes and noAutolinks are md's parser with schemeLinkify and
	// without linkify, for a source in which linkify can find no e-mail
	// address, or nothing (autolinks): linkify runs at every space, which
	// makes goldmark cut the text there, a third of the parse of a page
	// of plain prose. goldmark's own parsers (tests) use md's.
	schemes, noAutolinks parser.Parser
	timeout              time.Duration
	highlightBudget      time.Duration   // 0: highlightBudget
	rules                wiki.TitleRules // how link targets become titles
}

// Option configures New.
type Option func(*options)

type options struct {
	timeout time.Duration
	// goldmarkParsers builds the renderer with goldmark's own link,
	// emphasis, strikethrough and link reference parsers instead of
	// Wikid's linear ones: for tests that compare the two.
	goldmarkParsers bool
	// goldmarkStrike is the strikethrough extension to use with them.
	goldmarkStrike goldmark.Extender
	// alwaysAutolinks parses every source with fastLinkify (tests
	// compare it with Renderer.schemes and Renderer.noAutolinks).
	alwaysAutolinks bool
	// highlightBudget replaces highlightBudget (tests).
	highlightBudget time.Duration
	rules           wiki.TitleRules
}

// WithTitleRules sets the wiki's title rules, by which link targets,
// redirect targets and file names become titles (default: the zero
// TitleRules, capital_links true).
func WithTitleRules(rules wiki.TitleRules) Option { return func(o *options) { o.rules = rules } }

// New builds a Renderer; build one per process and share it.
func New(opts ...Option) *Renderer {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	inline := linearInlineParsers()
	paragraph := []util.PrioritizedValue{util.Prioritized(linkReferences{}, linkReferencePriority)}
	var strike goldmark.Extender = strikethrough{}
	if o.goldmarkParsers {
		inline, paragraph, strike = parser.DefaultInlineParsers(), parser.DefaultParagraphTransformers(), o.goldmarkStrike
	}
	build := func(linkify goldmark.Extender) goldmark.Markdown {
		p := parser.NewParser(
			parser.WithBlockParsers(limitedBlockParsers()...),
			parser.WithInlineParsers(append(slices.Clone(inline),
				util.Prioritized(checkPoint{}, 1),
				util.Prioritized(wikiLinkParser{rules: o.rules}, 150),
				util.Prioritized(macroParser{}, 150),
			)...),
			parser.WithParagraphTransformers(paragraph...),
		)
		ext := []goldmark.Extender{table{}, strike}
		if linkify != nil {
			ext = append(ext, linkify)
		}
		ext = append(ext, extension.TaskList, footnotes{}, definitionList{})
		return goldmark.New(
			goldmark.WithParser(p),
			goldmark.WithExtensions(ext...),
			goldmark.WithRendererOptions(
				html.WithUnsafe(), // raw HTML is allowed; sanitizeRaw is the gate
				html.WithWriter(canonWriter{}),
				renderer.WithNodeRenderers(util.Prioritized(nodeRenderer{rules: o.rules}, 100)),
			),
		)
	}
	md, schemes, plain := build(fastLinkify{}), build(schemeLinkify{}), build(nil)
	if o.alwaysAutolinks || o.goldmarkParsers {
		schemes, plain = md, md
	}
	return &Renderer{md: md, schemes: schemes.Parser(), noAutolinks: plain.Parser(), timeout: o.timeout, highlightBudget: o.highlightBudget, rules: o.rules}
}

// TitleRules are the title rules r resolves links by (WithTitleRules).
func (r *Renderer) TitleRules() wiki.TitleRules { return r.rules }

// Version is what r's renders are stored under: Version, set apart for
// the case-sensitive title rules, whose links differ for the same source.
// A render made under one capital_links setting is then never served
// under the other.
func (r *Renderer) Version() int {
	if r.rules.CapitalLinks() {
		return Version
	}
	return Version | caseSensitiveVersion
}

// Links parses src and returns its link set without rendering HTML (the
// redirect only, when the parse runs out of time).
func (r *Renderer) Links(src string) (ls wiki.LinkSet) {
	defer func() {
		if v := recover(); v != nil {
			if v != errTimeout {
				panic(v)
			}
			ls = r.redirectLinks(src)
		}
	}()
	b, done := r.budget(context.Background())
	defer done()
	_, _, ls = r.parse(src, b)
	return ls
}

// Render renders src. exists may be nil: then every link is blue. A render
// that runs out of time returns the page as plain text (Result.TimedOut);
// one whose ctx ends returns ctx's error.
func (r *Renderer) Render(ctx context.Context, src string, exists Exists) (res Result, err error) {
	return r.RenderWith(ctx, src, exists, Options{})
}

// Options are what a render of a page's current text adds to Render's.
type Options struct {
	// EditPage, when set, gives each section heading (Sections) an edit
	// link to its section of page EditPage: for the current revision's
	// render, not for old revisions or previews, whose sections are not
	// the current text's.
	EditPage wiki.Title
	// SectionMark is the nonce MarkSections marked src's section headings
	// with, before its templates were expanded: then only the headings
	// with a mark get links (the others came from templates), numbered
	// by their marks.
	SectionMark string
	// Files looks up the files the page shows or links to as media: the
	// render calls it at most once, with every distinct "File:" title the
	// page embeds ([[File:X]], ![…](File:X)) or links as media
	// ([[Media:X]]), whether they exist or not. A title missing from its
	// map is a missing file. Files nil: every file is missing, shown as a
	// red link to upload it.
	Files func(ctx context.Context, titles []wiki.Title) (map[wiki.Title]wiki.FileVersion, error)
}

// RenderWith is Render with options.
func (r *Renderer) RenderWith(ctx context.Context, src string, exists Exists, o Options) (res Result, err error) {
	b, done := r.budget(ctx)
	defer done()
	defer func() {
		switch v := recover().(type) {
		case nil:
		case stopRender:
			res, err = Result{}, fmt.Errorf("render: %w", v.err)
		default:
			if v != errTimeout {
				panic(v)
			}
			res, err = Result{HTML: timedOut([]byte(src)), Links: r.redirectLinks(src), TimedOut: true}, nil
		}
	}()
	source, doc, ls := r.parse(src, b)
	w := &walker{source: source, budget: b, hl: highlighter{budget: r.highlightBudget}, editPage: o.EditPage, mark: o.SectionMark}
	w.walk(doc)

	if exists != nil && len(w.targets) > 0 {
		found, err := exists(ctx, w.targets)
		if err != nil {
			return Result{}, fmt.Errorf("render: look up link targets: %w", err)
		}
		for _, l := range w.links {
			if !l.Target.IsSpecial() && l.Target != "" {
				l.Exists = found[l.Target]
			}
		}
	} else {
		for _, l := range w.links {
			l.Exists = true
		}
	}
	if len(w.files) > 0 && o.Files != nil {
		found, err := o.Files(ctx, w.files)
		if err != nil {
			return Result{}, fmt.Errorf("render: look up files: %w", err)
		}
		versions := make(map[wiki.Title]*wiki.FileVersion, len(found))
		for _, ref := range w.fileRefs {
			v, ok := versions[ref.title]
			if !ok {
				if fv, ok := found[ref.title]; ok {
					if fv.Title == "" {
						fv.Title = ref.title // its URLs are named after it
					}
					v = &fv
				}
				versions[ref.title] = v
			}
			ref.version = v
		}
	}
	// Start tags are computed once per distinct link.
	type linkKey struct {
		target   wiki.Title
		fragment string
		exists   bool
	}
	opens := make(map[linkKey]string, len(w.targets))
	for _, l := range w.anchors {
		k := linkKey{l.Target, l.Fragment, l.Exists}
		open, ok := opens[k]
		if !ok {
			open = wikiLinkOpen(l)
			opens[k] = open
		}
		l.open = open
	}

	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			bufPool.Put(buf)
		}
	}()
	buf.Reset()
	buf.Grow(len(source) + len(source)/2)
	if err := r.md.Renderer().Render(pageWriter{bufWriter{buf}, map[string][]byte{}}, source, doc); err != nil {
		return Result{}, fmt.Errorf("render: %w", err)
	}
	// The output needs no sanitizing as a whole: see canon.go.
	return Result{
		HTML:    buf.String(),
		TOC:     w.toc,
		Links:   ls,
		Macros:  w.macros,
		Partial: w.hl.cut,
	}, nil
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// budget starts the clock of a render's time limit; done stops it.
func (r *Renderer) budget(ctx context.Context) (b *budget, done func()) {
	if r.timeout <= 0 {
		return &budget{ctx: ctx}, func() {}
	}
	now, done := cpuClock()
	return &budget{ctx: ctx, now: now, deadline: now() + r.timeout}, done
}

// redirectLinks is the link set of src's #REDIRECT line alone.
func (r *Renderer) redirectLinks(src string) wiki.LinkSet {
	redirect, _ := splitRedirect(src, r.rules)
	ls := wiki.LinkSet{Redirect: redirect}
	if redirect != "" && !redirect.IsSpecial() {
		ls.Links = []wiki.Title{redirect}
	}
	return ls
}

// parse strips a leading #REDIRECT line, parses the rest once and collects
// its link set. It panics with errTimeout or stopRender when b runs out.
func (r *Renderer) parse(src string, b *budget) ([]byte, ast.Node, wiki.LinkSet) {
	redirect, rest := splitRedirect(src, r.rules)
	source := []byte(rest)
	pc := parser.NewContext()
	pc.Set(budgetKey, b)
	var p parser.Parser
	switch autolinks(source) {
	case autolinkAll:
		p = r.md.Parser()
	case autolinkURL:
		p = r.schemes
	default:
		p = r.noAutolinks
	}
	doc := p.Parse(text.NewReader(source), parser.WithContext(pc))
	ls := wiki.LinkSet{Redirect: redirect}
	seenLink := map[wiki.Title]bool{}
	seenCat := map[wiki.Title]bool{}
	seenFile := map[wiki.Title]bool{}
	link := func(t wiki.Title) {
		if t != "" && !t.IsSpecial() && !seenLink[t] {
			seenLink[t] = true
			ls.Links = append(ls.Links, t)
		}
	}
	file := func(t wiki.Title) {
		if t != "" && !seenFile[t] {
			seenFile[t] = true
			ls.Files = append(ls.Files, t)
		}
	}
	link(redirect)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *fileEmbed:
			file(n.ref.title)
			if n.opts.link == linkPage {
				link(n.opts.linkTitle)
			}
			return ast.WalkContinue, nil
		case *ast.Image:
			if t, ok := fileImageTitle(n.Destination, r.rules); ok {
				n.SetAttributeString(fileRefAttr, &fileRef{title: t})
				file(t)
			}
			return ast.WalkContinue, nil
		}
		l, ok := n.(*wikiLink)
		if !ok || l.Invalid || l.Target == "" {
			return ast.WalkContinue, nil
		}
		switch {
		case l.Category:
			if !seenCat[l.Target] {
				seenCat[l.Target] = true
				ls.Categories = append(ls.Categories, l.Target)
			}
			// As MediaWiki: the last key given for a category is its key.
			if l.SortKey != "" {
				if ls.SortKeys == nil {
					ls.SortKeys = map[wiki.Title]string{}
				}
				ls.SortKeys[l.Target] = l.SortKey
			}
		default:
			link(l.Target)
		}
		return ast.WalkContinue, nil
	})
	return source, doc, ls
}

// walker annotates the parsed document before rendering: heading ids, the
// TOC, task list classes, macros, paragraphs that render to nothing or
// hold only files, highlighted code, and the link targets whose existence
// and the files whose versions must be looked up.
type walker struct {
	budget  *budget
	source  []byte
	ids     idSet
	hl      highlighter
	toc     []Heading
	links   []*wikiLink // links to other pages
	anchors []*wikiLink // links to other pages and same-page links
	targets []wiki.Title
	macros  []string
	// files are the distinct titles of fileRefs, the files shown.
	files    []wiki.Title
	fileRefs []*fileRef
	// editPage and mark are Options.EditPage and SectionMark; sections
	// counts the top-level headings seen (unmarked source) and marked the
	// section numbers linked already (a template may repeat a marked
	// heading given as its argument: only the first gets the link).
	editPage wiki.Title
	mark     string
	sections int
	marked   map[int]bool
}

func (w *walker) walk(doc ast.Node) {
	seen := map[wiki.Title]bool{}
	seenFile := map[wiki.Title]bool{}
	addFile := func(ref *fileRef) {
		w.fileRefs = append(w.fileRefs, ref)
		if !seenFile[ref.title] {
			seenFile[ref.title] = true
			w.files = append(w.files, ref.title)
		}
	}
	var drop, lift, files []*ast.Paragraph
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		w.budget.check()
		switch n := n.(type) {
		case *ast.Heading:
			trimHeadingEnd(n, w.source)
			section := w.section(n)
			text := plainText(n, w.source)
			id := w.ids.unique(anchorID(text))
			n.SetAttributeString("id", []byte(id))
			if section > 0 && w.editPage != "" {
				n.SetAttributeString(editSectionAttr, editSection{href: SectionEditURL(w.editPage, section), heading: text})
			}
			w.toc = append(w.toc, Heading{Level: n.Level, Text: text, ID: id})
		case *ast.Text:
			trimBeforeBreak(n, w.source)
		case *ast.Paragraph:
			switch paragraphKind(n, w.source) {
			case paraEmpty:
				drop = append(drop, n)
			case paraBlockMacro:
				lift = append(lift, n)
			case paraFiles:
				files = append(files, n)
				markBlockFiles(n)
			}
		case *ast.TextBlock: // a tight list item's text: no <p> to leave
			if paragraphKind(n, w.source) == paraFiles {
				markBlockFiles(n)
			}
		case *fileEmbed:
			addFile(&n.ref)
		case *ast.Image:
			if ref := imageFileRef(n); ref != nil && ref.title != "" {
				addFile(ref)
			}
		case *ast.FencedCodeBlock:
			w.highlight(n)
		case *ast.ListItem:
			if fc := n.FirstChild(); fc != nil {
				if _, ok := fc.FirstChild().(*extast.TaskCheckBox); ok {
					n.SetAttributeString("class", []byte("task-list-item"))
				}
			}
		case *wikiLink:
			if n.Invalid || n.Category {
				return ast.WalkContinue, nil
			}
			w.anchors = append(w.anchors, n)
			if n.Target == "" {
				return ast.WalkContinue, nil
			}
			w.links = append(w.links, n)
			if !n.Target.IsSpecial() && !seen[n.Target] {
				seen[n.Target] = true
				w.targets = append(w.targets, n.Target)
			}
		case *macro:
			if !slices.Contains(w.macros, n.spec.Name) {
				w.macros = append(w.macros, n.spec.Name)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, p := range drop {
		p.Parent().RemoveChild(p.Parent(), p)
	}
	for _, p := range lift {
		p.Parent().ReplaceChild(p.Parent(), p, &macroBlock{spec: firstMacro(p).spec})
	}
	for _, p := range files {
		b := &fileBlock{}
		for c := p.FirstChild(); c != nil; {
			next := c.NextSibling()
			b.AppendChild(b, c)
			c = next
		}
		p.Parent().ReplaceChild(p.Parent(), p, b)
	}
}

// markBlockFiles marks the file embeds of p, a paragraph of embeds only,
// as standing apart from any text.
func markBlockFiles(p ast.Node) {
	for c := p.FirstChild(); c != nil; c = c.NextSibling() {
		if e, ok := c.(*fileEmbed); ok {
			e.block = true
		}
	}
}

// section returns the number of the section heading n begins, or 0 when
// it is no section heading (see Options), removing its mark.
func (w *walker) section(n *ast.Heading) int {
	section := 0
	switch {
	case w.mark != "":
		section = takeMark(n, w.source, w.mark)
		if section == 0 || w.marked[section] {
			return 0
		}
		if w.marked == nil {
			w.marked = map[int]bool{}
		}
		w.marked[section] = true
	case n.Parent() != nil && n.Parent().Kind() == ast.KindDocument:
		w.sections++
		section = w.sections
	}
	return section
}

// highlight leaves the highlighted HTML of a fenced code block on it when
// its language is known and the page's budget allows (see highlight.go).
func (w *walker) highlight(n *ast.FencedCodeBlock) {
	lang := codeLanguageOf(n, w.source)
	if lang == nil {
		return
	}
	lines := n.Lines()
	size := 0
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		size += seg.Len() + seg.Padding
	}
	if size > maxHighlightBlock {
		return
	}
	code := make([]byte, 0, size)
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		code = append(code, seg.Value(w.source)...)
	}
	if html, ok := w.hl.highlight(lang, code); ok {
		n.SetAttributeString(highlightAttr, html)
	}
}
