package wikitext

import (
	"strconv"
	"strings"
)

// Markers stand in the text for what the later passes must not look into:
// the output of extension tags, links, headings. A marker is markerChar,
// a kind byte, a decimal index into doc.marks (or doc.links, doc.heads)
// and markerChar. markerChar cannot come from the source: parse replaces
// it there.
const markerChar = '\x7f'

// Marker kinds.
const (
	kindInline    = 'i' // HTML that is text to the block pass (nowiki, ref, inline file…)
	kindBlock     = 'b' // HTML that is a block (pre, code, references, thumbnails)
	kindLinkOpen  = 'L' // the <a> of doc.links[n], known once existence is
	kindLinkClose = 'l' // its </a>
	kindHeadOpen  = 'H' // the start of doc.heads[n]
	kindHeadClose = 'G' // its end
)

// mark is what a marker stands for.
type mark struct {
	kind  byte
	html  string // may hold markers itself
	plain string // its text for the search index
	// code blocks are highlighted when rendered, not when parsed
	code, lang string
	toc        bool // the __TOC__ place
	refs       *refList
	file       *fileEmbed
}

// addMark stores m and returns its marker.
func (d *doc) addMark(m mark) string {
	d.marks = append(d.marks, m)
	return marker(m.kind, len(d.marks)-1)
}

func marker(kind byte, n int) string {
	return string(rune(markerChar)) + string(kind) + strconv.Itoa(n) + string(rune(markerChar))
}

// readMarker reads the marker at s[i] == markerChar: its kind, index and
// the offset past it; ok is false when none stands there.
func readMarker(s string, i int) (kind byte, n, end int, ok bool) {
	if i+3 >= len(s)+1 || i+2 >= len(s) {
		return 0, 0, 0, false
	}
	kind = s[i+1]
	j := i + 2
	for j < len(s) && j-i < 12 && s[j] >= '0' && s[j] <= '9' {
		n = n*10 + int(s[j]-'0')
		j++
	}
	if j == i+2 || j >= len(s) || s[j] != markerChar {
		return 0, 0, 0, false
	}
	return kind, n, j + 1, true
}

// extTags are the tags whose content the strip pass takes out of the text.
var extTags = []string{"nowiki", "pre", "syntaxhighlight", "source", "math", "references", "ref"}

// maxTagLen bounds how far a tag's attributes may run before its '>', so
// that many unterminated "<ref" cost linear time.
const maxTagLen = 1024

// startTag reads a start tag of one of names at s[i] == '<': its name,
// the text of its attributes, whether it closes itself, and the offset
// past it.
func startTag(s string, i int, names []string) (name, attrs string, self bool, end int, ok bool) {
	// The name must end where the tag's does: "<references>" is no "ref"
	// tag, whichever of them names lists first.
	j := 0
	for _, t := range names {
		k := i + 1 + len(t)
		if k < len(s) && strings.EqualFold(s[i+1:k], t) && (s[k] == '>' || s[k] == '/' || isSpace(s[k])) {
			name, j = t, k
			break
		}
	}
	if name == "" {
		return "", "", false, 0, false
	}
	limit := min(len(s), j+maxTagLen)
	k := strings.IndexByte(s[j:limit], '>')
	if k < 0 {
		return "", "", false, 0, false
	}
	end = j + k + 1
	attrs = s[j : end-1]
	if strings.HasSuffix(attrs, "/") {
		self = true
		attrs = attrs[:len(attrs)-1]
	}
	return name, attrs, self, end, true
}

// closeTag finds </name …> (any case) from i: where it starts and ends.
func closeTag(s string, i int, name string) (start, end int, ok bool) {
	for {
		k := strings.Index(s[i:], "</")
		if k < 0 {
			return 0, 0, false
		}
		start = i + k
		j := start + 2
		if len(s)-j >= len(name) && strings.EqualFold(s[j:j+len(name)], name) {
			j += len(name)
			for j < len(s) && j-start < 64 && isSpace(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '>' {
				return start, j + 1, true
			}
		}
		i = start + 2
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// strip is the first pass: it removes comments and replaces extension
// tags with markers. refs is false inside a reference, where <ref> and
// <references> are text.
func (d *doc) strip(s string, refs bool) string {
	out := make([]byte, 0, len(s)+len(s)/8)
	noClose := map[string]bool{}
	last := 0
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			break
		}
		i += k
		d.b.check()
		if strings.HasPrefix(s[i:], "<!--") {
			out = append(out, s[last:i]...)
			end := len(s)
			if e := strings.Index(s[i+4:], "-->"); e >= 0 {
				end = i + 4 + e + 3
			}
			// A comment alone on its line (not the first) takes the line with
			// it, as in MediaWiki.
			ls := len(out)
			for ls > 0 && (out[ls-1] == ' ' || out[ls-1] == '\t') {
				ls--
			}
			e := end
			for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
				e++
			}
			if ls > 0 && out[ls-1] == '\n' && e < len(s) && s[e] == '\n' {
				out = out[:ls]
				end = e + 1
			}
			i, last = end, end
			continue
		}
		name, attrs, self, end, ok := startTag(s, i, extTags)
		if !ok || (!refs && (name == "ref" || name == "references")) {
			i++
			continue
		}
		content, after := "", end
		if !self {
			if noClose[name] {
				i++
				continue
			}
			cs, ce, ok := closeTag(s, end, name)
			if !ok {
				noClose[name] = true
				i++
				continue
			}
			content, after = s[end:cs], ce
		}
		out = append(out, s[last:i]...)
		out = append(out, d.extension(name, attrs, content, self)...)
		i, last = after, after
	}
	out = append(out, s[last:]...)
	return string(out)
}

// extension returns the marker (or text) an extension tag becomes.
func (d *doc) extension(name, attrs, content string, self bool) string {
	switch name {
	case "nowiki":
		if self {
			return d.addMark(mark{kind: kindInline})
		}
		return d.addMark(mark{kind: kindInline, html: escapeAllowEntities(content), plain: content})
	case "pre":
		// <nowiki> inside <pre> only keeps its content from being read.
		content = removeNowikiTags(content)
		return d.addMark(mark{kind: kindBlock, html: d.openTag("pre", attrs) + escapeAllowEntities(strings.TrimPrefix(content, "\n")) + "</pre>", plain: content})
	case "syntaxhighlight", "source":
		lang := attrValue(attrs, "lang")
		inline := hasAttr(attrs, "inline")
		code := strings.Trim(content, "\n")
		if inline {
			return d.addMark(mark{kind: kindInline, html: "<code>" + escapeText(strings.TrimSpace(code)) + "</code>", plain: code})
		}
		return d.addMark(mark{kind: kindBlock, code: code, lang: lang, plain: code})
	case "math":
		return d.addMark(mark{kind: kindInline, html: "<code>" + escapeText(content) + "</code>", plain: content})
	case "ref":
		return d.ref(attrs, content, self)
	case "references":
		return d.references(attrs, content, self)
	}
	return ""
}

// removeNowikiTags removes <nowiki> and </nowiki> tags (any case).
func removeNowikiTags(s string) string {
	if !strings.Contains(asciiLower(s), "nowiki") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+k])
		i += k
		l := s[i:min(len(s), i+10)]
		switch {
		case len(l) >= 8 && strings.EqualFold(l[:8], "<nowiki>"):
			i += 8
		case len(l) >= 9 && strings.EqualFold(l[:9], "</nowiki>"):
			i += 9
		default:
			b.WriteByte('<')
			i++
		}
	}
	return b.String()
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
