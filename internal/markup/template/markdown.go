package template

import "strings"

// Markdown code is literal: the preprocessor copies fenced code blocks and
// inline code spans without looking inside them, so that examples of
// template syntax show as written. Indented code blocks are not recognized
// (telling one from a continuation line needs the whole block structure);
// a fence or a code span is the way to show template syntax.

// lineEnd returns the offset of the '\n' ending the line at i, or len(s).
func lineEnd(s string, i int) int {
	if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(s)
}

// skipContainers skips what may stand before a fence on its line: indent,
// block quote markers and list item markers, nested or not. It is more
// lenient than CommonMark (any indent): a line taken for a fence that
// Markdown would not take only leaves text unexpanded.
func skipContainers(s string, i, end int) int {
	for i < end {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '>':
			i++
		case (c == '-' || c == '*' || c == '+') && i+1 < end && (s[i+1] == ' ' || s[i+1] == '\t'):
			i += 2
		case c >= '0' && c <= '9':
			j := i
			for j < end && j-i < 9 && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j+1 < end && (s[j] == '.' || s[j] == ')') && (s[j+1] == ' ' || s[j+1] == '\t') {
				i = j + 2
				continue
			}
			return i
		default:
			return i
		}
	}
	return i
}

// fence reports whether a fenced code block opens on the line at i and
// returns the offset just past its closing fence (before the line's '\n'),
// or the end of the text when it is never closed; -1 when there is no
// fence. The closing fence is a line of the same character, at least as
// long as the opening one, with nothing but white space after it.
func fence(s string, i int) int {
	end := lineEnd(s, i)
	j := skipContainers(s, i, end)
	if j >= end || (s[j] != '`' && s[j] != '~') {
		return -1
	}
	c := s[j]
	n := runLength(s[:end], j, c)
	if n < 3 || (c == '`' && strings.IndexByte(s[j+n:end], '`') >= 0) {
		return -1
	}
	for k := end; k < len(s); {
		k++ // past '\n'
		e := lineEnd(s, k)
		t := k
		for t < e && (s[t] == ' ' || s[t] == '\t' || s[t] == '>') {
			t++
		}
		if m := runLength(s[:e], t, c); m >= n && strings.TrimLeft(s[t+m:e], " \t\r") == "" {
			return e
		}
		k = e
	}
	return len(s)
}

// codeSpan handles a run of backticks at i: when a run of the same length
// closes it in the same paragraph, the whole span is skipped as literal
// text; otherwise the run itself is literal. A backtick after a backslash
// opens nothing.
func (p *parser) codeSpan(i int) int {
	s := p.src
	if escaped(s, i) {
		return i + 1
	}
	n := runLength(s, i, '`')
	if q := p.spans.closer(s, i, n); q >= 0 {
		return q + n
	}
	return i + n
}

// escaped reports whether s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	k := i
	for k > 0 && s[k-1] == '\\' {
		k--
	}
	return (i-k)%2 == 1
}

// spanIndex finds the closers of code spans in linear time. For the
// paragraph being scanned it lists the maximal backtick runs by length;
// each opener takes the first run of its length after it. Looking ahead
// from every opener instead would be quadratic on a paragraph of unclosed
// runs of different lengths.
type spanIndex struct {
	end  int           // the indexed paragraph ends here
	runs map[int][]int // start offsets of the runs after the indexed point, by length
}

func (x *spanIndex) closer(s string, i, n int) int {
	if i >= x.end {
		x.build(s, i)
	}
	list := x.runs[n]
	for len(list) > 0 && list[0] <= i {
		list = list[1:]
	}
	if len(list) == 0 {
		x.runs[n] = nil
		return -1
	}
	x.runs[n] = list[1:]
	return list[0]
}

// build indexes the paragraph from i: up to the next blank line.
func (x *spanIndex) build(s string, i int) {
	if x.runs == nil {
		x.runs = make(map[int][]int)
	} else {
		clear(x.runs)
	}
	x.end = paragraphEnd(s, i)
	for k := i; k < x.end; {
		j := strings.IndexByte(s[k:x.end], '`')
		if j < 0 {
			break
		}
		k += j
		n := runLength(s[:x.end], k, '`')
		x.runs[n] = append(x.runs[n], k)
		k += n
	}
}

// paragraphEnd returns the start of the first blank line after the line
// at i, or len(s).
func paragraphEnd(s string, i int) int {
	for k := lineEnd(s, i); k < len(s); {
		k++
		e := lineEnd(s, k)
		if strings.TrimLeft(s[k:e], " \t\r") == "" {
			return k
		}
		k = e
	}
	return len(s)
}
