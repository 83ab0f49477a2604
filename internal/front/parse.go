package front

import (
	"bytes"
	"unsafe"

	"github.com/wikid/wikid/internal/edge"
)

// request is what the fast path needs from one request head. Its byte slices
// alias the connection's read buffer and are valid until the next read.
type request struct {
	head        bool   // HEAD rather than GET
	http10      bool   // HTTP/1.0 rather than HTTP/1.1
	target      []byte // origin-form request target, printable ASCII
	accepted    edge.Accepted
	ifNoneMatch []byte // first If-None-Match value
	ifModSince  []byte // first If-Modified-Since value
	connClose   bool   // Connection: close
	keepAlive   bool   // Connection: keep-alive
	cookie      []byte // the Cookie header, when it names wikid_session
}

// maxHeaders bounds the number of header fields of a fast-path request; a
// request with more goes to net/http.
const maxHeaders = 64

// parse reads one request head: the request line and header fields up to and
// including the empty line, every line ending in CRLF. It reports ok only for
// a request the fast path may answer, by the rules in the package comment;
// false means "let net/http decide" (it is not an error: the request may be
// perfectly valid). It does not allocate.
func parse(b []byte, r *request) bool {
	*r = request{}
	line, rest, ok := cutLine(b)
	if !ok {
		return false
	}
	// Request line: method SP target SP version, single spaces.
	switch {
	case bytes.HasPrefix(line, []byte("GET ")):
		line = line[4:]
	case bytes.HasPrefix(line, []byte("HEAD ")):
		r.head = true
		line = line[5:]
	default:
		return false
	}
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return false
	}
	r.target, line = line[:sp], line[sp+1:]
	switch string(line) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		r.http10 = true
	default:
		return false
	}
	if r.target[0] != '/' {
		return false // not origin form
	}
	for i, c := range r.target {
		if c <= ' ' || c >= 0x7f {
			return false
		}
		// An escape must be one (net/http refuses "/0%"): anything else is
		// net/http's to answer.
		if c == '%' && (i+2 >= len(r.target) || !isHex(r.target[i+1]) || !isHex(r.target[i+2])) {
			return false
		}
	}

	hosts, conns := 0, 0
	seenINM, seenIMS := false, false
	for n := 0; ; n++ {
		line, rest, ok = cutLine(rest)
		if !ok || n > maxHeaders {
			return false
		}
		if len(line) == 0 {
			break // end of head
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return false // also obs-fold: a line starting with SP or HTAB has no token before ':'
		}
		name := line[:colon]
		for _, c := range name {
			if !isToken[c] {
				return false
			}
		}
		value := trimOWS(line[colon+1:])
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f {
				return false
			}
		}
		switch len(name) {
		case 4:
			if equalFold(name, "host") {
				hosts++
				if !validHost(value) {
					return false
				}
			}
		case 5:
			if equalFold(name, "range") {
				return false
			}
		case 6:
			switch {
			case equalFold(name, "cookie"):
				// Other cookies never split the cache. A request that may
				// carry a session is for the Personal hook (or net/http);
				// two Cookie headers naming it go to net/http.
				if bytes.Contains(value, []byte("wikid_session")) {
					if r.cookie != nil {
						return false
					}
					r.cookie = value
				}
			case equalFold(name, "expect"):
				return false
			}
		case 7:
			if equalFold(name, "upgrade") {
				return false
			}
		case 10:
			if equalFold(name, "connection") {
				if conns++; conns > 1 {
					return false // net/http reads only the first for 1.0 keep-alive
				}
				parseConnection(value, r)
			}
		case 13:
			if equalFold(name, "authorization") {
				return false
			}
			if equalFold(name, "if-none-match") && !seenINM {
				seenINM = true
				r.ifNoneMatch = value
			}
		case 14:
			if equalFold(name, "content-length") {
				if string(value) != "0" {
					return false
				}
			}
		case 15:
			if equalFold(name, "accept-encoding") {
				r.accepted |= edge.ParseAcceptEncoding(bytesString(value))
			}
		case 17:
			if equalFold(name, "transfer-encoding") {
				return false
			}
			if equalFold(name, "if-modified-since") && !seenIMS {
				seenIMS = true
				r.ifModSince = value
			}
		case 19:
			if equalFold(name, "proxy-authorization") {
				return false
			}
		}
	}
	if len(rest) != 0 {
		return false // caller passes exactly one head
	}
	if r.http10 && r.connClose && r.keepAlive {
		return false // contradictory; let net/http decide
	}
	// net/http requires exactly one Host in HTTP/1.1 and at most one in 1.0.
	if hosts > 1 || hosts == 0 && !r.http10 {
		return false
	}
	return true
}

// cutLine splits b at the first CRLF. A bare LF is a parse doubt: false.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 1 || b[i-1] != '\r' {
		return nil, nil, false
	}
	return b[:i-1], b[i+1:], true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold reports whether b equals the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// parseConnection reads the close and keep-alive tokens of a Connection value.
func parseConnection(v []byte, r *request) {
	for len(v) > 0 {
		var tok []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			tok, v = v, nil
		}
		tok = trimOWS(tok)
		switch {
		case equalFold(tok, "close"):
			r.connClose = true
		case equalFold(tok, "keep-alive"):
			r.keepAlive = true
		}
	}
}

// validHost accepts the host[:port] forms a browser sends; anything unusual
// goes to net/http, which validates Host itself.
func validHost(v []byte) bool {
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_') {
			return false
		}
	}
	return true
}

// isToken marks the tchar bytes of RFC 9110 section 5.6.2.
var isToken = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), b) >= 0
	}
	return t
}()

// bytesString views b as a string for a call that does not keep it.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
