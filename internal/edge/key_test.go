package edge

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		name, method, target string
		hdr                  []string
		want                 string
		ok                   bool
	}{
		{"a plain path is itself", "GET", "/wiki/Main_Page", nil, "/wiki/Main_Page", true},
		{"HEAD shares GET's key", "HEAD", "/wiki/Main_Page", nil, "/wiki/Main_Page", true},
		{"POST is not cached", "POST", "/wiki/Main_Page", nil, "", false},
		{"Authorization is not cached", "GET", "/wiki/A", []string{"Authorization", "Basic eA=="}, "", false},
		{"Range is not cached", "GET", "/wiki/A", []string{"Range", "bytes=0-1"}, "", false},
		{"cookies do not split the key", "GET", "/wiki/A", []string{"Cookie", "WMF-Last-Access=1"}, "/wiki/A", true},
		{"double slashes collapse", "GET", "//wiki///A", nil, "/wiki/A", true},
		{"dot segments resolve", "GET", "/wiki/./x/../A", nil, "/wiki/A", true},
		{"dot-dot above the root stays at the root", "GET", "/../../A", nil, "/A", true},
		{"a trailing slash is kept", "GET", "/wiki/", nil, "/wiki/", true},
		{"escaped unreserved characters decode", "GET", "/wiki/%41%62%2D%7e", nil, "/wiki/Ab-~", true},
		{"escaped dots are dot segments", "GET", "/wiki/%2E%2E/A", nil, "/A", true},
		{"reserved escapes are upper-cased and kept", "GET", "/wiki/A%2fb%3f", nil, "/wiki/A%2Fb%3F", true},
		{"UTF-8 stays escaped", "GET", "/wiki/%c3%a9t%C3%A9", nil, "/wiki/%C3%A9t%C3%A9", true},
		{"query parameters sort by name", "GET", "/w?title=A&action=raw", nil, "/w?action=raw&title=A", true},
		{"repeated names keep their order", "GET", "/w?t=B&a=1&t=A", nil, "/w?a=1&t=B&t=A", true},
		{"empty parameters are dropped", "GET", "/w?&a=&b=1&&c&=x", nil, "/w?b=1", true},
		{"an empty query is no query", "GET", "/w?", nil, "/w", true},
		{"query encoding is canonical", "GET", "/w?q=a%20b+c%2fd%41", nil, "/w?q=a+b+c%2FdA", true},
		{"a stray percent is escaped", "GET", "/w?q=100%", nil, "/w?q=100%25", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, nil)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				r.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			got, ok := Key(r)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Key(%s %s) = %q, %v; want %q, %v", tc.method, tc.target, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestKeyOfACanonicalRequestDoesNotAllocate(t *testing.T) {
	for _, target := range []string{"/wiki/Main_Page", "/w/index.php?action=history&title=Main_Page"} {
		r := httptest.NewRequest("GET", target, nil)
		if n := testing.AllocsPerRun(100, func() { Key(r) }); n != 0 {
			t.Errorf("Key(%s): %v allocations", target, n)
		}
	}
}

// readRequest parses a request line the way the server does; ok is false when
// the server would reject it.
func readRequest(target string) (*http.Request, bool) {
	if strings.ContainsAny(target, " \r\n") {
		return nil, false
	}
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: wiki\r\n\r\n")))
	if err != nil {
		return nil, false
	}
	return r, true
}

func FuzzKey(f *testing.F) {
	for _, s := range []string{"/", "/wiki/Main_Page", "//a/./b/../c/", "/w?b=2&a=1&a=", "/%2e%2E/%41%zz%", "/w?q=%ZZ+x&&=&k",
		"/wiki/%C3%A9", "/a;b=c/@:!$'()*,", "http://host/abs?x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		r, ok := readRequest(target)
		if !ok {
			return
		}
		key, ok := Key(r)
		if !ok {
			return
		}
		for i := 0; i < len(key); i++ {
			if c := key[i]; c <= ' ' || c >= 0x7f {
				t.Fatalf("key %q has byte %#x", key, c)
			}
		}
		if key == "" || key[0] != '/' {
			t.Fatalf("key %q is not a path", key)
		}
		r2, ok := readRequest(key)
		if !ok {
			t.Fatalf("key %q is not a valid request target", key)
		}
		key2, ok := Key(r2)
		if !ok || key2 != key {
			t.Fatalf("Key is not idempotent: %q → %q → %q", target, key, key2)
		}
	})
}

// KeyOf, used by the front server on the raw request line, must agree with
// Key on every target net/http accepts.
func TestKeyOfAgreesWithKey(t *testing.T) {
	for _, target := range []string{
		"/wiki/Main_Page", "//wiki///A", "/wiki/./x/../A", "/../../A", "/wiki/",
		"/wiki/%41%62%2D%7e", "/wiki/%2E%2E/A", "/wiki/A%2fb%3f", "/wiki/%c3%a9t%C3%A9",
		"/w?title=A&action=raw", "/w?t=B&a=1&t=A", "/w?&a=&b=1&&c&=x", "/w?", "/w?q=a%20b+c%2fd%41",
		"/w?q=100%", "/wiki/A!$&'()*+,;=:@", "/wiki/é", "/", "/w/index.php?action=history&title=Main_Page",
	} {
		for _, m := range []string{"GET", "HEAD", "POST"} {
			r := httptest.NewRequest(m, target, nil)
			want, wok := Key(r)
			got, ok := KeyOf(m, target)
			if got != want || ok != wok {
				t.Errorf("KeyOf(%s %s) = %q, %v; Key = %q, %v", m, target, got, ok, want, wok)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { KeyOf("GET", "/wiki/Main_Page") }); n != 0 {
		t.Errorf("KeyOf of a canonical target: %v allocations", n)
	}
	if _, ok := KeyOf("GET", "http://example.com/wiki/A"); ok {
		t.Error("KeyOf accepted an absolute-form target")
	}
}
