package front

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"

	"github.com/wikid/wikid/internal/edge"
)

// FuzzParse checks that parse never panics and that whatever it accepts,
// net/http reads the same way: same method, target, version, and the
// headers the fast path relies on.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD /wiki/A?b=1 HTTP/1.0\r\n\r\n",
		"GET /wiki/A HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip, br;q=0\r\nCookie: a=b\r\nIf-None-Match: \"x\"\r\n\r\n",
		"GET /wiki/A HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
		"GET /wiki/A HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
		"GET /wiki/A HTTP/1.1\r\nHost: a\r\n X: y\r\n\r\n",
		"GET  /wiki/A HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /0% HTTP/1.0\r\n\r\n", // not an escape: net/http's to refuse
		"GET /wiki/A%2 HTTP/1.1\r\nHost: a\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r request
		if !parse(b, &r) {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("parse accepted %q, net/http refuses it: %v", b, err)
		}
		method := "GET"
		if r.head {
			method = "HEAD"
		}
		if req.Method != method || req.RequestURI != string(r.target) || req.ProtoMinor != 1-btoi(r.http10) || req.ProtoMajor != 1 {
			t.Fatalf("%q: parse %s %q http10=%v; net/http %s %q %s", b, method, r.target, r.http10, req.Method, req.RequestURI, req.Proto)
		}
		if req.ContentLength > 0 || len(req.TransferEncoding) > 0 {
			t.Fatalf("%q: accepted a request with a body", b)
		}
		for _, h := range []string{"Authorization", "Range", "Upgrade", "Expect"} {
			if len(req.Header[h]) > 0 {
				t.Fatalf("%q: accepted a request with %s", b, h)
			}
		}
		// A request that may carry a session never reaches the anonymous
		// hit path: parse sets cookie, and the Personal hook decides.
		if _, err := req.Cookie("wikid_session"); err == nil && r.cookie == nil {
			t.Fatalf("%q: a session cookie was not seen", b)
		}
		var acc edge.Accepted
		for _, v := range req.Header["Accept-Encoding"] {
			acc |= edge.ParseAcceptEncoding(v)
		}
		if acc != r.accepted {
			t.Fatalf("%q: accepted encodings %v, net/http's header gives %v", b, r.accepted, acc)
		}
		if req.Header.Get("If-None-Match") != string(r.ifNoneMatch) || req.Header.Get("If-Modified-Since") != string(r.ifModSince) {
			t.Fatalf("%q: validators differ", b)
		}
		if req.Close != (r.connClose || r.http10 && !r.keepAlive) {
			t.Fatalf("%q: Close %v, parse close=%v keep-alive=%v", b, req.Close, r.connClose, r.keepAlive)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
