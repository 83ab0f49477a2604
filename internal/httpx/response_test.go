package httpx

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/edge"
	"github.com/wikid/wikid/internal/wiki"
)

var page = []byte(strings.Repeat("<p>A page long enough to be worth compressing.</p>\n", 40))

// write runs Write for a request built by the arguments and returns what it
// sent.
func write(t *testing.T, method, target string, shared bool, resp Response, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for _, h := range header {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Set(k, v)
	}
	q, err := Parse(r, &Spec{Name: "t"}, "/wiki/X", wiki.TitleRules{})
	if err != nil {
		t.Fatal(err)
	}
	q.Shared = shared
	w := httptest.NewRecorder()
	Write(w, With(r, q), &resp)
	return w
}

func TestWriteStatesCacheability(t *testing.T) {
	pub := Response{Type: "text/html; charset=utf-8", Body: page, Cache: Public, SMaxAge: 300, Tags: []string{"X"}}
	for _, tc := range []struct {
		name           string
		method, target string
		shared         bool
		resp           Response
		want           string
	}{
		{"an anonymous read", "GET", "/wiki/X", true, pub, "public, max-age=0, s-maxage=300"},
		{"a logged-in read of a public page", "GET", "/wiki/X", false, pub, "private, no-cache"},
		{"a non-canonical target", "GET", "/wiki/X?diff", true, pub, "no-store"},
		{"a POST", "POST", "/wiki/X", true, pub, "no-store"},
		{"a form", "GET", "/wiki/X", true, Response{Body: page}, "no-store"},
		{"an asset", "GET", "/wiki/X", false, Response{Body: page, Cache: Immutable}, "public, max-age=31536000, immutable"},
	} {
		w := write(t, tc.method, tc.target, tc.shared, tc.resp)
		if cc := w.Header().Get("Cache-Control"); cc != tc.want {
			t.Errorf("%s: Cache-Control %q, want %q", tc.name, cc, tc.want)
		}
		// Only an answer every reader gets names its tags (also under a
		// spelling nobody may store: it is the same answer).
		if sk := w.Header().Get("Surrogate-Key"); (sk != "") != (tc.shared && tc.resp.Cache == Public && tc.method == "GET") {
			t.Errorf("%s: Surrogate-Key %q", tc.name, sk)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s: no security headers", tc.name)
		}
	}
}

func TestWriteNegotiatesAndValidatesEachCoding(t *testing.T) {
	mod := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	resp := Response{Type: "text/html; charset=utf-8", Body: page, Cache: Private, Modified: mod}
	plain := write(t, "GET", "/wiki/X", false, resp)
	gz := write(t, "GET", "/wiki/X", false, resp, "Accept-Encoding: gzip")
	if plain.Header().Get("Content-Encoding") != "" || gz.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("codings: %q and %q", plain.Header().Get("Content-Encoding"), gz.Header().Get("Content-Encoding"))
	}
	etag, gzTag := plain.Header().Get("ETag"), gz.Header().Get("ETag")
	if gzTag != edge.VariantETag(etag, edge.Gzip) || etag == gzTag {
		t.Errorf("ETags %s and %s: each coding needs its own", etag, gzTag)
	}
	gzBody := gz.Body.String()
	zr, err := gzip.NewReader(strings.NewReader(gzBody))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); string(b) != string(page) {
		t.Error("the gzip body does not decode to the page")
	}
	if string(edge.GzipBytes(page)) != gzBody {
		t.Error("the gzip bytes differ from the edge's gzip variant of the same page (they share a validator)")
	}
	for _, tc := range []struct {
		hdr  []string
		want int
	}{
		{[]string{"If-None-Match: " + etag}, 304},
		{[]string{"If-None-Match: " + gzTag, "Accept-Encoding: gzip"}, 304},
		{[]string{"If-None-Match: " + etag, "Accept-Encoding: gzip"}, 200},
		{[]string{"If-Modified-Since: " + mod.Format(http.TimeFormat)}, 304},
		{[]string{"If-Modified-Since: " + mod.Add(-time.Second).Format(http.TimeFormat)}, 200},
	} {
		w := write(t, "GET", "/wiki/X", false, resp, tc.hdr...)
		if w.Code != tc.want {
			t.Errorf("%v: %d, want %d", tc.hdr, w.Code, tc.want)
		}
		if w.Code == 304 && (w.Body.Len() != 0 || w.Header().Get("Content-Type") != "") {
			t.Errorf("%v: a 304 with a body or a Content-Type", tc.hdr)
		}
	}
	head := write(t, "HEAD", "/wiki/X", false, resp, "Accept-Encoding: gzip")
	if head.Body.Len() != 0 || head.Header().Get("Content-Length") != gz.Header().Get("Content-Length") {
		t.Errorf("HEAD: %d body bytes, Content-Length %s (GET: %s)", head.Body.Len(), head.Header().Get("Content-Length"), gz.Header().Get("Content-Length"))
	}
}

// WriteContent answers ranges 206 with the content's fields, and the
// errors of a range or precondition it cannot serve with no-store and
// without the content's tag and file name.
func TestWriteContentRanges(t *testing.T) {
	content := strings.Repeat("0123456789", 10)
	for _, tc := range []struct {
		rng, ifMatch string
		status       int
		body         string
		cache, tag   string
	}{
		{"bytes=10-19", "", 206, content[10:20], "public, max-age=31536000, immutable", "X"},
		{"bytes=90-", `"abc"`, 206, content[90:], "public, max-age=31536000, immutable", "X"},
		{"bytes=1000-", "", 416, "", "no-store", ""},
		{"bytes=x", "", 416, "", "no-store", ""},
		{"bytes=10-19", `"other"`, 412, "", "no-store", ""},
	} {
		r := httptest.NewRequest("GET", "/wiki/X", nil)
		r.Header.Set("Range", tc.rng)
		if tc.ifMatch != "" {
			r.Header.Set("If-Match", tc.ifMatch)
		}
		q, err := Parse(r, &Spec{Name: "t"}, "/wiki/X", wiki.TitleRules{})
		if err != nil {
			t.Fatal(err)
		}
		q.Shared = true
		w := httptest.NewRecorder()
		WriteContent(w, With(r, q), &Response{Type: "image/png", Cache: Immutable, ETag: `"abc"`, Tags: []string{"X"},
			Header: http.Header{"Content-Disposition": {"inline; filename*=UTF-8''X.png"}}}, strings.NewReader(content))
		h := w.Header()
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) {
			t.Errorf("Range %s: %d %q, want %d %q", tc.rng, w.Code, w.Body.String(), tc.status, tc.body)
		}
		if cc := h.Get("Cache-Control"); cc != tc.cache {
			t.Errorf("Range %s: Cache-Control %q, want %q", tc.rng, cc, tc.cache)
		}
		if sk := h.Get("Surrogate-Key"); (sk != "") != (tc.tag != "") {
			t.Errorf("Range %s: Surrogate-Key %q", tc.rng, sk)
		}
		if w.Code >= 400 && h.Get("Content-Disposition") != "" {
			t.Errorf("Range %s: an error with the content's Content-Disposition %q", tc.rng, h.Get("Content-Disposition"))
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("Range %s: no nosniff", tc.rng)
		}
	}
}
