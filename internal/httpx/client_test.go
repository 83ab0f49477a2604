package httpx_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/wikid/wikid/internal/httpx"
)

var trusted = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("127.0.0.1/32"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("2001:db8:f::/48"),
}

func TestClient(t *testing.T) {
	type header struct{ name, value string }
	tests := []struct {
		name      string
		forwarded bool     // the proxies set Forwarded, not X-Forwarded-For
		none      bool     // trust no proxy at all
		remote    string   // r.RemoteAddr
		headers   []header // in order; repeated names are separate lines
		tls       bool
		want      string // client address ("" for none)
		proxied   bool
		scheme    string // "" means http
	}{
		// An untrusted peer is the client, whatever it claims.
		{name: "an untrusted client's X-Forwarded-For is ignored", remote: "203.0.113.5:1234",
			headers: []header{{"X-Forwarded-For", "198.51.100.7"}}, want: "203.0.113.5"},
		{name: "an untrusted client's Forwarded is ignored", remote: "203.0.113.5:1234", forwarded: true,
			headers: []header{{"Forwarded", "for=198.51.100.7;proto=https"}}, want: "203.0.113.5"},
		{name: "an untrusted client's Forwarded is ignored in X-Forwarded-For mode too", remote: "203.0.113.5:1234",
			headers: []header{{"Forwarded", "for=10.0.0.1"}}, want: "203.0.113.5"},
		{name: "Via names no client", remote: "203.0.113.5:1234",
			headers: []header{{"Via", "1.1 10.0.0.1, 1.1 varnish"}}, want: "203.0.113.5"},
		{name: "an untrusted client's X-Forwarded-Proto is ignored", remote: "203.0.113.5:1234",
			headers: []header{{"X-Forwarded-Proto", "https"}}, want: "203.0.113.5"},
		{name: "an untrusted client that names a trusted proxy is still itself", remote: "203.0.113.5:1234",
			headers: []header{{"X-Forwarded-For", "127.0.0.1, 10.0.0.1"}}, want: "203.0.113.5"},
		{name: "with no trusted proxy loopback is the client and stays local", none: true, remote: "127.0.0.1:5000",
			headers: []header{{"X-Forwarded-For", "198.51.100.7"}, {"X-Forwarded-Proto", "https"}}, want: "127.0.0.1"},
		{name: "an IPv4-mapped untrusted peer is unmapped", remote: "[::ffff:203.0.113.9]:80", want: "203.0.113.9"},
		{name: "a zoned peer loses its zone", remote: "[fe80::1%eth0]:80", want: "fe80::1"},
		{name: "a peer that is no IP endpoint has no address", remote: "@", want: ""},
		{name: "a bare RemoteAddr without port parses", remote: "203.0.113.5", want: "203.0.113.5"},

		// Trusted proxies.
		{name: "a trusted proxy names the client", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7"}}, want: "198.51.100.7", proxied: true},
		{name: "a trusted peer without forwarding header is the client", remote: "10.0.0.1:80", want: "10.0.0.1"},
		{name: "a trusted peer with an empty header is the client", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", " , "}}, want: "10.0.0.1"},
		{name: "a forged left part of the chain is not read", remote: "10.0.0.2:80",
			headers: []header{{"X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.1"}}, want: "198.51.100.7", proxied: true},
		{name: "a chain of trusted proxies ends at the leftmost", remote: "10.0.0.2:80",
			headers: []header{{"X-Forwarded-For", "10.0.0.3, 127.0.0.1, 10.0.0.1"}}, want: "10.0.0.3", proxied: true},
		{name: "several header lines are one list in order", remote: "10.0.0.2:80",
			headers: []header{{"X-Forwarded-For", "6.6.6.6, 198.51.100.7"}, {"X-Forwarded-For", "10.0.0.1"}},
			want:    "198.51.100.7", proxied: true},
		{name: "the last line's rightmost hop comes first", remote: "10.0.0.2:80",
			headers: []header{{"X-Forwarded-For", "10.0.0.5"}, {"X-Forwarded-For", "198.51.100.9"}},
			want:    "198.51.100.9", proxied: true},
		{name: "empty elements are skipped", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", ", 198.51.100.7 ,,"}}, want: "198.51.100.7", proxied: true},
		{name: "a hop with a port", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7:5678"}}, want: "198.51.100.7", proxied: true},
		{name: "IPv6 through an IPv6 proxy", remote: "[2001:db8:f::1]:443",
			headers: []header{{"X-Forwarded-For", "2001:db8:1::5"}}, want: "2001:db8:1::5", proxied: true},
		{name: "a bracketed IPv6 hop with a port", remote: "[::1]:8080",
			headers: []header{{"X-Forwarded-For", "[2001:db8::7]:5555"}}, want: "2001:db8::7", proxied: true},
		{name: "a bracketed IPv6 hop without port", remote: "[::1]:8080",
			headers: []header{{"X-Forwarded-For", "[2001:db8::7]"}}, want: "2001:db8::7", proxied: true},
		{name: "an IPv4-mapped trusted peer and hop are unmapped", remote: "[::ffff:10.0.0.1]:80",
			headers: []header{{"X-Forwarded-For", "::ffff:198.51.100.7"}}, want: "198.51.100.7", proxied: true},
		{name: "an IPv4-mapped hop that is a trusted proxy is stepped over", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7, ::ffff:10.9.9.9"}}, want: "198.51.100.7", proxied: true},
		{name: "loopback reported by a proxy is not local", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "127.0.0.1"}}, want: "127.0.0.1", proxied: true},

		// Values that do not parse stop at the proxy that wrote them.
		{name: "garbage from a trusted proxy leaves the proxy as client", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7, garbage"}}, want: "10.0.0.1", proxied: true},
		{name: "unknown leaves the proxy as client", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "unknown"}}, want: "10.0.0.1", proxied: true},
		{name: "garbage deeper in a trusted chain leaves the last trusted hop", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7, <script>, 10.0.0.2"}}, want: "10.0.0.2", proxied: true},
		{name: "garbage left of the client is never read", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "not-an-ip, 198.51.100.7"}}, want: "198.51.100.7", proxied: true},
		{name: "a CIDR is not an address", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.0/24"}}, want: "10.0.0.1", proxied: true},

		// Forwarded (RFC 7239).
		{name: "Forwarded names the client and its scheme", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=198.51.100.7;proto=https;by=10.0.0.1"}}, want: "198.51.100.7", proxied: true, scheme: "https"},
		{name: "Forwarded IPv6 in brackets with a port", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `For="[2001:db8:cafe::17]:4711"`}}, want: "2001:db8:cafe::17", proxied: true},
		{name: "Forwarded quoted IPv4 with a port", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="198.51.100.7:4711"`}}, want: "198.51.100.7", proxied: true},
		{name: "Forwarded obfuscated identifier", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=_hidden"}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded unknown", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=unknown;proto=https"}}, want: "10.0.0.1", proxied: true, scheme: "https"},
		{name: "Forwarded element without for", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "proto=http;host=wiki.example"}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded chain takes the proto of the client's hop", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=6.6.6.6;proto=http, for=198.51.100.7;proto=https"}, {"Forwarded", "for=10.0.0.3;proto=http"}},
			want:    "198.51.100.7", proxied: true, scheme: "https"},
		{name: "Forwarded commas and semicolons inside quotes", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for=198.51.100.7;host="a,b;c", for=10.0.0.3`}}, want: "198.51.100.7", proxied: true},
		{name: "Forwarded garbage", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="198.51.100.7, ;;==""`}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded whitespace around pairs and escapes in quotes", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for=198.51.100.7 ; proto=https;host="a\"b" , for=10.0.0.3`}}, want: "198.51.100.7", proxied: true, scheme: "https"},
		{name: "Forwarded unquoted IPv6 with a port is read", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=[2001:db8::7]:4711"}}, want: "2001:db8::7", proxied: true},

		// A malformed Forwarded line is one hop without an address: the walk
		// stops at the proxy that sent it, whatever the client wrote into it.
		{name: "Forwarded: a client's unterminated quote cannot swallow the element its proxy appended", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="1.2.3.4";x=", for=198.51.100.7`}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: nor can a trailing backslash in a quote", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="1.2.3.4\, for=198.51.100.7`}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: a pair without = makes the line malformed", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=1.2.3.4;x, for=198.51.100.7"}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: text after a quoted value makes the line malformed", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="1.2.3.4"x, for=198.51.100.7`}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: a parameter twice makes the line malformed", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=198.51.100.7;For=1.2.3.4"}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: a name that is no token makes the line malformed", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `x y=1, for=198.51.100.7`}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: an unquoted value with a space makes the line malformed", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for=1.2.3.4 for=198.51.100.7`}}, want: "10.0.0.1", proxied: true},
		{name: "Forwarded: a client's malformed line left of its proxy's line is never read", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="1.2.3.4`}, {"Forwarded", "for=198.51.100.7"}}, want: "198.51.100.7", proxied: true},
		{name: "Forwarded: a malformed line behind a trusted proxy stops at that proxy", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", `for="1.2.3.4";x=", for=198.51.100.7`}, {"Forwarded", "for=10.0.0.3"}}, want: "10.0.0.3", proxied: true},
		{name: "X-Forwarded-For is ignored when proxies set Forwarded", forwarded: true, remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7"}}, want: "10.0.0.1"},
		{name: "Forwarded is ignored when proxies set X-Forwarded-For", remote: "10.0.0.1:80",
			headers: []header{{"Forwarded", "for=198.51.100.7"}}, want: "10.0.0.1"},

		// The scheme.
		{name: "TLS to us is https", remote: "203.0.113.5:1234", tls: true, want: "203.0.113.5", scheme: "https"},
		{name: "a trusted proxy's X-Forwarded-Proto", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7"}, {"X-Forwarded-Proto", "HTTPS"}}, want: "198.51.100.7", proxied: true, scheme: "https"},
		{name: "X-Forwarded-Proto aligned with the chain", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7, 10.0.0.3"}, {"X-Forwarded-Proto", "https, http"}},
			want:    "198.51.100.7", proxied: true, scheme: "https"},
		{name: "X-Forwarded-Proto not aligned: the nearest proxy's word", remote: "10.0.0.1:80",
			headers: []header{{"X-Forwarded-For", "198.51.100.7"}, {"X-Forwarded-Proto", "https, http"}},
			want:    "198.51.100.7", proxied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := "X-Forwarded-For"
			if tt.forwarded {
				header = "Forwarded"
			}
			prefixes := trusted
			if tt.none {
				prefixes = nil
			}
			p := httpx.NewProxies(prefixes, header)
			r := httptest.NewRequest(http.MethodGet, "/wiki/Main_Page", nil)
			r.RemoteAddr = tt.remote
			r.TLS = nil
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for _, h := range tt.headers {
				r.Header.Add(h.name, h.value)
			}
			c := p.Client(r)
			if c.String() != tt.want || c.Proxied != tt.proxied {
				t.Errorf("client %q proxied %v, want %q proxied %v", c.String(), c.Proxied, tt.want, tt.proxied)
			}
			if c.Addr.IsValid() && (c.Addr.Is4In6() || c.Addr.Zone() != "") {
				t.Errorf("address %v is mapped or zoned", c.Addr)
			}
			want := tt.scheme
			if want == "" {
				want = "http"
			}
			if c.Scheme != want {
				t.Errorf("scheme %q, want %q", c.Scheme, want)
			}
			if c.Local() != (c.Addr.IsLoopback() && !tt.proxied) {
				t.Errorf("Local() = %v", c.Local())
			}
		})
	}
}

func TestProxiesTrusts(t *testing.T) {
	p := httpx.NewProxies(append(trusted, netip.MustParsePrefix("::ffff:192.0.2.0/120")), "forwarded")
	for addr, want := range map[string]bool{
		"10.1.2.3": true, "::ffff:10.1.2.3": true, "127.0.0.1": true, "127.0.0.2": false, "::1": true,
		"2001:db8:f:1::1": true, "2001:db8:e::1": false, "192.0.2.9": true, "203.0.113.1": false,
	} {
		if got := p.Trusts(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Trusts(%s) = %v, want %v", addr, got, want)
		}
	}
	if !p.Any() || (httpx.Proxies{}).Any() {
		t.Error("Any is wrong")
	}
	// The header name is matched without regard to case.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.0.0.1:1"
	r.Header.Set("Forwarded", "for=198.51.100.7")
	if c := p.Client(r); c.String() != "198.51.100.7" {
		t.Errorf("client %q", c.String())
	}
	// The zero Proxies trusts nobody.
	if c := (httpx.Proxies{}).Client(r); c.String() != "10.0.0.1" || c.Proxied {
		t.Errorf("zero Proxies: client %q proxied %v", c.String(), c.Proxied)
	}
}

func BenchmarkClientThroughTwoProxies(b *testing.B) {
	p := httpx.NewProxies(trusted, "X-Forwarded-For")
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.0.0.1:80"
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.2")
	for b.Loop() {
		p.Client(r)
	}
}

// FuzzForwardedClientPrefix: whatever a client sends in Forwarded, a proxy
// that appends its element to the same line (", for=ADDR") makes the client
// either ADDR or, when the line does not parse, the proxy itself; never an
// address the client chose.
func FuzzForwardedClientPrefix(f *testing.F) {
	for _, seed := range []string{
		`for="1.2.3.4";x="`, `for="1.2.3.4\`, `for=1.2.3.4`, `for="1.2.3.4"`, `for=1.2.3.4;x`, `"`, `\"`, `for="\"", for="1.2.3.4`,
		`for=1.2.3.4, for="`, `for=1.2.3.4;host="a,b`, ``, ` `, `,`, `;`, `=`, `for=1.2.3.4 ;`, "for=\"1.2.3.4\t",
	} {
		f.Add(seed)
	}
	p := httpx.NewProxies(trusted, "Forwarded")
	f.Fuzz(func(t *testing.T, prefix string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "10.0.0.1:80"
		r.Header["Forwarded"] = []string{prefix + ", for=198.51.100.7"}
		if c := p.Client(r).String(); c != "198.51.100.7" && c != "10.0.0.1" {
			t.Errorf("Forwarded %q: client %s, chosen by the client", r.Header["Forwarded"][0], c)
		}
	})
}
