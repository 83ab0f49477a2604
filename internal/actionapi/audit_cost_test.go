package actionapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A namespace filter names each namespace once, however often the
// request repeats it: the store's query stays the size of the namespace
// list.
func TestRepeatedNamespacesAreOneFilter(t *testing.T) {
	wd := newWorld(t)
	anon := wd.w.Client(t)
	ns := strings.TrimSuffix(strings.Repeat("0|1|14|", 100000), "|")
	for _, q := range []url.Values{
		{"action": {"query"}, "list": {"recentchanges"}, "rcnamespace": {ns}, "rclimit": {"max"}},
		{"action": {"query"}, "list": {"usercontribs"}, "ucuser": {"Root"}, "ucnamespace": {ns}},
		{"action": {"query"}, "list": {"search"}, "srsearch": {"apples"}, "srnamespace": {ns}},
		{"action": {"query"}, "list": {"categorymembers"}, "cmtitle": {"Category:Fruit"}, "cmnamespace": {ns}, "cmlimit": {"max"}},
	} {
		start := time.Now()
		out, res := api(t, anon, "POST", q)
		if errCode(out) != "" || res.StatusCode != http.StatusOK {
			t.Errorf("%v: %d %.300s", q.Get("list"), res.StatusCode, res.Body)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v", q.Get("list"), d)
		}
	}
}

// Hundreds of thousands of unknown parameters cost one pass: the answer
// names the first few.
func TestManyUnknownParametersAreCheap(t *testing.T) {
	wd := newWorld(t)
	anon := wd.w.Client(t)
	q := url.Values{"action": {"query"}, "meta": {"userinfo"}}
	for i := range 100000 {
		q.Set("p"+strconv.Itoa(i), "")
	}
	start := time.Now()
	_, res := api(t, anon, "POST", q)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%v", d)
	}
	if len(res.Body) > 16<<10 || !strings.Contains(res.Body, "more") {
		t.Errorf("answer of %d bytes: %.500s", len(res.Body), res.Body)
	}
}
