package actionapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
)

// deletePage deletes title as the administrator, through the API.
func deletePage(t *testing.T, wd *world, title string) {
	t.Helper()
	root := wd.w.Login(t, "Root", wd.adminPwd)
	out, _ := api(t, root, "POST", url.Values{"action": {"delete"}, "title": {title}, "reason": {"test"}, "token": {csrf(t, root)}})
	if dig(out, "delete", "title") != title {
		t.Fatalf("delete %s: %v", title, out)
	}
}

// The revisions of a deleted page are archived: no module shows their
// text or their page to anyone, as MediaWiki (revids= lists them as bad
// revision IDs, parse&oldid= answers nosuchrevid).
func TestDeletedRevisionsStayHidden(t *testing.T) {
	wd := newWorld(t)
	ctx := context.Background()
	p, err := wd.w.App.Store.FindPage(ctx, "Beta")
	if err != nil {
		t.Fatal(err)
	}
	rev := fmt.Sprint(p.LatestID)
	deletePage(t, wd, "Beta")
	anon := wd.w.Client(t)
	alice := wd.w.Client(t)
	apiLogin(t, wd, alice)
	for _, c := range []*apptest.Client{anon, alice} {
		for _, q := range []url.Values{
			{"action": {"query"}, "revids": {rev}, "prop": {"revisions|info"}, "rvprop": {"content|ids|comment|user"}},
			{"action": {"query"}, "revids": {rev}, "prop": {"revisions"}, "rvprop": {"content"}, "formatversion": {"2"}, "rvslots": {"main"}},
			{"action": {"parse"}, "oldid": {rev}},
			{"action": {"parse"}, "oldid": {rev}, "prop": {"wikitext|links|sections"}},
			{"action": {"query"}, "titles": {"Beta"}, "prop": {"revisions"}, "rvprop": {"content"}, "rvlimit": {"5"}},
		} {
			out, res := api(t, c, "GET", q)
			if strings.Contains(res.Body, "bananas") || strings.Contains(res.Body, "lastrevid") {
				t.Errorf("%v: %s", q, res.Body)
			}
			if q.Has("revids") && dig(out, "query", "badrevids") == nil {
				t.Errorf("%v: no badrevids: %s", q, res.Body)
			}
			if q.Get("action") == "parse" && errCode(out) != "nosuchrevid" {
				t.Errorf("%v: %s", q, res.Body)
			}
		}
	}
}

// A parameter with many unrecognized values costs one warning each, at
// most: not a scan of the warnings so far for each (quadratic), and the
// answer stays small.
func TestManyUnrecognizedValuesAreCheap(t *testing.T) {
	wd := newWorld(t)
	anon := wd.w.Client(t)
	var b strings.Builder
	for i := range 200000 {
		if i > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "x%d", i)
	}
	for _, name := range []string{"prop", "list", "meta", "rvprop", "uiprop"} {
		q := url.Values{"action": {"query"}, name: {b.String()}, "titles": {"Alpha"}, "meta": {"userinfo"}}
		if name == "meta" {
			q.Set("meta", b.String()+"|userinfo")
		}
		if name == "rvprop" {
			q.Set("prop", "revisions")
		}
		start := time.Now()
		_, res := api(t, anon, "POST", q)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v", name, d)
		}
		if len(res.Body) > 64<<10 {
			t.Errorf("%s: answer of %d bytes", name, len(res.Body))
		}
	}
}

// The edits of a deleted page leave recent changes and contributions, as
// MediaWiki archives them (their summaries included); the deletion's log
// row stays. Restoring the page brings them back.
func TestDeletedEditsLeaveListings(t *testing.T) {
	wd := newWorld(t)
	root := wd.w.Login(t, "Root", wd.adminPwd)
	out, _ := api(t, root, "POST", url.Values{"action": {"edit"}, "title": {"Beta"}, "text": {"Beta again."}, "summary": {"secret summary"}, "token": {csrf(t, root)}})
	if dig(out, "edit", "result") != "Success" {
		t.Fatalf("%v", out)
	}
	deletePage(t, wd, "Beta")
	anon := wd.w.Client(t)
	for _, q := range []url.Values{
		{"action": {"query"}, "list": {"recentchanges"}, "rcprop": {"title|comment|ids"}, "rclimit": {"max"}, "formatversion": {"2"}},
		{"action": {"query"}, "list": {"usercontribs"}, "ucuser": {"Root"}, "ucprop": {"title|comment|ids"}, "uclimit": {"max"}, "formatversion": {"2"}},
		{"action": {"query"}, "generator": {"recentchanges"}, "formatversion": {"2"}},
	} {
		_, res := api(t, anon, "GET", q)
		if strings.Contains(res.Body, "secret summary") || strings.Contains(res.Body, `"revid":4`) {
			t.Errorf("%v: %s", q.Get("list")+q.Get("generator"), res.Body)
		}
	}
	_, res := api(t, anon, "GET", url.Values{"action": {"query"}, "list": {"recentchanges"}, "rcprop": {"title|comment"}, "rctype": {"log"}})
	if !strings.Contains(res.Body, `"Beta"`) {
		t.Errorf("the deletion's log row is gone: %s", res.Body)
	}
	// Alpha's edits are still there.
	_, res = api(t, anon, "GET", url.Values{"action": {"query"}, "list": {"usercontribs"}, "ucuser": {"Root"}})
	if !strings.Contains(res.Body, `"Alpha"`) {
		t.Errorf("%s", res.Body)
	}
}
