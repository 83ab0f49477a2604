package httpx

import (
	"net/http"
	"net/netip"
	"strings"
)

// Proxies says which peers may tell Wikid who the client is: the networks
// of the trusted proxies and the header they set. The zero value trusts
// nobody: every client is its TCP peer and forwarding headers are ignored.
type Proxies struct {
	trusted []netip.Prefix
	header  string // "X-Forwarded-For" or "Forwarded"
}

// NewProxies trusts the proxies in trusted (config.TrustedPrefixes) to set
// header: "Forwarded" (RFC 7239) or, for anything else, "X-Forwarded-For".
func NewProxies(trusted []netip.Prefix, header string) Proxies {
	p := Proxies{header: "X-Forwarded-For"}
	if http.CanonicalHeaderKey(header) == "Forwarded" {
		p.header = "Forwarded"
	}
	for _, t := range trusted {
		if !t.IsValid() {
			continue
		}
		// Addresses are compared unmapped: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
		if a := t.Addr(); a.Is4In6() && t.Bits() >= 96 {
			t = netip.PrefixFrom(a.Unmap(), t.Bits()-96)
		}
		p.trusted = append(p.trusted, t.Masked())
	}
	return p
}

// Any reports whether any proxy is trusted.
func (p Proxies) Any() bool { return len(p.trusted) > 0 }

// Trusts reports whether a is a trusted proxy.
func (p Proxies) Trusts(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, t := range p.trusted {
		if t.Contains(a) {
			return true
		}
	}
	return false
}

// Client is who sent a request, as far as the network and the trusted
// proxies tell.
type Client struct {
	// Addr is the client's address, IPv4-mapped IPv6 unmapped and without
	// zone. It is the zero Addr only when the peer is not an IP endpoint
	// (a Unix socket, a test's fake RemoteAddr).
	Addr netip.Addr
	// Proxied is set when a trusted proxy forwarded the request (it named
	// at least one hop), so Addr is not the TCP peer.
	Proxied bool
	// Scheme is "https" when the client used TLS to reach us or the first
	// trusted proxy, else "http".
	Scheme string
}

// Local reports whether the client is on this host: its own connection
// comes from loopback. A proxied request is never local, whatever address
// the proxy reports.
func (c Client) Local() bool { return !c.Proxied && c.Addr.IsLoopback() }

// String is the address as text ("" when unknown), for logs and the
// anonymous editor's name.
func (c Client) String() string {
	if !c.Addr.IsValid() {
		return ""
	}
	return c.Addr.String()
}

// Client resolves r's client.
//
// It starts from the TCP peer (r.RemoteAddr). While the current hop is a
// trusted proxy, it steps one hop to the left in the forwarding header (all
// its lines, in order, read as one comma-separated list); the client is the
// rightmost hop that is not a trusted proxy, or the leftmost hop when every
// hop is trusted. Everything left of the client is whatever the client
// chose to send and is never read. A peer that is not trusted is the client,
// and every forwarding header it sent is ignored.
//
// A hop that does not parse as an address (garbage, "unknown", an
// obfuscated Forwarded identifier such as "_hidden", a hop without for=)
// stops the walk: the client is then the last trusted hop, the proxy that
// wrote that value. That address is one we have verified, never one an
// attacker chose; the price is that such clients share their proxy's
// address (for throttling, for anonymous edits' names).
//
// The scheme is https when r came over TLS or the trusted proxy at the hop
// where the walk ended says so: X-Forwarded-Proto aligned with
// X-Forwarded-For when both lists have the same length (else its rightmost
// value, written by the nearest proxy), or proto= of the Forwarded element
// of that hop.
func (p Proxies) Client(r *http.Request) Client {
	c := Client{Addr: parsePeer(r.RemoteAddr), Scheme: "http"}
	if r.TLS != nil {
		c.Scheme = "https"
	}
	if !c.Addr.IsValid() || !p.Trusts(c.Addr) {
		return c
	}
	var hops []hop
	if p.header == "Forwarded" {
		hops = forwardedHops(r.Header.Values("Forwarded"))
	} else {
		hops = forwardedForHops(r.Header.Values("X-Forwarded-For"))
	}
	end := len(hops) // index of the hop the client's address came from
	for i := len(hops) - 1; i >= 0 && p.Trusts(c.Addr); i-- {
		c.Proxied = true
		end = i
		if !hops[i].addr.IsValid() {
			break // c.Addr stays the trusted proxy that wrote this hop
		}
		c.Addr = hops[i].addr
	}
	proto := ""
	if p.header == "Forwarded" {
		if end < len(hops) {
			proto = hops[end].proto
		}
	} else if protos := listElements(r.Header.Values("X-Forwarded-Proto")); len(protos) > 0 {
		proto = protos[len(protos)-1]
		if len(protos) == len(hops) && end < len(hops) {
			proto = protos[end]
		}
	}
	if strings.EqualFold(strings.TrimSpace(proto), "https") {
		c.Scheme = "https"
	}
	return c
}

// hop is one element of a forwarding header: the address it names (invalid
// when it names none that parses) and, for Forwarded, its proto=.
type hop struct {
	addr  netip.Addr
	proto string
}

// parsePeer reads r.RemoteAddr ("1.2.3.4:5", "[::1]:5", or a bare address).
func parsePeer(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return clean(ap.Addr())
	}
	return parseNode(s)
}

// parseNode reads one hop's address as proxies write it: "192.0.2.1",
// "192.0.2.1:8080", "2001:db8::1", "[2001:db8::1]" or "[2001:db8::1]:8080".
// Anything else ("unknown", "_hidden", garbage) is the zero Addr.
func parseNode(s string) netip.Addr {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return clean(a)
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return clean(ap.Addr())
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return clean(a)
		}
	}
	return netip.Addr{}
}

// clean unmaps IPv4-mapped IPv6 and drops the zone, so that one client has
// one address and prefixes match it.
func clean(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

// listElements splits header lines into the elements of one comma-separated
// list (RFC 9110, section 5.3), dropping empty ones.
func listElements(lines []string) []string {
	var out []string
	for _, l := range lines {
		for e := range strings.SplitSeq(l, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

func forwardedForHops(lines []string) []hop {
	els := listElements(lines)
	hops := make([]hop, len(els))
	for i, e := range els {
		hops[i].addr = parseNode(e)
	}
	return hops
}

// forwardedHops parses Forwarded (RFC 7239): elements separated by commas,
// each a list of name=value pairs separated by semicolons, where a value is
// a token or a quoted string (which may hold commas and semicolons).
//
// Each line is parsed on its own, and a line that does not follow that
// grammar is one hop without an address, so that the walk stops at the
// proxy that sent it. Its elements cannot be told apart: a client's
// unterminated quoted string (for="1.2.3.4";x=") would otherwise swallow
// the element a proxy appended to the same line (, for=198.51.100.7) and
// leave the client's own element rightmost.
func forwardedHops(lines []string) []hop {
	var hops []hop
	for _, l := range lines {
		hs, ok := forwardedLine(l)
		if !ok {
			hs = []hop{{}}
		}
		hops = append(hops, hs...)
	}
	return hops
}

// forwardedLine parses one Forwarded line, or reports that it is malformed:
// it ends inside a quoted string, or an element has a pair without '=', a
// name that is not a token, a value that is neither a token nor one whole
// quoted string, or a name twice. Whitespace around elements and pairs is
// allowed, and so are ':', '[' and ']' in unquoted values (for=[::1]:80,
// which RFC 7239 wants quoted), as proxies write them.
func forwardedLine(l string) ([]hop, bool) {
	els, ok := splitQuoted(l, ',')
	if !ok {
		return nil, false
	}
	var hops []hop
	for _, el := range els {
		if strings.TrimSpace(el) == "" {
			continue
		}
		var h hop
		seen := map[string]bool{}
		pairs, _ := splitQuoted(el, ';') // balanced: the line's quotes were
		for _, pair := range pairs {
			pair = strings.Trim(pair, " \t")
			if pair == "" {
				continue
			}
			name, value, found := strings.Cut(pair, "=")
			name = strings.ToLower(name)
			if !found || !isToken(name, false) || seen[name] {
				return nil, false
			}
			seen[name] = true
			if strings.HasPrefix(value, `"`) {
				v, ok := unquoteWhole(value)
				if !ok {
					return nil, false
				}
				value = v
			} else if !isToken(value, true) {
				return nil, false
			}
			switch name {
			case "for":
				h.addr = parseNode(value)
			case "proto":
				h.proto = value
			}
		}
		hops = append(hops, h)
	}
	return hops, true
}

// splitQuoted splits s at sep outside double-quoted strings; ok is false
// when s ends inside one.
func splitQuoted(s string, sep byte) (parts []string, ok bool) {
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:]), !quoted
}

// isToken reports whether s is an RFC 9110 token (one or more tchar);
// address allows ':', '[' and ']' too, for unquoted addresses with ports.
func isToken(s string, address bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		case address && (c == ':' || c == '[' || c == ']'):
		default:
			return false
		}
	}
	return true
}

// unquoteWhole reads s as exactly one quoted string (RFC 9110: qdtext and
// quoted-pairs between two double quotes, nothing after) and returns its
// content; ok is false for anything else.
func unquoteWhole(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i == len(s)-1
		case c == '\\':
			i++
			if i == len(s) || s[i] < 0x20 && s[i] != '\t' || s[i] == 0x7f {
				return "", false
			}
			b.WriteByte(s[i])
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}
