package wikitext

import (
	"strings"
)

// maxListDepth bounds list nesting: the prefix of a line is read up to
// this many characters, the rest is text.
const maxListDepth = 64

// blockPass is MediaWiki's BlockLevelPass: paragraphs, lists ("*", "#",
// ":", ";" in any nesting, ";term:definition") and preformatted lines
// (a leading space), decided line by line from the tags and block markers
// on each line.
type blockPass struct {
	out           strings.Builder
	lastPrefix    string
	lastParagraph string // "", "p" or "pre"
	dtOpen        bool
	inBlockElem   bool
	inBlockquote  bool
	pendingPTag   string
	hasPending    bool
	// htmlLists counts the <ul>, <ol> and <dl> the author's HTML has
	// open: blank lines between their items make no paragraphs.
	htmlLists int
}

func (d *doc) blocks(s string) string {
	p := &blockPass{}
	p.out.Grow(len(s) + len(s)/4)
	n := strings.Count(s, "\n")
	lineNum := 0
	for line := range lines(s) {
		d.b.check()
		t := strings.TrimSuffix(line, "\n")
		prefixLen := 0
		for prefixLen < len(t) && prefixLen < maxListDepth && strings.IndexByte("*#:;", t[prefixLen]) >= 0 {
			prefixLen++
		}
		prefix := t[:prefixLen]
		prefix2 := strings.ReplaceAll(prefix, ";", ":")
		t = t[prefixLen:]
		lastPrefixLen := len(p.lastPrefix)
		switch {
		case prefixLen > 0 && p.lastPrefix == prefix2:
			p.out.WriteString(p.nextItem(prefix[prefixLen-1]))
			p.hasPending = false
			if prefix[prefixLen-1] == ';' {
				if term, def, ok := findColon(t); ok {
					t = strings.TrimLeft(def, " \t")
					p.out.WriteString(strings.TrimSpace(term))
					p.out.WriteString(p.nextItem(':'))
				}
			}
		case prefixLen > 0 || lastPrefixLen > 0:
			common := 0
			for common < prefixLen && common < lastPrefixLen && prefix[common] == p.lastPrefix[common] {
				common++
			}
			p.hasPending = false
			for common < lastPrefixLen {
				p.out.WriteString(p.closeList(p.lastPrefix[lastPrefixLen-1]))
				lastPrefixLen--
			}
			if prefixLen <= common && common > 0 {
				p.out.WriteString(p.nextItem(prefix[common-1]))
			}
			// A ":" continuing a ";" line's list closes its term.
			if p.dtOpen && common > 0 && prefix[common-1] == ':' {
				p.out.WriteString(p.nextItem(':'))
			}
			for prefixLen > common {
				c := prefix[common]
				p.out.WriteString(p.openList(c))
				if c == ';' {
					if term, def, ok := findColon(t); ok {
						t = strings.TrimLeft(def, " \t")
						p.out.WriteString(strings.TrimSpace(term))
						p.out.WriteString(p.nextItem(':'))
					}
				}
				common++
			}
			p.lastPrefix = prefix2
		}
		if prefixLen == 0 {
			open, closing := blockTags(t)
			switch {
			case open || closing:
				p.hasPending = false
				p.out.WriteString(p.closeParagraph(false))
				p.blockquotes(t)
				p.inBlockElem = !closing
			case !p.inBlockElem:
				if strings.HasPrefix(t, " ") && (p.lastParagraph == "pre" || strings.TrimSpace(t) != "") && !p.inBlockquote {
					if p.lastParagraph != "pre" {
						p.hasPending = false
						p.out.WriteString(p.closeParagraph(false) + "<pre>")
						p.lastParagraph = "pre"
					}
					t = t[1:]
				} else if strings.TrimSpace(t) == "" && p.htmlLists > 0 {
					t = ""
				} else if strings.TrimSpace(t) == "" {
					switch {
					case p.hasPending:
						p.out.WriteString(p.pendingPTag + "<br>")
						p.hasPending = false
						p.lastParagraph = "p"
					case p.lastParagraph != "p":
						p.out.WriteString(p.closeParagraph(false))
						p.pendingPTag, p.hasPending = "<p>", true
					default:
						p.pendingPTag, p.hasPending = "</p><p>", true
					}
				} else if p.hasPending {
					p.out.WriteString(p.pendingPTag)
					p.hasPending = false
					p.lastParagraph = "p"
				} else if p.lastParagraph != "p" {
					p.out.WriteString(p.closeParagraph(false) + "<p>")
					p.lastParagraph = "p"
				}
			}
			p.countLists(t)
		} else {
			t = strings.TrimLeft(t, " \t")
		}
		if !p.hasPending {
			p.out.WriteString(t)
			if prefixLen == 0 && lineNum < n {
				p.out.WriteByte('\n')
			}
		}
		lineNum++
	}
	for i := len(p.lastPrefix); i > 0; i-- {
		p.out.WriteString(p.closeList(p.lastPrefix[i-1]))
	}
	if p.lastParagraph != "" {
		p.out.WriteString(p.closeParagraph(true))
	}
	return p.out.String()
}

func (p *blockPass) closeParagraph(atEnd bool) string {
	r := ""
	if p.lastParagraph != "" {
		r = "</" + p.lastParagraph + ">"
		if !atEnd {
			r += "\n"
		}
	}
	p.lastParagraph = ""
	return r
}

func (p *blockPass) openList(c byte) string {
	r := p.closeParagraph(false)
	switch c {
	case '*':
		return r + "<ul><li>"
	case '#':
		return r + "<ol><li>"
	case ':':
		return r + "<dl><dd>"
	default:
		p.dtOpen = true
		return r + "<dl><dt>"
	}
}

func (p *blockPass) nextItem(c byte) string {
	if c == '*' || c == '#' {
		return "</li>\n<li>"
	}
	close := "</dd>\n"
	if p.dtOpen {
		close = "</dt>\n"
	}
	if c == ';' {
		p.dtOpen = true
		return close + "<dt>"
	}
	p.dtOpen = false
	return close + "<dd>"
}

func (p *blockPass) closeList(c byte) string {
	switch c {
	case '*':
		return "</li></ul>"
	case '#':
		return "</li></ol>"
	}
	if p.dtOpen {
		p.dtOpen = false
		return "</dt></dl>"
	}
	return "</dd></dl>"
}

// countLists follows the author's list tags on a line.
func (p *blockPass) countLists(t string) {
	for i := strings.IndexByte(t, '<'); i >= 0 && i < len(t); {
		rest := t[i+1:]
		switch {
		case tagNameAt(rest, "ul"), tagNameAt(rest, "ol"), tagNameAt(rest, "dl"):
			p.htmlLists++
		case tagNameAt(rest, "/ul"), tagNameAt(rest, "/ol"), tagNameAt(rest, "/dl"):
			p.htmlLists = max(0, p.htmlLists-1)
		}
		k := strings.IndexByte(rest, '<')
		if k < 0 {
			break
		}
		i += 1 + k
	}
}

// blockquotes follows the <blockquote> tags of a line: inside one, a
// leading space makes no preformatted text.
func (p *blockPass) blockquotes(t string) {
	for i := 0; i < len(t); i++ {
		if t[i] != '<' {
			continue
		}
		switch {
		case strings.HasPrefix(t[i:], "<blockquote"):
			p.inBlockquote = true
		case strings.HasPrefix(t[i:], "</blockquote"):
			p.inBlockquote = false
		}
	}
}

// blockOpeners and blockClosers are the tags whose presence on a line
// makes it no paragraph (MediaWiki's openMatch and closeMatch), by name
// ("/x" for an end tag).
var (
	blockOpeners = setOf("table", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr", "p", "ul", "ol", "dl", "li", "/tr", "/td", "/th")
	blockClosers = setOf("/table", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6", "td", "th", "blockquote", "/blockquote", "div", "/div", "hr", "/pre", "/p", "/li", "/ul", "/ol", "/dl", "center", "/center", "caption", "/caption")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// blockTags reports whether line t holds a tag or marker that opens or
// closes a block.
func blockTags(t string) (open, closing bool) {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '<':
			// The tag pass wrote every tag in lower case: "<name" then a
			// space or '>'.
			j := i + 1
			if j < len(t) && t[j] == '/' {
				j++
			}
			for j < len(t) && (isAlnum(t[j])) {
				j++
			}
			if j < len(t) && (t[j] == '>' || t[j] == ' ') {
				name := t[i+1 : j]
				open = open || blockOpeners[name]
				closing = closing || blockClosers[name]
			}
		case markerChar:
			if kind, _, end, ok := readMarker(t, i); ok {
				switch kind {
				case kindHeadOpen:
					open = true
				case kindHeadClose, kindBlock:
					closing = true
				}
				i = end - 1
			}
		}
	}
	return open, closing
}

// tagNameAt reports whether s starts with the tag name name (any case),
// followed by '>', a space or the end of s.
func tagNameAt(s, name string) bool {
	if len(s) < len(name) || !strings.EqualFold(s[:len(name)], name) {
		return false
	}
	return len(s) == len(name) || s[len(name)] == '>' || s[len(name)] == ' '
}

// findColon splits ";term:definition" at the first ':' outside tags,
// elements and link markers.
func findColon(t string) (before, after string, ok bool) {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case ':':
			if depth == 0 {
				return t[:i], t[i+1:], true
			}
		case '<':
			e := strings.IndexByte(t[i:], '>')
			if e < 0 {
				return "", "", false
			}
			tag := t[i : i+e+1]
			switch {
			case strings.HasPrefix(tag, "</"):
				depth = max(0, depth-1)
			case strings.HasSuffix(tag, "/>"), strings.HasPrefix(tag, "<br"), strings.HasPrefix(tag, "<hr"), strings.HasPrefix(tag, "<wbr"):
			default:
				depth++
			}
			i += e
		case markerChar:
			if kind, _, end, ok := readMarker(t, i); ok {
				switch kind {
				case kindLinkOpen:
					depth++
				case kindLinkClose:
					depth = max(0, depth-1)
				}
				i = end - 1
			}
		}
	}
	return "", "", false
}
