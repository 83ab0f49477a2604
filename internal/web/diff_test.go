package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/diff/difftest"
	"github.com/wikid/wikid/internal/wiki"
)

// conditional fetches path with one validator header and returns the answer.
func conditional(c *apptest.Client, path, header, value string) *apptest.Response {
	r := c.NewRequest(http.MethodGet, path, nil)
	r.Header.Set(header, value)
	return c.Do(r)
}

func TestDiffsAreComputedOnceAndRevalidated(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	anon := w.Client(t)
	alice := w.Login(t, "Alice", pw)
	alice.Edit("Compared", "alpha\nbeta\ngamma\n")
	alice.Edit("Compared", "alpha\nBETA\ngamma\ndelta\n")
	ids := revisionIDs(t, anon, "Compared")
	path := "/wiki/Compared?diff=" + ids[0] + "&oldid=" + ids[1]
	rest := "/w/rest.php/v1/revision/" + ids[1] + "/compare/" + ids[0]
	eng := w.App.Engine
	base := eng.DiffsComputed()
	computed := func(t *testing.T, want int64) {
		t.Helper()
		if n := eng.DiffsComputed() - base; n != want {
			t.Fatalf("the diff was computed %d times, want %d", n, want)
		}
	}
	revalidates := func(t *testing.T, c *apptest.Client, path string, res *apptest.Response) {
		t.Helper()
		etag, lastMod := res.Header.Get("ETag"), res.Header.Get("Last-Modified")
		if etag == "" || lastMod == "" {
			t.Fatalf("GET %s: ETag %q, Last-Modified %q; want both", path, etag, lastMod)
		}
		mustStatus(t, conditional(c, path, "If-None-Match", etag), http.StatusNotModified)
		mustStatus(t, conditional(c, path, "If-Modified-Since", lastMod), http.StatusNotModified)
	}

	t.Run("an anonymous diff is computed once, carries validators and answers 304", func(t *testing.T) {
		res := anon.Get(path)
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `<table class="diff`, "BETA", "delta")
		mustNotContain(t, res, "diff-coarse", "diff-truncated")
		computed(t, 1)
		revalidates(t, anon, path, res)
	})
	t.Run("a logged-in view reuses the computed diff and answers 304", func(t *testing.T) {
		res := alice.Get(path)
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "Revert to the older revision", "BETA")
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "private") {
			t.Errorf("Cache-Control %q, want private", cc)
		}
		computed(t, 1)
		revalidates(t, alice, path, res)
		computed(t, 1)
	})
	t.Run("the REST comparison of the same pair reuses it and answers 304", func(t *testing.T) {
		res := anon.Get(rest)
		mustStatus(t, res, http.StatusOK)
		var out struct {
			Diff      []struct{ Type int } `json:"diff"`
			Coarse    *bool                `json:"coarse"`
			Truncated *bool                `json:"truncated"`
		}
		if err := json.Unmarshal([]byte(res.Body), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Diff) == 0 || out.Coarse == nil || *out.Coarse || out.Truncated == nil || *out.Truncated {
			t.Fatalf("REST answer %s", res.Body)
		}
		computed(t, 1)
		revalidates(t, anon, rest, res)
		revalidates(t, alice, rest, alice.Get(rest))
		computed(t, 1)
	})
	t.Run("an edit purges the pages but not the computed diff, and the revert button goes", func(t *testing.T) {
		cur := "/wiki/Compared?diff=cur&oldid=" + ids[1]
		mustNotContain(t, anon.Get(cur), "epsilon")
		computed(t, 1)
		alice.Edit("Compared", "alpha\nBETA\ngamma\ndelta\nepsilon\n")
		res := anon.Get(path)
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, "BETA")
		if x := res.Header.Get("X-Cache"); x == "HIT" {
			t.Errorf("X-Cache %q after an edit of the page: the diff page was not purged", x)
		}
		res = alice.Get(path)
		mustStatus(t, res, http.StatusOK)
		mustNotContain(t, res, "Revert to the older revision")
		computed(t, 1)
		// diff=cur names the latest revision: its page follows the edit.
		mustContain(t, anon.Get(cur), "epsilon")
		computed(t, 2)
	})
}

func TestHugeDiffsSayTheyAreApproximateAndCut(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	anon := w.Client(t)
	alice := w.Login(t, "Alice", pw)
	// Two revisions of 128 KiB made of the lines "yes" and "no" in random
	// order: too costly for an exact comparison (no line is unique, the
	// edit distance is a third of the lines), and too large to show in full.
	p := difftest.Shape("two-line-alphabet", 128<<10)
	alice.Edit("Huge", p.Old)
	alice.Edit("Huge", p.New)
	ids := revisionIDs(t, anon, "Huge")
	path := "/wiki/Huge?diff=" + ids[0] + "&oldid=" + ids[1]
	base := w.App.Engine.DiffsComputed()
	for _, c := range []struct {
		name   string
		client *apptest.Client
	}{{"anonymous", anon}, {"logged in", alice}} {
		t.Run("the diff page says so to a reader "+c.name, func(t *testing.T) {
			res := c.client.Get(path)
			mustStatus(t, res, http.StatusOK)
			mustContain(t, res, `class="notice diff-coarse"`, "differ too much to be compared exactly",
				`class="notice diff-truncated"`, "too large to show in full",
				`href="/wiki/Huge?action=raw&amp;oldid=`+ids[1]+`"`, `href="/wiki/Huge?action=raw&amp;oldid=`+ids[0]+`"`)
			if len(res.Body) > 3<<20 {
				t.Errorf("the page has %d bytes; the table is capped near 2 MB", len(res.Body))
			}
		})
	}
	t.Run("the REST answer says so", func(t *testing.T) {
		res := anon.Get("/w/rest.php/v1/revision/" + ids[1] + "/compare/" + ids[0])
		mustStatus(t, res, http.StatusOK)
		mustContain(t, res, `"coarse":true`, `"truncated":true`)
	})
	if n := w.App.Engine.DiffsComputed() - base; n != 1 {
		t.Errorf("the diff was computed %d times, want 1", n)
	}
}
