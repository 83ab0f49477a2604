package render

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/yuin/goldmark/util"
	xhtml "golang.org/x/net/html"
)

// Everything this package generates is written in the sanitizer's canonical
// form: text and attribute values escaped exactly as golang.org/x/net/html
// re-escapes them (& ' < > " and CR), line breaks as LF, URLs as the
// sanitizer rewrites them. Then the sanitizer, run over the whole page,
// would change nothing (FuzzRender checks IsSafe on every output), so only
// the author's raw HTML needs to pass through it (see sanitizeRaw).

// canonEscape writes b, text or an attribute value, escaped as
// html.EscapeString from golang.org/x/net/html does, after the tokenizer's
// newline conversion (CR LF and CR become LF) and with NUL replaced by
// U+FFFD as goldmark's escaping does (the tokenizer does it in attributes).
func canonEscape(w util.BufWriter, b []byte) {
	// Read only during the call: no copy needed.
	canonEscapeString(w, unsafe.String(unsafe.SliceData(b), len(b)))
}

// canonEscapeString is canonEscape for a string.
func canonEscapeString(w util.BufWriter, s string) {
	n := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '\'':
			esc = "&#39;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&#34;"
		case 0:
			esc = "\uFFFD"
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				esc = ""
			} else {
				esc = "\n"
			}
		default:
			continue
		}
		_, _ = w.WriteString(s[n:i])
		_, _ = w.WriteString(esc)
		n = i + 1
	}
	_, _ = w.WriteString(s[n:])
}

// canonWriter is goldmark's html.DefaultWriter with canonical escaping: the
// same text (backslash escapes, entity and numeric references resolved, NUL
// replaced) escaped the way the sanitizer escapes it.
type canonWriter struct{}

var replacementChar = []byte("\uFFFD")

// RawWrite writes source escaped, without resolving references.
func (canonWriter) RawWrite(w util.BufWriter, source []byte) { canonEscape(w, source) }

// SecureWrite writes source unescaped but with NUL replaced. Nothing in
// this package calls it with the author's bytes except to sanitize them.
func (canonWriter) SecureWrite(w util.BufWriter, source []byte) {
	n := 0
	for i, c := range source {
		if c == 0 {
			_, _ = w.Write(source[n:i])
			_, _ = w.Write(replacementChar)
			n = i + 1
		}
	}
	_, _ = w.Write(source[n:])
}

// Write resolves backslash escapes and references in source and writes the
// result escaped. It follows goldmark's defaultWriter.Write.
func (c canonWriter) Write(w util.BufWriter, source []byte) {
	escaped := false
	limit := len(source)
	n := 0
	for i := 0; i < limit; i++ {
		ch := source[i]
		if escaped {
			if util.IsPunct(ch) {
				canonEscape(w, source[n:i-1])
				n = i
				escaped = false
				continue
			}
		}
		if ch == 0 {
			canonEscape(w, source[n:i])
			_, _ = w.Write(replacementChar)
			n = i + 1
			escaped = false
			continue
		}
		if ch == '&' {
			pos := i
			next := i + 1
			var ok bool
			if next < limit && source[next] == '#' {
				nnext := next + 1
				if nnext < limit {
					nc := source[nnext]
					if nc == 'x' || nc == 'X' {
						start := nnext + 1
						i, ok = util.ReadWhile(source, [2]int{start, limit}, util.IsHexDecimal)
						if ok && i < limit && source[i] == ';' && i-start < 7 {
							v, _ := strconv.ParseUint(util.BytesToReadOnlyString(source[start:i]), 16, 32)
							canonEscape(w, source[n:pos])
							n = i + 1
							canonRune(w, rune(v))
							continue
						}
					} else if nc >= '0' && nc <= '9' {
						start := nnext
						i, ok = util.ReadWhile(source, [2]int{start, limit}, util.IsNumeric)
						if ok && i < limit && i-start < 8 && source[i] == ';' {
							v, _ := strconv.ParseUint(util.BytesToReadOnlyString(source[start:i]), 10, 32)
							canonEscape(w, source[n:pos])
							n = i + 1
							canonRune(w, rune(v))
							continue
						}
					}
				}
			} else {
				start := next
				i, ok = util.ReadWhile(source, [2]int{start, limit}, util.IsAlphaNumeric)
				if ok && i < limit && source[i] == ';' {
					name := util.BytesToReadOnlyString(source[start:i])
					if entity, ok := util.LookUpHTML5EntityByName(name); ok {
						canonEscape(w, source[n:pos])
						n = i + 1
						canonEscape(w, entity.Characters)
						continue
					}
				}
			}
			i = next - 1
		}
		if ch == '\\' {
			escaped = true
			continue
		}
		escaped = false
	}
	canonEscape(w, source[n:])
}

func canonRune(w util.BufWriter, r rune) {
	r = util.ToValidRune(r)
	if r < utf8.RuneSelf {
		canonEscape(w, []byte{byte(r)})
		return
	}
	_, _ = w.WriteRune(r)
}

// cleanURL is the sanitizer's URL check for this policy (bluemonday's
// validURL with RequireParseableURLs, relative URLs and the schemes http,
// https and mailto): the URL as the sanitizer would write it, or false when
// it would drop the attribute.
func cleanURL(raw string) (string, bool) {
	if plainFragment(raw) {
		return raw, true // what url.Parse and String would make of it, without the cost
	}
	raw = strings.TrimSpace(raw)
	if strings.ContainsAny(raw, " \t\n") {
		// bluemonday lets only data: URLs keep white space, and data: is
		// not an allowed scheme.
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch u.Scheme {
	case "":
	case "http", "https", "mailto":
		return u.String(), true
	default:
		return "", false
	}
	s := u.String()
	return s, s != ""
}

// plainFragment reports whether raw is "#" and a fragment of letters,
// digits, "-._~" and %XX escapes (escapeFragment's output for most heading
// ids): a URL the sanitizer keeps exactly as it is.
func plainFragment(raw string) bool {
	if len(raw) < 2 || raw[0] != '#' {
		return false
	}
	for i := 1; i < len(raw); i++ {
		switch c := raw[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
		case c == '%' && i+2 < len(raw) && isHex(raw[i+1]) && isHex(raw[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// hasHost reports whether the sanitizer takes href for a fully qualified
// link, which must carry rel="nofollow".
func hasHost(href string) bool {
	if strings.HasPrefix(href, "#") {
		return false // a fragment alone (heading links): no need to parse
	}
	u, err := url.Parse(href)
	return err == nil && u.Host != ""
}

// writeAnchor writes an <a> start tag as the sanitizer would leave it:
// the attributes before (canonical attribute text, each with a leading
// space), href only when cleanURL accepts it, the attributes after, then rel="nofollow" for a fully qualified
// link unless attrs has a rel already (ours always includes nofollow). It
// reports whether it wrote a tag: the sanitizer drops an <a> without
// attributes, and its end tag.
func writeAnchor(w util.BufWriter, before, href, after string, hasRel bool) bool {
	h, okHref := cleanURL(href)
	if !okHref && before == "" && after == "" {
		return false
	}
	_, _ = w.WriteString("<a")
	_, _ = w.WriteString(before)
	if okHref {
		_, _ = w.WriteString(` href="`)
		canonEscapeString(w, h)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(after)
	if okHref && !hasRel && hasHost(h) {
		_, _ = w.WriteString(` rel="nofollow"`)
	}
	_ = w.WriteByte('>')
	return true
}

// htmlUnescape is the tokenizer's unescaping of an attribute value.
func htmlUnescape(s string) string { return xhtml.UnescapeString(s) }

// bufWriter is a util.BufWriter over a bytes.Buffer, so that goldmark
// writes straight into it instead of through a bufio.Writer.
type bufWriter struct{ *bytes.Buffer }

func (bufWriter) Available() int  { return 1 << 20 }
func (b bufWriter) Buffered() int { return b.Len() }
func (bufWriter) Flush() error    { return nil }

// discard is a util.BufWriter that writes nothing.
type discard struct{}

func (discard) Write(p []byte) (int, error)       { return len(p), nil }
func (discard) WriteString(s string) (int, error) { return len(s), nil }
func (discard) WriteByte(byte) error              { return nil }
func (discard) WriteRune(r rune) (int, error)     { return utf8.RuneLen(r), nil }
func (discard) Available() int                    { return 1 << 20 }
func (discard) Buffered() int                     { return 0 }
func (discard) Flush() error                      { return nil }

// stringsWriter is a util.BufWriter over a strings.Builder.
type stringsWriter struct{ *strings.Builder }

func (stringsWriter) Available() int  { return 1 << 20 }
func (s stringsWriter) Buffered() int { return s.Len() }
func (stringsWriter) Flush() error    { return nil }
