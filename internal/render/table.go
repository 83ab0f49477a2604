package render

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

var maskedSourceKey = parser.NewContextKey()

// wikiLinkCells keeps a wiki link's pipe from splitting a GFM table cell:
// in "| [[Target|label]] | x |" the first pipe belongs to the link, as in
// MediaWiki tables ("\|" still works too). goldmark's table transformer
// splits rows on every unescaped pipe and reads the row text only through
// reader.Source(), so it is handed a copy of the source in which the pipes
// inside [[…]] are masked: the cells it makes are segments by position,
// the same in the real source, which the inline parsers then read.
type wikiLinkCells struct{ parser.ParagraphTransformer }

func (t wikiLinkCells) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() < 2 {
		return // a table has a header and a delimiter row
	}
	source := reader.Source()
	var masked []byte
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		wikiLinkPipes(source[seg.Start:seg.Stop], func(j int) {
			if masked == nil {
				// One copy per page, made when a paragraph first needs it.
				masked = pc.ComputeIfAbsent(maskedSourceKey, func() any {
					return append([]byte(nil), source...)
				}).([]byte)
			}
			masked[seg.Start+j] = ' '
		})
	}
	if masked != nil {
		reader = text.NewReader(masked)
	}
	t.ParagraphTransformer.Transform(node, reader, pc)
}

// wikiLinkPipes calls mask with the offset of every unescaped pipe inside a
// [[…]] of line that the wiki link parser could take as a link: from the
// last "[[" before a "]]", at most maxWikiLink bytes apart, or from a
// [[File:…]] whose caption holds links, at most maxFileEmbed bytes apart
// (enclosedNested). It runs in one pass, so a line of many "[[" costs
// linear time.
func wikiLinkPipes(line []byte, mask func(int)) {
	open, outer := -1, -1 // the last "[["; the file embed around it
	for i := 0; i+1 < len(line); i++ {
		switch {
		case line[i] == '[' && line[i+1] == '[':
			switch {
			case outer >= 0 && open != outer:
				outer = -1 // a link in a caption's link: no embed
			case open >= 0 && outer < 0 && hasFilePrefix(line[open:]):
				outer = open
			}
			open = i
		case line[i] == ']' && line[i+1] == ']' && open >= 0:
			limit := maxWikiLink
			if open == outer || outer < 0 && hasFilePrefix(line[open:]) {
				limit = maxFileEmbed
			}
			if i-open <= limit {
				for j := open + 2; j < i; j++ {
					if line[j] == '|' && line[j-1] != '\\' {
						mask(j)
					}
				}
			}
			if outer >= 0 && open != outer {
				open = outer // back in the caption
			} else {
				open, outer = -1, -1
			}
			i++
		}
	}
}
