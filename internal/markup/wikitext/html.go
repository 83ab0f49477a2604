package wikitext

import (
	"strings"

	xhtml "golang.org/x/net/html"

	"github.com/wikid/wikid/internal/render"
)

// escapeText escapes s as text or an attribute value.
func escapeText(s string) string { return render.EscapeText(s) }

// escapeAllowEntities escapes s as text but keeps its valid character
// references (&amp; &nbsp; &#160;), as MediaWiki shows <nowiki> content.
func escapeAllowEntities(s string) string {
	if !strings.ContainsAny(s, "<>&\"") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '&':
			if n := entityLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n - 1
			} else if n := rlmLen(s[i:]); n > 0 {
				b.WriteString("&#x200F;")
				i += n - 1
			} else {
				b.WriteString("&amp;")
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rlmLen returns the length of MediaWiki's own names of the right-to-left
// mark at the start of s (Hebrew and Arabic), or 0.
func rlmLen(s string) int {
	for _, e := range []string{"&\u05e8\u05dc\u05de;", "&\u0631\u0644\u0645;"} {
		if strings.HasPrefix(s, e) {
			return len(e)
		}
	}
	return 0
}

// entityLen returns the length of the valid character reference at the
// start of s ("&amp;", "&#160;", "&#xA0;"), or 0.
func entityLen(s string) int {
	if len(s) < 3 || s[0] != '&' {
		return 0
	}
	j := 1
	if s[1] == '#' {
		j = 2
		hex := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hex {
			j++
		}
		start := j
		cp := 0
		for j < len(s) && j-start < 16 && (isDigit(s[j]) || hex && isHexLetter(s[j])) {
			d := int(s[j] - '0')
			if !isDigit(s[j]) {
				d = int(s[j]|0x20-'a') + 10
			}
			if hex {
				cp = cp*16 + d
			} else {
				cp = cp*10 + d
			}
			cp = min(cp, 0x110000)
			j++
		}
		if j == start || j >= len(s) || s[j] != ';' || !validCodepoint(cp) {
			return 0
		}
		return j + 1
	}
	for j < len(s) && j < 33 && isAlnum(s[j]) {
		j++
	}
	if j == 1 || j >= len(s) || s[j] != ';' {
		return 0
	}
	if xhtml.UnescapeString(s[:j+1]) == s[:j+1] {
		return 0
	}
	return j + 1
}

// validCodepoint reports whether a numeric character reference to cp is
// kept (MediaWiki's Sanitizer::validateCodepoint, less the C1 controls
// HTML maps to other characters).
func validCodepoint(cp int) bool {
	return cp == 0x09 || cp == 0x0a || (cp >= 0x20 && cp < 0x7f) || (cp > 0x9f && cp <= 0xd7ff) ||
		(cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff)
}

func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isHexLetter(c byte) bool { return 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// attr is one attribute of a tag, its value unescaped.
type attr struct{ name, value string }

// parseAttrs reads the attributes of a tag as MediaWiki's sanitizer does:
// name=value, name="value", name='value' or a bare name; anything else is
// skipped. Values have their character references resolved.
func parseAttrs(s string) []attr {
	var as []attr
	i := 0
	for i < len(s) {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			i++
		}
		start := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '/' && s[i] != '>' && s[i] != '"' && s[i] != '\'' {
			i++
		}
		name := strings.ToLower(s[start:i])
		if name == "" {
			if i < len(s) {
				i++
			}
			continue
		}
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		value := ""
		if j < len(s) && s[j] == '=' {
			j++
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			switch {
			case j < len(s) && (s[j] == '"' || s[j] == '\''):
				q := s[j]
				e := strings.IndexByte(s[j+1:], q)
				if e < 0 {
					value, i = s[j+1:], len(s)
				} else {
					value, i = s[j+1:j+1+e], j+2+e
				}
			default:
				e := j
				for e < len(s) && !isSpace(s[e]) {
					e++
				}
				value, i = s[j:e], e
			}
		}
		if validAttrName(name) {
			as = append(as, attr{name, xhtml.UnescapeString(stripMarkers(value))})
		}
	}
	return as
}

func validAttrName(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || c == '-' || c == ':' || c == '_' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return n != ""
}

// attributes returns the attributes of s to write on element, each with a
// leading space; the sanitizer keeps those its policy allows.
func attributes(s, element string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var b strings.Builder
	seen := map[string]bool{}
	for _, a := range parseAttrs(s) {
		// No id of the author's: it could take one of the site's own
		// elements' (which its scripts look up) or the renderer's anchors'.
		if seen[a.name] || strings.HasPrefix(a.name, "on") || a.name == "id" {
			continue
		}
		seen[a.name] = true
		b.WriteByte(' ')
		b.WriteString(a.name)
		b.WriteString(`="`)
		b.WriteString(armor(escapeText(strings.TrimSpace(a.value))))
		b.WriteByte('"')
	}
	return b.String()
}

// armor writes the characters of an attribute value that later passes
// read as markup (links, bold, URLs, magic words) as references.
func armor(v string) string {
	if !strings.ContainsAny(v, "[]{}|:_~") {
		return v
	}
	return attrArmor.Replace(v)
}

var attrArmor = strings.NewReplacer("[", "&#91;", "]", "&#93;", "{", "&#123;", "}", "&#125;", "|", "&#124;",
	"://", "&#58;//", "__", "&#95;_", "~~~", "&#126;~~")

// openTag returns the start tag of element name with the attributes of
// attrs that the sanitizer keeps: the only HTML of the page's that the
// author writes, and so the only HTML that passes through the sanitizer
// (one tag at a time, each distinct tag once per page).
func (d *doc) openTag(name, attrs string) string {
	a := attributes(attrs, name)
	if a == "" {
		return "<" + name + ">"
	}
	tag := "<" + name + a + ">"
	if v, ok := d.sanitized[tag]; ok {
		return v
	}
	v := render.Sanitize(tag)
	if !strings.HasPrefix(v, "<"+name) {
		v = "<" + name + ">" // not reached: the element is allowed
	}
	if d.sanitized == nil {
		d.sanitized = map[string]string{}
	}
	if len(d.sanitized) < maxSanitized {
		d.sanitized[tag] = v
	}
	return v
}

// maxSanitized bounds the tags a page's memo of sanitized tags holds.
const maxSanitized = 4096

// attrValue returns the value of attribute name in s, "" when none (the
// last one when it is repeated).
func attrValue(s, name string) string {
	v := ""
	for _, a := range parseAttrs(s) {
		if a.name == name {
			v = strings.TrimSpace(a.value)
		}
	}
	return v
}

// hasAttr reports whether s has attribute name.
func hasAttr(s, name string) bool {
	for _, a := range parseAttrs(s) {
		if a.name == name {
			return true
		}
	}
	return false
}

// stripMarkers removes the markers from s (an attribute value, a link
// target: places where no HTML may go).
func stripMarkers(s string) string {
	if strings.IndexByte(s, markerChar) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == markerChar {
			if _, _, end, ok := readMarker(s, i); ok {
				i = end - 1
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// allowedTags are the HTML elements an author may write in wikitext:
// MediaWiki's list, less those the wiki's sanitizer does not keep. Any
// other tag is shown as text.
var allowedTags = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`b bdi del i ins u font big small sub sup h1 h2 h3 h4 h5 h6
		cite code em s strike strong tt var div center blockquote ol ul dl table caption
		pre ruby rb rp rt rtc p span abbr dfn kbd samp time mark br wbr hr td th tr li dt dd q
		thead tbody tfoot`) {
		m[t] = true
	}
	return m
}()

// voidTags have no end tag.
var voidTags = map[string]bool{"br": true, "wbr": true, "hr": true}

// tags is the pass over the author's HTML: allowed tags are written again
// with their attributes checked, any other '<' and every '>' outside tags
// becomes a character reference, and so does a '&' that starts none.
func (d *doc) tags(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	gt := -1     // the next '>' at or after i, -1 before it is searched for
	lastLT := -1 // the last '<' before gt: the only one that may start a tag
	noGT := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '<':
			d.b.check()
			if noGT {
				b.WriteString("&lt;")
				continue
			}
			if gt < i {
				k := strings.IndexByte(s[i+1:], '>') + 1
				if k <= 0 {
					noGT = true
					b.WriteString("&lt;")
					continue
				}
				gt = i + k
				lastLT = i + strings.LastIndexByte(s[i:gt], '<')
			}
			if i == lastLT {
				if tag, ok := d.tag(s[i+1 : gt]); ok {
					b.WriteString(tag)
					i = gt
					continue
				}
			}
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			if n := entityLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n - 1
			} else if n := rlmLen(s[i:]); n > 0 {
				b.WriteString("&#x200F;")
				i += n - 1
			} else {
				b.WriteString("&amp;")
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// tag checks the inside of a tag, between '<' and '>', and returns the
// tag to write.
func (d *doc) tag(t string) (string, bool) {
	closing := strings.HasPrefix(t, "/")
	if closing {
		t = t[1:]
	}
	n := 0
	for n < len(t) && (isAlnum(t[n]) || t[n] == '-' || t[n] == '_') {
		n++
	}
	name := strings.ToLower(t[:n])
	if !allowedTags[name] || (n < len(t) && !isSpace(t[n]) && t[n] != '/') {
		return "", false
	}
	rest := t[n:]
	if closing {
		if name == "br" {
			return "<br>", true // </br> is a line break to browsers
		}
		if voidTags[name] {
			return "", true
		}
		return "</" + name + ">", true
	}
	open := d.openTag(name, strings.TrimSuffix(rest, "/"))
	if strings.HasSuffix(rest, "/") && !voidTags[name] {
		return open + "</" + name + ">", true // <span/> is an empty element
	}
	return open, true
}
