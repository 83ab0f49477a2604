package edge

import (
	"net/http"
	"testing"
)

// FuzzKeyOf: the front server keys a request with KeyOf on the raw request
// line, net/http with Key on the parsed request. They must agree on every
// target net/http accepts, or the front could answer one URL with the entry
// stored for another (issue 5, item 5). Where KeyOf declines, the front
// hands the request to net/http, which is safe. KeyOf must also be idempotent and
// never panic.
func FuzzKeyOf(f *testing.F) {
	for _, s := range []string{"/wiki/Main_Page", "/wiki/%EB%8C%80%EB%AC%B8", "/wiki/%eb%8c%80", "/wiki/대문",
		"/wiki/A%2fB", "/wiki/A/./B/../C", "//wiki//A", "/w?b=2&a=1&a=", "/w?q=a+b%20c", "/wiki/100%25_sure%3F",
		"/wiki/100%_sure", "/static/style.css?v=1", "/%", "/?", "/wiki/Special:Search?q=%E2%80%AE&go=1", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			k1, ok1 := KeyOf(m, target)
			if ok1 {
				if k2, ok2 := KeyOf(m, k1); !ok2 || k2 != k1 {
					t.Fatalf("KeyOf is not idempotent: %q → %q → %q", target, k1, k2)
				}
			}
			r, ok := readRequest(target)
			if !ok {
				continue
			}
			r.Method = m
			want, wok := Key(r)
			if !wok {
				continue
			}
			// KeyOf may decline what net/http accepts (the front then hands
			// the request to net/http); what it keys must match.
			if ok1 && k1 != want {
				t.Fatalf("%s %q: KeyOf = %q, %v; Key = %q", m, target, k1, ok1, want)
			}
		}
	})
}
