package render

import (
	"strconv"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// footnotes is PHP Markdown Extra's footnotes: "[^label]" refers to a note
// defined anywhere on the page by "[^label]: text"; the notes are numbered
// in the order of their first reference and listed at the end, each with a
// link back to every reference. It uses goldmark's footnote nodes with its
// own parsing and numbering: goldmark's extension compares every reference
// with every definition and sorts the notes by insertion, both quadratic in
// the number of notes, where a map and one pass do.
//
// Ids are "_fn-N" for a note and "_fnref-N" (then "_fnref-N-2", …) for its
// references. anchorID never starts an id with an underscore, so no
// heading can take a footnote's id, and the prefix keeps them apart from
// the ids of the page around the article.
type footnotes struct{}

func (footnotes) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithBlockParsers(util.Prioritized(depthLimited{footnoteBlockParser{}}, 999)),
		parser.WithInlineParsers(util.Prioritized(footnoteRefParser{}, 101)),
		parser.WithASTTransformers(util.Prioritized(footnoteTransformer{}, 999)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(footnoteRenderer{}, 100)))
}

// footnoteLabelLimit is the longest label, as for link labels in CommonMark.
const footnoteLabelLimit = 999

var footnoteKey = parser.NewContextKey()

// footnoteState is what one parse knows about its footnotes.
type footnoteState struct {
	list  *extast.FootnoteList        // the definitions, in source order
	defs  map[string]*extast.Footnote // by normalized label; the first definition wins
	count int                         // notes referred to so far
	refs  []*extast.FootnoteLink      // every reference, in document order
}

func footnotesOf(pc parser.Context) *footnoteState {
	return pc.ComputeIfAbsent(footnoteKey, func() any {
		return &footnoteState{defs: map[string]*extast.Footnote{}}
	}).(*footnoteState)
}

// footnoteBlockParser parses "[^label]: text" and the indented lines after
// it, as goldmark's footnote block parser does.
type footnoteBlockParser struct{}

func (footnoteBlockParser) Trigger() []byte { return []byte{'['} }

func (footnoteBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, segment := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || pos+1 >= len(line) || line[pos] != '[' || line[pos+1] != '^' {
		return nil, parser.NoChildren
	}
	pos++
	open := pos + 1
	closure := util.FindClosure(line[open:min(len(line), open+footnoteLabelLimit)], '[', ']', false, false) //nolint:staticcheck // deprecated for text across lines; a label is on one
	if closure < 0 {
		return nil, parser.NoChildren
	}
	closes := open + closure
	next := closes + 1
	if next >= len(line) || line[next] != ':' {
		return nil, parser.NoChildren
	}
	padding := segment.Padding
	label := reader.Value(text.NewSegment(segment.Start+open-padding, segment.Start+closes-padding))
	if util.IsBlank(label) {
		return nil, parser.NoChildren
	}
	item := extast.NewFootnote(label)
	pos = next + 1 - padding
	if pos >= len(line) {
		reader.Advance(pos)
		return item, parser.NoChildren
	}
	reader.AdvanceAndSetPadding(pos, padding)
	return item, parser.HasChildren
}

func (footnoteBlockParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	line, _ := reader.PeekLine()
	if util.IsBlank(line) {
		return parser.Continue | parser.HasChildren
	}
	childpos, padding := util.IndentPosition(line, reader.LineOffset(), 4)
	if childpos < 0 {
		return parser.Close
	}
	reader.AdvanceAndSetPadding(childpos, padding)
	return parser.Continue | parser.HasChildren
}

// Close moves the definition into the page's footnote list, which stands
// where the first definition was until footnoteTransformer moves it to the
// end (inline parsing reaches only nodes in the document).
func (footnoteBlockParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {
	st := footnotesOf(pc)
	parent := node.Parent()
	if st.list == nil {
		st.list = extast.NewFootnoteList()
		parent.InsertBefore(parent, node, st.list)
	}
	parent.RemoveChild(parent, node)
	st.list.AppendChild(st.list, node)
	fn := node.(*extast.Footnote)
	if label := util.ToLinkReference(fn.Ref); st.defs[label] == nil {
		st.defs[label] = fn
	}
}

func (footnoteBlockParser) CanInterruptParagraph() bool { return true }
func (footnoteBlockParser) CanAcceptIndentedLine() bool { return false }

// footnoteRefParser parses "[^label]" where label is defined on the page.
type footnoteRefParser struct{}

// Trigger includes '!' so that "![^1]" is a "!" and a reference, not an image.
func (footnoteRefParser) Trigger() []byte { return []byte{'!', '['} }

func (footnoteRefParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	pos := 1
	if len(line) > 0 && line[0] == '!' {
		pos++
	}
	if pos+1 >= len(line) || line[pos-1] != '[' || line[pos] != '^' {
		return nil
	}
	st, _ := pc.Get(footnoteKey).(*footnoteState)
	if st == nil {
		return nil // no definitions on the page
	}
	open := pos + 1
	closure := util.FindClosure(line[open:min(len(line), open+footnoteLabelLimit)], '[', ']', false, false) //nolint:staticcheck // as in Open
	if closure < 0 {
		return nil
	}
	closes := open + closure
	def := st.defs[util.ToLinkReference(block.Value(text.NewSegment(segment.Start+open, segment.Start+closes)))]
	if def == nil {
		return nil
	}
	block.Advance(closes + 1)
	if def.Index < 0 {
		st.count++
		def.Index = st.count
	}
	link := extast.NewFootnoteLink(def.Index)
	st.refs = append(st.refs, link)
	if line[0] == '!' {
		parent.AppendChild(parent, ast.NewTextSegment(text.NewSegment(segment.Start, segment.Start+1)))
	}
	return link
}

// footnoteTransformer numbers the references, drops definitions nothing
// refers to, adds the back-links and moves the list to the end of the page.
type footnoteTransformer struct{}

func (footnoteTransformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	st, _ := pc.Get(footnoteKey).(*footnoteState)
	if st == nil || st.list == nil {
		return
	}
	pc.Set(footnoteKey, nil)
	list := st.list
	if st.count == 0 {
		list.Parent().RemoveChild(list.Parent(), list)
		return
	}
	uses := make([]int, st.count+1)
	for _, l := range st.refs {
		l.RefIndex = uses[l.Index]
		uses[l.Index]++
	}
	for _, l := range st.refs {
		l.RefCount = uses[l.Index]
	}
	byIndex := make([]*extast.Footnote, st.count+1)
	for c := list.FirstChild(); c != nil; c = c.NextSibling() {
		if fn := c.(*extast.Footnote); fn.Index > 0 {
			byIndex[fn.Index] = fn
		}
	}
	list.RemoveChildren(list)
	for i := 1; i <= st.count; i++ {
		fn := byIndex[i]
		// The back-links end the note's last paragraph, or one of their own.
		container := fn.LastChild()
		if container == nil || container.Kind() != ast.KindParagraph {
			container = ast.NewParagraph()
			fn.AppendChild(fn, container)
		}
		for r := 0; r < uses[i]; r++ {
			b := extast.NewFootnoteBacklink(i)
			b.RefCount, b.RefIndex = uses[i], r
			container.AppendChild(container, b)
		}
		list.AppendChild(list, fn)
	}
	list.Count = st.count
	doc.AppendChild(doc, list)
}

// footnoteRenderer writes footnotes in the sanitizer's canonical form.
type footnoteRenderer struct{}

func (footnoteRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(extast.KindFootnoteLink, renderFootnoteLink)
	reg.Register(extast.KindFootnoteBacklink, renderFootnoteBacklink)
	reg.Register(extast.KindFootnote, renderFootnote)
	reg.Register(extast.KindFootnoteList, renderFootnoteList)
}

// footnoteRefID is the id of the refIndex-th reference (from 0) to note n.
func footnoteRefID(n, refIndex int) string {
	id := "_fnref-" + strconv.Itoa(n)
	if refIndex > 0 {
		id += "-" + strconv.Itoa(refIndex+1)
	}
	return id
}

func renderFootnoteLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*extast.FootnoteLink)
	num := strconv.Itoa(n.Index)
	_, _ = w.WriteString(`<sup id="` + footnoteRefID(n.Index, n.RefIndex) + `">`)
	writeAnchor(w, "", "#_fn-"+num, ` role="doc-noteref"`, false)
	_, _ = w.WriteString(num + "</a></sup>")
	return ast.WalkContinue, nil
}

func renderFootnoteBacklink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*extast.FootnoteBacklink)
	// A no-break space keeps the arrow with what comes before it; U+FE0E
	// asks for the arrow as text, not as an emoji.
	if n.PreviousSibling() != nil {
		_, _ = w.WriteString("\u00a0")
	}
	writeAnchor(w, "", "#"+footnoteRefID(n.Index, n.RefIndex), ` role="doc-backlink"`, false)
	_, _ = w.WriteString("\u21a9\ufe0e")
	if n.RefIndex > 0 {
		_, _ = w.WriteString("<sup>" + strconv.Itoa(n.RefIndex+1) + "</sup>")
	}
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

func renderFootnote(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString(`<li id="_fn-` + strconv.Itoa(node.(*extast.Footnote).Index) + "\">\n")
	} else {
		_, _ = w.WriteString("</li>\n")
	}
	return ast.WalkContinue, nil
}

func renderFootnoteList(w util.BufWriter, _ []byte, _ ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<div class=\"footnotes\" role=\"doc-endnotes\">\n<hr>\n<ol>\n")
	} else {
		_, _ = w.WriteString("</ol>\n</div>\n")
	}
	return ast.WalkContinue, nil
}
