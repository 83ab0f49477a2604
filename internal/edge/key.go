package edge

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Key returns the canonical cache key of r, or ok=false when r must not be
// served from or stored in the cache: methods other than GET and HEAD (which
// share entries), requests with an Authorization, Range or Upgrade header, and
// non-origin-form targets.
//
// The key is the normalized request target, "path" or "path?query":
//   - the path has percent-encoding normalized (escapes of unreserved
//     characters decoded, other escapes upper-cased, stray '%' and bytes that may
//     not appear raw in a path escaped), then "." and ".." segments resolved and
//     empty segments ("//") removed; a trailing slash is kept;
//   - the query is decoded and re-encoded in one canonical form, parameters with
//     an empty name or an empty value are dropped ("?a=" is the same as no a,
//     as it is for url.Values.Get), and parameters are sorted by name; values of
//     a repeated name keep their order, because handlers reading Values.Get see
//     the first one and "?t=A&t=B" and "?t=B&t=A" are different requests to them.
//
// Neither the session bit nor the content coding is in the key: the caller asks
// the edge only for requests without a valid session, and encodings are
// variants inside one entry. Host is not in the key either: Wikid serves one
// site per process and handlers must not reflect the Host header into bodies.
//
// A key never contains control bytes, spaces or non-ASCII bytes, and Key is
// idempotent: a request for the key's own target gets the same key. Requests
// that are already canonical (the common case) cost no allocation.
func Key(r *http.Request) (key string, ok bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "", false
	}
	if len(r.Header["Authorization"]) > 0 || len(r.Header["Range"]) > 0 || len(r.Header["Upgrade"]) > 0 {
		return "", false
	}
	u := r.URL
	if u == nil || u.Opaque != "" {
		return "", false
	}
	return keyFrom(u.EscapedPath(), u.RawQuery, r.RequestURI), true
}

// KeyOf is Key for a server that parses requests itself: it takes the method
// and the raw request target of the request line, and applies the same
// normalization as Key. The caller checks the headers Key looks at
// (Authorization, Range, Upgrade). ok is false for methods other than GET and
// HEAD and for targets that are not in origin form. When target is already
// canonical, the key is target itself (no allocation).
func KeyOf(method, target string) (key string, ok bool) {
	if method != http.MethodGet && method != http.MethodHead {
		return "", false
	}
	if target == "" || target[0] != '/' {
		return "", false
	}
	p, q, _ := strings.Cut(target, "?")
	if !pathIsCanonical(p) {
		// net/http keeps the path as sent only when it is validly escaped;
		// otherwise EscapedPath re-escapes it (sub-delimiters such as '!'
		// included). Parse as net/http does so that both see one key.
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return "", false // net/http rejects it too
		}
		return keyFrom(u.EscapedPath(), u.RawQuery, target), true
	}
	return keyFrom(p, q, target), true
}

// keyFrom is the normalization shared by Key and KeyOf: escaped path and raw
// query in, key out; uri is the request target, reused when canonical.
func keyFrom(path, rawQuery, uri string) string {
	p := normPath(path)
	q := normQuery(rawQuery)
	if q == "" {
		if uri == p {
			return uri
		}
		return p
	}
	// Reuse the request line when it is already canonical.
	if ru := uri; len(ru) == len(p)+1+len(q) && ru[len(p)] == '?' &&
		ru[:len(p)] == p && ru[len(p)+1:] == q {
		return ru
	}
	return p + "?" + q
}

// Character classes of RFC 3986.
const (
	clsUnreserved = 1 << iota
	clsPath       // may appear raw in a path: unreserved, sub-delims, ':', '@', '/'
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			b == '-' || b == '.' || b == '_' || b == '~' {
			t[c] |= clsUnreserved | clsPath
		}
		if strings.IndexByte("!$&'()*+,;=:@/", b) >= 0 {
			t[c] |= clsPath
		}
	}
	return t
}()

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

const upperHex = "0123456789ABCDEF"

// pathIsCanonical reports whether p needs no work: it starts with '/', has only
// raw path characters and upper-case escapes of reserved bytes, and no empty,
// "." or ".." segment.
func pathIsCanonical(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	segStart := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			seg := p[segStart:i]
			if seg == "." || seg == ".." || (seg == "" && i < len(p)) {
				return false
			}
			segStart = i + 1
			continue
		}
		c := p[i]
		if c == '%' {
			if i+2 >= len(p) {
				return false
			}
			h, ok1 := unhex(p[i+1])
			l, ok2 := unhex(p[i+2])
			if !ok1 || !ok2 || p[i+1] >= 'a' || p[i+2] >= 'a' || charClass[h<<4|l]&clsUnreserved != 0 {
				return false
			}
			i += 2
			continue
		}
		if charClass[c]&clsPath == 0 {
			return false
		}
	}
	return true
}

func normPath(p string) string {
	if pathIsCanonical(p) {
		return p
	}
	// Normalize percent-encoding first, so that "%2E%2E" is a ".." segment.
	var b strings.Builder
	b.Grow(len(p) + 8)
	if p == "" || p[0] != '/' {
		b.WriteByte('/')
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) {
			h, ok1 := unhex(p[i+1])
			l, ok2 := unhex(p[i+2])
			if ok1 && ok2 {
				d := h<<4 | l
				if charClass[d]&clsUnreserved != 0 {
					b.WriteByte(d)
				} else {
					b.WriteByte('%')
					b.WriteByte(upperHex[d>>4])
					b.WriteByte(upperHex[d&15])
				}
				i += 2
				continue
			}
		}
		if c != '%' && charClass[c]&clsPath != 0 {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
	}
	s := b.String()

	// Resolve dot segments and drop empty ones.
	segs := make([]string, 0, 8)
	trailing := false
	for _, seg := range strings.Split(s[1:], "/") {
		trailing = false
		switch seg {
		case "":
			trailing = true
		case ".":
			trailing = true
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			trailing = true
		default:
			segs = append(segs, seg)
		}
	}
	if len(segs) == 0 {
		return "/"
	}
	out := "/" + strings.Join(segs, "/")
	if trailing {
		out += "/"
	}
	return out
}

// queryIsCanonical reports whether q is already in the form normQuery produces.
func queryIsCanonical(q string) bool {
	if q == "" {
		return true
	}
	prevKey := ""
	for len(q) > 0 {
		var part string
		if i := strings.IndexByte(q, '&'); i >= 0 {
			part, q = q[:i], q[i+1:]
			if q == "" {
				return false // trailing '&'
			}
		} else {
			part, q = q, ""
		}
		eq := strings.IndexByte(part, '=')
		if eq <= 0 || eq == len(part)-1 {
			return false
		}
		k, v := part[:eq], part[eq+1:]
		if !queryComponentCanonical(k) || !queryComponentCanonical(v) || k < prevKey {
			return false
		}
		prevKey = k
	}
	return true
}

// queryComponentCanonical reports whether s is what url.QueryEscape would
// produce for its own decoding.
func queryComponentCanonical(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
		case c == '%':
			if i+2 >= len(s) {
				return false
			}
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			d := h<<4 | l
			if !ok1 || !ok2 || s[i+1] >= 'a' || s[i+2] >= 'a' || charClass[d]&clsUnreserved != 0 || d == ' ' {
				return false
			}
			i += 2
		case charClass[c]&clsUnreserved == 0:
			return false
		}
	}
	return true
}

func normQuery(q string) string {
	if queryIsCanonical(q) {
		return q
	}
	var ps [][2]string // encoded name and value
	for len(q) > 0 {
		var part string
		if i := strings.IndexByte(q, '&'); i >= 0 {
			part, q = q[:i], q[i+1:]
		} else {
			part, q = q, ""
		}
		k, v, _ := strings.Cut(part, "=")
		k, v = lenientUnescape(k), lenientUnescape(v)
		if k == "" || v == "" {
			continue
		}
		ps = append(ps, [2]string{queryEscape(k), queryEscape(v)})
	}
	// Sort on the encoded names, the form queryIsCanonical checks.
	slices.SortStableFunc(ps, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	n := 0
	for _, p := range ps {
		n += len(p[0]) + len(p[1]) + 2
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p[0])
		b.WriteByte('=')
		b.WriteString(p[1])
	}
	return b.String()
}

// lenientUnescape decodes a query component like url.QueryUnescape ('+' is a
// space) but keeps a '%' that does not start a valid escape instead of failing.
func lenientUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 < len(s) {
				h, ok1 := unhex(s[i+1])
				l, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					b = append(b, h<<4|l)
					i += 2
					continue
				}
			}
			b = append(b, '%')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// queryEscape encodes s as url.QueryEscape does.
func queryEscape(s string) string {
	if queryComponentCanonical(s) && strings.IndexByte(s, '+') < 0 && strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case charClass[c]&clsUnreserved != 0:
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
