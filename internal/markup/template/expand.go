package template

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wikid/wikid/internal/wiki"
)

// halt says which limit stopped the expansion.
type halt int

const (
	running halt = iota
	haltPostExpand
	haltNodes
	haltTemplates
	haltWork
	haltGenerated
	haltExpr
)

// checkEvery is how many nodes pass between two looks at the context.
const checkEvery = 1000

// workPerByte bounds the bytes the expander may copy, compare or parse in
// all (memo keys, comparisons, loaded texts, copies made to trim), and
// read again each time it visits a call (names, white space it trims,
// expressions, what keep reads): this many times PostExpand, plus this
// many times the page's length. It is the net under shapes that produce
// little but churn a lot, such as a large literal argument passed to
// thousands of distinct calls, or a long name in a template called as
// often.
const workPerByte = 16

type expander struct {
	ctx       context.Context
	page      Page
	load      Loader
	keep      func(string) bool
	lim       Limits
	workLimit int

	nodes, nextCheck int
	generated        int // pieces and parts the parses created, against Nodes
	exprBytes        int // bytes of expressions evaluated, against Expr
	post             int // bytes charged against PostExpand
	work             int // bytes charged against workLimit
	errors           int
	halt             halt
	boxed            bool // the halt's error box is written
	err              error

	sources   map[wiki.Title]*source
	templates []wiki.Title
	names     map[string]resolved
	ids       map[wiki.Title]int
	chain     []wiki.Title // the pages being expanded, the rendered page first
	chainBits bitset       // ids of chain
	memo      map[string]*entry
	keyBuf    []byte
	exprs     map[string]exprResult // by expression: each is evaluated once

	// The page's default sort key ({{DEFAULTSORT}}), whether one was
	// set, and the DEFAULTSORTs met in the template being expanded, for
	// its memo entry to replay.
	sortKey string
	sortSet bool
	sortOps sortOps
}

type resolved struct {
	t  wiki.Title
	ok bool
}

// source is a loaded page.
type source struct {
	exists bool
	text   string     // without one trailing newline
	target wiki.Title // the redirect target when the text is a redirect
	tree   tree       // parsed for transclusion on first use
	parsed bool
	link   string // to the page, when it is missing
}

// entry is the remembered output of one template called with one set of
// arguments. It can stand in for a new expansion when that expansion would
// reach no limit the first one did not: the depth left is enough for its
// height and none of the pages below it is being expanded (which would be
// a loop now). Expansions that met a loop or the depth limit are not
// remembered: their output depends on where they were called from.
type entry struct {
	out    string
	cost   int // bytes charged against PostExpand while it was produced
	errors int
	height int    // levels of templates in it, itself included
	titles bitset // ids of the pages it transcluded
	sorts  sortOps
}

// frame is one text being expanded: the page itself (depth 0) or a
// template with its arguments.
type frame struct {
	t       *tree // the text's tree, which holds the parts of its calls
	depth   int
	args    *args // nil for the page itself
	nesting int   // calls and parameters open in this text
	// What the expansion below this frame met, for memoization.
	height int
	dirty  bool // a loop or the depth limit
	titles bitset
}

// out is a buffer expansion writes to. Results are written where they
// end up rather than built apart and copied: only values the expander
// must look at (names, arguments, tests) go to buffers of their own.
type out struct {
	b    []byte
	page bool // the page's output: the page's own text costs nothing here
	// trimAt is where a trimmed region (a parser function's result) began
	// while it has no content yet: leading white space written there is
	// dropped. -1 when no region is waiting for content.
	trimAt int
}

func newExpander(ctx context.Context, src string, p Page, load Loader, keep func(string) bool, lim Limits) *expander {
	return &expander{
		ctx: ctx, page: p, load: load, keep: keep, lim: lim,
		workLimit: workPerByte * (lim.PostExpand + len(src)),
		nextCheck: checkEvery,
		sources:   make(map[wiki.Title]*source),
		names:     make(map[string]resolved),
		ids:       make(map[wiki.Title]int),
		memo:      make(map[string]*entry),
	}
}

func (e *expander) run(src string) (string, error) {
	t := e.parse(src, false)
	o := &out{page: true, trimAt: -1, b: make([]byte, 0, len(src)+len(src)/4)}
	if e.page.Title != "" {
		e.push(e.page.Title)
	}
	e.expandTree(&frame{t: &t}, o)
	if e.err != nil {
		return "", e.err
	}
	if e.halt != running {
		e.box(o)
	}
	return string(o.b), nil
}

// parse parses src within the budget of pieces and parts: Limits.Nodes for
// one text, one and a half times that for all the texts of the expansion
// (whose trees are kept until it ends). A page cannot use up the budget
// of its templates.
func (e *expander) parse(src string, include bool) tree {
	tree, used := parse(src, include, e.page.Wikitext, min(e.lim.Nodes, e.lim.Nodes+e.lim.Nodes/2-e.generated))
	e.generated += used
	return tree
}

// expandTree writes the expansion of the text of frame f to o.
func (e *expander) expandTree(f *frame, o *out) {
	for _, ns := range f.t.root {
		e.expandNodes(ns, f, o)
	}
}

// expandNodes writes the expansion of ns in frame f to o. Once a limit has
// stopped the expansion, templates write nothing more and the page's own
// text is copied as written, calls included.
func (e *expander) expandNodes(ns []node, f *frame, o *out) {
	for i := range ns {
		if e.err != nil {
			return
		}
		n := &ns[i]
		if e.halt != running {
			if f.depth > 0 || !o.page {
				return
			}
			e.box(o)
			e.put(o, n.text, true)
			continue
		}
		switch n.kind {
		case textNode:
			e.put(o, n.text, f.depth == 0 && o.page && !n.rewritten)
		case callNode, argNode:
			start := len(o.b)
			if n.kind == callNode {
				e.call(n, f, o)
			} else {
				e.param(n, f, o)
			}
			if e.halt != running && e.err == nil && f.depth == 0 && o.page && len(o.b) == start {
				// Stopped inside this call before it wrote anything: it
				// stays as written, after the error box.
				e.box(o)
				e.put(o, n.text, true)
			}
		case limitNode:
			// The page was not parsed past this point: what follows is
			// its text as written, after the error box.
			e.stop(haltGenerated)
		}
	}
}

// put writes s to o. Unless free (the page's own text, written once),
// its bytes count against PostExpand; past the limit nothing is written
// and the expansion stops.
func (e *expander) put(o *out, s string, free bool) {
	if len(o.b) == o.trimAt {
		t := trimLeft(s)
		if !free && !e.spend(len(s)-len(t)) { // the white space is read
			return
		}
		s = t
	}
	if s == "" {
		return
	}
	if !free {
		if e.post+len(s) > e.lim.PostExpand {
			e.stop(haltPostExpand)
			return
		}
		e.post += len(s)
		if !e.spend(len(s)) {
			return
		}
	}
	if o.page && len(o.b)+len(s) > cap(o.b) {
		// The page's output can be large: doubling copies it less than
		// append's growth by a quarter.
		o.b = slices.Grow(o.b, max(len(s), cap(o.b)))
	}
	o.b = append(o.b, s...)
}

// str expands ns in a buffer of its own and returns the text, trimmed of
// white space at both ends if trim. A lone text node costs no copy.
func (e *expander) str(ns []node, f *frame, trim bool) string {
	switch {
	case len(ns) == 0:
		return ""
	case len(ns) == 1 && ns[0].kind == textNode:
		if trim {
			// Trimming reads the white space: work, checked by the
			// caller with stopped.
			t := trimSpace(ns[0].text)
			e.spend(len(ns[0].text) - len(t))
			return t
		}
		return ns[0].text
	}
	o := &out{trimAt: -1}
	if trim {
		o.trimAt = 0
	}
	e.expandNodes(ns, f, o)
	if trim {
		o.b = trimRightFrom(o.b, 0)
	}
	return string(o.b)
}

// trimmed writes the expansion of ns to o without white space at either
// end (how parser functions return a branch).
func (e *expander) trimmed(ns []node, f *frame, o *out) {
	start, saved := len(o.b), o.trimAt
	o.trimAt = start
	e.expandNodes(ns, f, o)
	o.trimAt = saved
	o.b = trimRightFrom(o.b, start)
}

func (e *expander) stop(h halt) {
	if e.halt == running {
		e.halt = h
	}
}

func (e *expander) stopped() bool { return e.err != nil || e.halt != running }

// tick counts n nodes against the limit and looks at the context every
// checkEvery nodes.
func (e *expander) tick(n int) bool {
	e.nodes += n
	if e.nodes > e.lim.Nodes {
		e.stop(haltNodes)
		return false
	}
	if e.nodes >= e.nextCheck {
		e.nextCheck = e.nodes + checkEvery
		if err := e.ctx.Err(); err != nil {
			e.err = err
			return false
		}
	}
	return true
}

// spend counts n bytes of work against the work limit.
func (e *expander) spend(n int) bool {
	e.work += n
	if e.work > e.workLimit {
		e.stop(haltWork)
		return false
	}
	return true
}

// box writes the error box of the limit that stopped the expansion, once.
func (e *expander) box(o *out) {
	if e.boxed {
		return
	}
	e.boxed = true
	e.errors++
	var msg string
	switch e.halt {
	case haltPostExpand:
		msg = fmt.Sprintf("Post-expand include size limit exceeded (%d bytes)", e.lim.PostExpand)
	case haltNodes:
		msg = fmt.Sprintf("Preprocessor node count limit exceeded (%d nodes)", e.lim.Nodes)
	case haltTemplates:
		msg = fmt.Sprintf("Template count limit exceeded (%d pages)", e.lim.Templates)
	case haltGenerated:
		msg = fmt.Sprintf("Preprocessor generated node count limit exceeded (%d nodes)", e.lim.Nodes)
	case haltExpr:
		msg = fmt.Sprintf("Expression size limit exceeded (%d bytes)", e.lim.Expr)
	default:
		msg = "Expansion work limit exceeded"
	}
	o.b = append(o.b, errorOpen+msg+": templates past this point are not expanded"+errorClose...)
}

const (
	errorOpen  = `<strong class="error">`
	errorClose = `</strong>`
)

// errorBox writes an error box; msg is HTML already.
func (e *expander) errorBox(o *out, msg string) {
	n := len(o.b)
	if e.put(o, errorOpen+msg+errorClose, false); len(o.b) > n {
		e.errors++
	}
}

// call expands {{…}}: a kept macro, a magic word, a parser function or a
// template, in that order.
func (e *expander) call(n *node, f *frame, o *out) { e.nested(n, f, o, e.callIn) }

// nested visits n with visit, one level deeper in f: it charges n's parts
// as nodes and stops at the nesting limit with an error box.
func (e *expander) nested(n *node, f *frame, o *out, visit func(*node, *frame, *out)) {
	if !e.tick(int(n.parts.n)) {
		return
	}
	if f.nesting >= e.lim.Nesting {
		e.errorBox(o, fmt.Sprintf("Expansion depth limit exceeded (%d)", e.lim.Nesting))
		return
	}
	f.nesting++
	visit(n, f, o)
	f.nesting--
}

func (e *expander) callIn(n *node, f *frame, o *out) {
	free := f.depth == 0 && o.page
	if e.keep != nil && n.plain {
		// keep may read the whole call: work, like everything read again
		// each time a call is visited.
		if !e.spend(len(n.text)) {
			return
		}
		if e.keep(n.inner()) {
			e.put(o, n.text, free)
			return
		}
	}
	ps := f.t.partsOf(n)
	title := f.t.nodes(&ps[0])
	name := e.str(title, f, true)
	// The name is read to find a magic word, a function or a page.
	if e.stopped() || !e.spend(len(name)) {
		return
	}
	parts := ps[1:]
	if len(parts) == 0 {
		if v, ok := e.magic(name); ok {
			e.put(o, v, false)
			return
		}
	}
	if key, ok := defaultSortCall(name); ok {
		e.defaultSort(key, parts, f, o)
		return
	}
	if fn, first, ok := parserFunction(name); ok {
		fn(e, first, parts, f, o)
		return
	}
	t, ok := e.resolve(name)
	if !ok || rewritten(title) {
		if n.plain {
			e.put(o, n.text, free)
		} else {
			e.put(o, "{{"+implode(name, e.parts(parts, f))+"}}", false)
		}
		return
	}
	a := e.arguments(parts, f)
	if e.stopped() {
		return
	}
	if e.keep != nil && !n.plain {
		// The macros may take an argument built by templates:
		// {{allpages|prefix={{PAGENAME}}/}}.
		if !e.spend(len(name) + a.size()) {
			return
		}
		if inner := implode(name, a.display()); e.keep(inner) {
			e.put(o, "{{"+inner+"}}", false)
			return
		}
	}
	e.transclude(t, a, f, o)
}

// rewritten reports whether ns holds nowiki content, which never makes a
// name.
func rewritten(ns []node) bool {
	for i := range ns {
		if ns[i].rewritten {
			return true
		}
	}
	return false
}

// parts expands each of ps whole (a named argument's '=' included).
func (e *expander) parts(ps []part, f *frame) []string {
	out := make([]string, len(ps))
	for i := range ps {
		out[i] = e.str(f.t.nodes(&ps[i]), f, false)
	}
	return out
}

func implode(name string, parts []string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, p := range parts {
		b.WriteByte('|')
		b.WriteString(p)
	}
	return b.String()
}

// arguments expands a call's arguments in the caller's frame. Named ones
// are trimmed (name and value), positional ones are not; a later argument
// of the same name wins.
func (e *expander) arguments(ps []part, f *frame) *args {
	if len(ps) == 0 {
		return &noArgs
	}
	a := &args{list: make([]kv, 0, len(ps))}
	pos := 0
	for i := range ps {
		p := &ps[i]
		if p.eq >= 0 {
			name := e.str(f.t.name(p), f, true)
			e.spend(len(name)) // looked up and compared
			a.set(name, e.str(f.t.value(p), f, true), true)
		} else {
			pos++
			a.set(strconv.Itoa(pos), e.str(f.t.nodes(p), f, false), false)
		}
	}
	return a
}

// resolve maps a call's name to the page it transcludes: a page of the
// Template namespace, a main namespace page for ":Name", or the page
// itself when the name has a known namespace other than Special.
func (e *expander) resolve(name string) (wiki.Title, bool) {
	if r, ok := e.names[name]; ok {
		return r.t, r.ok
	}
	t, ok := resolveName(name, e.page.Rules)
	e.names[name] = resolved{t, ok}
	return t, ok
}

// resolveName is resolve by the title rules of the page's wiki.
func resolveName(name string, rules wiki.TitleRules) (wiki.Title, bool) {
	if name == "" || strings.ContainsAny(name, "\n\r") {
		return "", false
	}
	if rest, ok := strings.CutPrefix(name, ":"); ok {
		t, err := rules.Parse(rest)
		return t, err == nil && !t.IsSpecial()
	}
	t, err := rules.Parse(name)
	if err != nil || t.IsSpecial() {
		return "", false
	}
	if t.Namespace() != "" {
		return t, true
	}
	// "Template:foo" names the same page as "foo" whether or not the
	// title rules know the Template namespace.
	rest := name
	if prefix, after, ok := strings.Cut(name, ":"); ok && strings.EqualFold(strings.TrimSpace(prefix), templateNS) {
		if rest = after; strings.TrimSpace(rest) == "" {
			return "", false
		}
	}
	r, err := rules.Parse(rest)
	if err != nil {
		return "", false
	}
	t, err = rules.Parse(templateNS + ":" + string(r))
	return t, err == nil
}

const templateNS = "Template"

// transclude writes the expansion of page t called with arguments a.
func (e *expander) transclude(t wiki.Title, a *args, f *frame, o *out) {
	src := e.source(t)
	if src == nil {
		return
	}
	ct, cs := t, src // the page whose text is expanded
	if src.target != "" {
		if cs = e.source(src.target); cs == nil {
			return
		}
		ct = src.target
	}
	tid, cid := e.id(t), e.id(ct)
	f.titles.set(tid)
	f.titles.set(cid)
	if !cs.exists {
		if cs.link == "" {
			cs.link = link(ct)
		}
		e.put(o, cs.link, false)
		return
	}
	if e.chainBits.has(cid) {
		f.dirty = true
		e.loop(ct, o)
		return
	}
	if f.depth+1 > e.lim.Depth {
		f.dirty = true
		e.errorBox(o, fmt.Sprintf("Template recursion depth limit exceeded (%d): %s", e.lim.Depth, link(ct)))
		return
	}
	kb, ok := e.key(t, a)
	if !ok {
		return
	}
	if m := e.memo[string(kb)]; m != nil && f.depth+m.height <= e.lim.Depth && !m.titles.intersects(e.chainBits) {
		if e.post+m.cost > e.lim.PostExpand {
			e.stop(haltPostExpand)
			return
		}
		e.post += m.cost
		if !e.spend(len(m.out)) {
			return
		}
		start := len(o.b)
		e.put(o, m.out, true)
		e.lineStart(o, start)
		e.errors += m.errors
		e.setDefaultSort(m.sorts)
		f.height = max(f.height, m.height)
		f.titles.or(m.titles)
		return
	}
	key := string(kb) // e.keyBuf is reused by the calls below
	if !cs.parsed {
		cs.tree, cs.parsed = e.parse(cs.text, true), true
	}
	if cs.tree.cut {
		// Its text is not parsed to the end: it is not expanded at all.
		e.stop(haltGenerated)
		return
	}
	nf := &frame{t: &cs.tree, depth: f.depth + 1, args: a}
	nf.titles.set(tid)
	nf.titles.set(cid)
	e.push(ct)
	start, saved := len(o.b), o.trimAt
	o.trimAt = -1 // a template's output is remembered untrimmed
	post, errs, sorts := e.post, e.errors, e.sortOps
	e.sortOps = sortOps{}
	e.expandTree(nf, o)
	inner := e.sortOps
	e.sortOps = sorts.then(inner)
	o.trimAt = saved
	e.pop()
	f.height = max(f.height, nf.height+1)
	f.dirty = f.dirty || nf.dirty
	f.titles.or(nf.titles)
	if !nf.dirty && !e.stopped() && e.spend(len(o.b)-start) {
		e.memo[key] = &entry{out: string(o.b[start:]), cost: e.post - post, errors: e.errors - errs, height: nf.height + 1, titles: nf.titles,
			sorts: inner}
	}
	if saved == start {
		// The call began a trimmed region: drop the output's leading
		// white space now.
		k := start
		for k < len(o.b) && strings.IndexByte(space, o.b[k]) >= 0 {
			k++
		}
		if k > start && e.spend(len(o.b)-k) {
			o.b = append(o.b[:start], o.b[k:]...)
		}
	}
	e.lineStart(o, start)
}

// key writes to e.keyBuf what identifies a call for memoization: the page
// and the arguments, sorted by name. Looking the buffer up in the memo
// costs no allocation; only a new entry copies it.
func (e *expander) key(t wiki.Title, a *args) ([]byte, bool) {
	kvs := a.list
	if !slices.IsSortedFunc(kvs, compareKV) {
		kvs = slices.Clone(kvs)
		slices.SortFunc(kvs, compareKV)
	}
	n := len(t) + 1
	for _, p := range kvs {
		n += len(p.name) + len(p.value) + 8
	}
	if !e.spend(n) {
		return nil, false
	}
	b := append(e.keyBuf[:0], t...)
	b = append(b, 0)
	for _, p := range kvs {
		b = strconv.AppendInt(b, int64(len(p.name)), 10)
		b = append(b, ':')
		b = append(b, p.name...)
		b = strconv.AppendInt(b, int64(len(p.value)), 10)
		b = append(b, ':')
		b = append(b, p.value...)
	}
	e.keyBuf = b
	return b, true
}

func compareKV(x, y kv) int { return strings.Compare(x.name, y.name) }

// loop writes the error box of a page about to transclude itself.
func (e *expander) loop(t wiki.Title, o *out) {
	k := slices.Index(e.chain, t)
	var b strings.Builder
	b.WriteString("Template loop detected: ")
	for _, c := range e.chain[k:] {
		b.WriteString(link(c))
		b.WriteString(" → ")
	}
	b.WriteString(link(t))
	e.errorBox(o, b.String())
}

// link is a wiki link to t, which the renderer shows red when t is missing.
func link(t wiki.Title) string {
	if t.Namespace() == wiki.NSCategory {
		return "[[:" + string(t) + "]]" // a link, not a categorization
	}
	return "[[" + string(t) + "]]"
}

func (e *expander) push(t wiki.Title) {
	e.chain = append(e.chain, t)
	e.chainBits.set(e.id(t))
}

func (e *expander) pop() {
	t := e.chain[len(e.chain)-1]
	e.chain = e.chain[:len(e.chain)-1]
	e.chainBits.clear(e.id(t))
}

func (e *expander) id(t wiki.Title) int {
	if i, ok := e.ids[t]; ok {
		return i
	}
	i := len(e.ids)
	e.ids[t] = i
	return i
}

// source loads page t once per expansion. It returns nil when the
// expansion stopped: too many pages, or a load error.
func (e *expander) source(t wiki.Title) *source {
	if s, ok := e.sources[t]; ok {
		return s
	}
	if len(e.sources) >= e.lim.Templates {
		e.stop(haltTemplates)
		return nil
	}
	text, ok, err := e.load(e.ctx, t)
	if err != nil {
		e.err = fmt.Errorf("template: load %s: %w", t, err)
		return nil
	}
	s := &source{exists: ok}
	e.sources[t] = s
	e.templates = append(e.templates, t)
	if !ok {
		return s
	}
	if !e.spend(len(text)) {
		return nil
	}
	// Editors end files with a newline; the call is usually in a line.
	if t, ok := strings.CutSuffix(text, "\r\n"); ok {
		text = t
	} else {
		text = strings.TrimSuffix(text, "\n")
	}
	s.text = text
	if r := redirectTarget(text, e.page.Rules); r != "" && r != t {
		s.target = r
	}
	return s
}

// redirectLine matches "#REDIRECT [[Target]]" (any case, optional colon)
// at the start of a page, as the renderer does.
var redirectLine = regexp.MustCompile(`(?i)^[ \t]*#REDIRECT[ \t]*:?[ \t]*\[\[([^\[\]\n|]{1,512})(?:\|[^\[\]\n]*)?\]\]`)

func redirectTarget(text string, rules wiki.TitleRules) wiki.Title {
	if !strings.HasPrefix(strings.TrimLeft(text, " \t"), "#") {
		return "" // most pages: no need to run the expression
	}
	m := redirectLine.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	target := strings.TrimPrefix(strings.TrimSpace(m[1]), ":")
	t, _, err := rules.ParseLink(target)
	if err != nil || t == "" || t.IsSpecial() {
		return ""
	}
	return t
}

// param expands {{{name|default}}}: the argument of that name, else the
// default, else the parameter as written.
func (e *expander) param(n *node, f *frame, o *out) { e.nested(n, f, o, e.paramIn) }

func (e *expander) paramIn(n *node, f *frame, o *out) {
	ps := f.t.partsOf(n)
	name := e.str(f.t.nodes(&ps[0]), f, true)
	if e.stopped() || !e.spend(len(name)) { // looked up
		return
	}
	if f.args != nil {
		if v, ok := f.args.get(name); ok {
			e.put(o, v, false)
			return
		}
	}
	if len(ps) > 1 {
		e.expandNodes(f.t.nodes(&ps[1]), f, o)
		return
	}
	if n.plain && f.depth == 0 && o.page {
		e.put(o, n.text, true)
		return
	}
	e.put(o, "{{{"+name+"}}}", false)
}

type kv struct {
	name, value string
	named       bool
}

// args are a template's arguments by name ("1", "2"… for positional ones).
type args struct {
	list  []kv
	index map[string]int // for long lists
}

// noArgs are the arguments of a call without any; never changed.
var noArgs args

func (a *args) find(name string) int {
	if a.index != nil {
		if i, ok := a.index[name]; ok {
			return i
		}
		return -1
	}
	for i := range a.list {
		if a.list[i].name == name {
			return i
		}
	}
	return -1
}

func (a *args) get(name string) (string, bool) {
	if i := a.find(name); i >= 0 {
		return a.list[i].value, true
	}
	return "", false
}

func (a *args) set(name, value string, named bool) {
	if i := a.find(name); i >= 0 {
		a.list[i] = kv{name, value, named}
		return
	}
	a.list = append(a.list, kv{name, value, named})
	switch {
	case a.index != nil:
		a.index[name] = len(a.list) - 1
	case len(a.list) > 8:
		a.index = make(map[string]int, 2*len(a.list))
		for i, p := range a.list {
			a.index[p.name] = i
		}
	}
}

// size is the length of the arguments as display writes them, with
// their separators.
func (a *args) size() int {
	n := 0
	for _, p := range a.list {
		n += len(p.name) + len(p.value) + 2
	}
	return n
}

// display is the arguments as they would be written, for keep.
func (a *args) display() []string {
	out := make([]string, len(a.list))
	for i, p := range a.list {
		if p.named {
			out[i] = p.name + "=" + p.value
		} else {
			out[i] = p.value
		}
	}
	return out
}

// bitset is a set of small integers (page ids).
type bitset []uint64

func (b *bitset) set(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) clear(i int) {
	if i/64 < len(b) {
		b[i/64] &^= 1 << (i % 64)
	}
}

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

func (b *bitset) or(c bitset) {
	for len(*b) < len(c) {
		*b = append(*b, 0)
	}
	for i, w := range c {
		(*b)[i] |= w
	}
}

func (b bitset) intersects(c bitset) bool {
	for i := range min(len(b), len(c)) {
		if b[i]&c[i] != 0 {
			return true
		}
	}
	return false
}

// PHP's trim, which MediaWiki applies to names, values and results.
const space = " \t\n\r\x00\x0b"

func trimSpace(s string) string { return strings.Trim(s, space) }
func trimLeft(s string) string  { return strings.TrimLeft(s, space) }

// trimRightFrom drops trailing white space from b, not before start.
func trimRightFrom(b []byte, start int) []byte {
	for len(b) > start && strings.IndexByte(space, b[len(b)-1]) >= 0 {
		b = b[:len(b)-1]
	}
	return b
}
