package actionapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Malformed input is answered with an API error in JSON, never a server
// error or a page.
func TestMalformedInput(t *testing.T) {
	wd := newWorld(t)
	anon := wd.w.Client(t)
	check := func(name string, status int, body string) {
		t.Helper()
		var out map[string]any
		if status >= 500 || json.Unmarshal([]byte(body), &out) != nil {
			t.Errorf("%s: %d %.300s", name, status, body)
		}
	}
	for _, q := range []string{
		"action=query&titles=%FF&format=json",
		"action=query&titles=A%00B&prop=info&format=json",
		"action=query&titles=A&titles=B&format=json",
		"action=query&titles=A&titles=A&format=json",
		"action=query&list=allpages&apcontinue=%00&format=json",
		"action=query&list=recentchanges&rccontinue=-5|-5&format=json",
		"action=query&list=recentchanges&rccontinue=99999999999999999999|1&format=json",
		"action=query&titles=Alpha&prop=revisions&rvcontinue=-1&rvlimit=2&format=json",
		"action=query&titles=Alpha&prop=links&plcontinue=-1|%00&format=json",
		"action=query&list=categorymembers&cmtitle=Fruit&cmcontinue=page|%00%0A%00&format=json",
		"action=query&list=search&srsearch=a&sroffset=-1&format=json",
		"action=query&revids=-1|0|99999999999999999999&format=json",
		"action=query&pageids=%2B1&format=json",
		"action=parse&oldid=-1&format=json",
		"action=parse&page=%00&format=json",
		"action=query&list=allpages&aplimit=-1&format=json",
		"action=query&list=allpages&aplimit=1e9&format=json",
		"action=query&meta=siteinfo&siprop=%1Fgeneral%1Fnamespaces&format=json",
		"action=query&generator=allpages&gaplimit=max&prop=revisions&rvprop=content&rvslots=*&formatversion=2&format=json",
		"action=%FF",
		"action=query&%FF=1",
		"action=query&a%zz=1",
	} {
		res := anon.Get("/w/api.php?" + q)
		check(q, res.StatusCode, res.Body)
	}
	for _, ct := range []string{"application/x-www-form-urlencoded; charset=utf-16", "multipart/form-data", "multipart/form-data; boundary=x", "text/plain", ""} {
		r := anon.NewRequest("POST", "/w/api.php", strings.NewReader("action=query&titles=%FF&format=json"))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		res := anon.Do(r)
		check(ct, res.StatusCode, res.Body)
	}
	res := anon.Multipart("/w/api.php", map[string]string{"action": "query", "titles": "\xff\xfe", "format": "json"}, "", nil, nil)
	check("multipart invalid UTF-8", res.StatusCode, res.Body)
	res = anon.Multipart("/w/api.php", map[string]string{"action": "upload", "filename": "\xff.png", "format": "json", "token": "x"}, "\xff.png", []byte("x"), http.Header{})
	check("multipart upload name", res.StatusCode, res.Body)
}
