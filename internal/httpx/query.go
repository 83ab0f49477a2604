package httpx

import (
	"strings"
	"unicode/utf8"

	"github.com/wikid/wikid/internal/wiki"
)

// Pair is one decoded query parameter.
type Pair struct{ Name, Value string }

// Query is a query string as sent: its parameters decoded, in order, empty
// ones included.
type Query []Pair

// ParseQuery decodes an application/x-www-form-urlencoded query ('+' is a
// space). A malformed escape or a name or value that is not UTF-8 is an
// error that says so: such a request gets a 400, never a guess.
func ParseQuery(raw string) (Query, error) {
	if raw == "" {
		return nil, nil
	}
	q := make(Query, 0, strings.Count(raw, "&")+1)
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, ok1 := unescape(k)
		value, ok2 := unescape(v)
		if !ok1 || !ok2 {
			return nil, wiki.Errorf(wiki.KindInvalid, "the address has a malformed %%-escape in its query (%.40q); fix the link", part)
		}
		if !utf8.ValidString(name) || !utf8.ValidString(value) {
			return nil, wiki.Errorf(wiki.KindInvalid, "the address's query is not valid UTF-8; fix the link")
		}
		q = append(q, Pair{name, value})
	}
	return q, nil
}

// First returns the first non-empty value of name, or "".
func (q Query) First(name string) string {
	for _, p := range q {
		if p.Name == name && p.Value != "" {
			return p.Value
		}
	}
	return ""
}

func unescape(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			b = append(b, h<<4|l)
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// QueryEscape encodes s the way browsers submit GET forms (the WHATWG
// application/x-www-form-urlencoded serializer): ASCII letters, digits and
// "*-._" stay, a space is '+', every other byte is %XX in upper case. It is
// the one canonical form, so that a search box's request is canonical as the
// browser sends it.
func QueryEscape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !formSafe(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case formSafe(c):
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

func formSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '*' || c == '-' || c == '.' || c == '_'
}

// Params are canonical parameters: normalized values, each name once,
// sorted by name. The zero value is empty.
type Params []Pair

// Get returns the value of name, or "".
func (p Params) Get(name string) string {
	for _, x := range p {
		if x.Name == name {
			return x.Value
		}
	}
	return ""
}

// Has reports whether name is present.
func (p Params) Has(name string) bool {
	for _, x := range p {
		if x.Name == name {
			return true
		}
	}
	return false
}

// With returns a copy of p with name set to value ("" removes it), still
// sorted. Values must already be canonical for their parameter.
func (p Params) With(name, value string) Params {
	out := make(Params, 0, len(p)+1)
	done := false
	for _, x := range p {
		if x.Name == name {
			continue
		}
		if !done && value != "" && name < x.Name {
			out = append(out, Pair{name, value})
			done = true
		}
		out = append(out, x)
	}
	if !done && value != "" {
		out = append(out, Pair{name, value})
	}
	return out
}

// Encode returns the canonical query string, without '?'.
func (p Params) Encode() string {
	if len(p) == 0 {
		return ""
	}
	var b strings.Builder
	for i, x := range p {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(QueryEscape(x.Name))
		b.WriteByte('=')
		b.WriteString(QueryEscape(x.Value))
	}
	return b.String()
}

// URL returns path with p as its query: a canonical link.
func URL(path string, p Params) string {
	if len(p) == 0 {
		return path
	}
	return path + "?" + p.Encode()
}
