package render

import (
	"context"
	"slices"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/wikid/wikid/internal/wiki"
)

// ExpandTildes replaces each run of three to five tildes in src, outside
// the text that shows literally (see literalRanges), by sig(n), n the
// number of tildes: MediaWiki's signatures ~~~ (name), ~~~~ (name and time)
// and ~~~~~ (time). A longer run is read from its start as fives, then a
// four or a three; one or two tildes left over stay. A run preceded by a
// backslash is escaped and stays as written.
func (r *Renderer) ExpandTildes(src string, sig func(n int) string) (string, error) {
	if !strings.Contains(src, "~~~") {
		return src, nil
	}
	lit, err := r.literalRanges(src)
	if err != nil {
		return "", err
	}
	return ReplaceTildes(src, func(i int) bool { return (i > 0 && src[i-1] == '\\') || InRanges(lit, i) }, sig), nil
}

// ReplaceTildes replaces each run of three to five tildes in src that
// starts at no offset skip reports by sig(n), n the number of tildes; a
// longer run is read from its start as fives, then a four or a three, and
// one or two tildes left over stay. The expansion of signatures in every
// markup (ExpandTildes), each with its own text to skip.
func ReplaceTildes(src string, skip func(i int) bool, sig func(n int) string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(src); {
		if src[i] != '~' {
			i++
			continue
		}
		j := i
		for j < len(src) && src[j] == '~' {
			j++
		}
		run := j - i
		if run < 3 || skip(i) {
			i = j
			continue
		}
		b.WriteString(src[last:i])
		for run >= 3 {
			n := min(run, 5)
			b.WriteString(sig(n))
			run -= n
		}
		b.WriteString(src[j-run : j])
		last, i = j, j
	}
	if last == 0 {
		return src
	}
	b.WriteString(src[last:])
	return b.String()
}

// InRanges reports whether offset i is in one of the sorted, disjoint
// ranges rs.
func InRanges(rs [][2]int, i int) bool {
	k, _ := slices.BinarySearchFunc(rs, i, func(r [2]int, i int) int {
		switch {
		case r[1] <= i:
			return -1
		case r[0] > i:
			return 1
		}
		return 0
	})
	return k < len(rs) && rs[k][0] <= i && i < rs[k][1]
}

// literalRanges returns the byte ranges of src whose text shows as
// written, sorted and merged: code spans, fenced code blocks with their
// fences, indented code blocks (from the Markdown parse, so that the
// parser decides what is code), and <nowiki>, <pre> and HTML comments
// (found as the template preprocessor finds them, in the text).
func (r *Renderer) literalRanges(src string) (rs [][2]int, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != errTimeout {
				panic(v)
			}
			rs, err = nil, wiki.Errorf(wiki.KindTooLarge, "the page is too large or complex to expand its signatures (~~~~) in time; sign in a smaller page or section")
		}
	}()
	b, done := r.budget(context.Background())
	defer done()
	source, doc, _ := r.parse(src, b)
	off := len(src) - len(source)
	var blocks []int // the start of every block, in document order
	var codeBlocks []int
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.Type() == ast.TypeBlock && n.Pos() >= 0 {
			blocks = append(blocks, n.Pos())
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if n.Pos() >= 0 {
				codeBlocks = append(codeBlocks, n.Pos())
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			first, okF := n.FirstChild().(*ast.Text)
			last, okL := n.LastChild().(*ast.Text)
			if okF && okL {
				rs = append(rs, [2]int{first.Segment.Start + off, last.Segment.Stop + off})
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	slices.Sort(blocks)
	// A code block runs from its first line to where the next block
	// starts: its closing fence, and only blank lines or container
	// markers after it, are in between.
	for _, p := range codeBlocks {
		start := strings.LastIndexByte(string(source[:p]), '\n') + 1
		end := len(source)
		if k, _ := slices.BinarySearch(blocks, p+1); k < len(blocks) {
			end = blocks[k]
		}
		rs = append(rs, [2]int{start + off, end + off})
	}
	rs = append(rs, tagRanges(src)...)
	slices.SortFunc(rs, func(a, b [2]int) int { return a[0] - b[0] })
	merged := rs[:0]
	for _, x := range rs {
		if n := len(merged); n > 0 && x[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], x[1])
			continue
		}
		merged = append(merged, x)
	}
	return merged, nil
}

// tagRanges returns the ranges of <nowiki>…</nowiki>, <pre>…</pre> and
// <!--…--> in src, each running to the end of src when not closed (tag
// names in any case).
func tagRanges(src string) [][2]int {
	lower := asciiLower(src)
	var rs [][2]int
	for i := 0; i < len(lower); {
		k := strings.IndexByte(lower[i:], '<')
		if k < 0 {
			break
		}
		i += k
		var closing string
		switch {
		case strings.HasPrefix(lower[i:], "<!--"):
			closing = "-->"
		case strings.HasPrefix(lower[i:], "<nowiki>"):
			closing = "</nowiki>"
		case strings.HasPrefix(lower[i:], "<pre>"), strings.HasPrefix(lower[i:], "<pre "):
			closing = "</pre>"
		default:
			i++
			continue
		}
		end := len(lower)
		if e := strings.Index(lower[i+1:], closing); e >= 0 {
			end = i + 1 + e + len(closing)
		}
		rs = append(rs, [2]int{i, end})
		i = end
	}
	return rs
}

// asciiLower lowers ASCII letters only, so that offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// WikiLinks returns the targets of the wiki links in src, special pages
// included, in order (for checking what a signature links to).
func (r *Renderer) WikiLinks(src string) (out []wiki.Title) {
	defer func() {
		if v := recover(); v != nil {
			if v != errTimeout {
				panic(v)
			}
			out = nil
		}
	}()
	b, done := r.budget(context.Background())
	defer done()
	_, doc, _ := r.parse(src, b)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*wikiLink); ok && entering && !l.Invalid && l.Target != "" && !l.Category {
			out = append(out, l.Target)
		}
		return ast.WalkContinue, nil
	})
	return out
}
