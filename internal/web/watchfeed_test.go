package web_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

var feedURLRE = regexp.MustCompile(`<code class="secret">([^<]+)</code>`)

// TestFeedsWatchlist: a user's watchlist as a feed for a reader with no
// session, through a private token made in the preferences.
func TestFeedsWatchlist(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.CanonicalURL = "https://wiki.example" })
	_, pw := w.CreateUser(t, "Reader", wiki.GroupUser)
	reader := w.Login(t, "Reader", pw)
	_, opw := w.CreateUser(t, "Writer", wiki.GroupUser)
	writer := w.Login(t, "Writer", opw)
	writer.Edit("Followed", "first")
	writer.Edit("Ignored", "first")
	if res := watchPost(t, reader, "Followed", "watch", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("watch: %d", res.StatusCode)
	}
	writer.Edit("Followed", "second, with <b>markup</b>")

	makeLink := func(extra url.Values) *apptest.Response {
		form := url.Values{"csrf": {reader.CSRF("/wiki/Special:Preferences")}, "do": {"wltoken"}}
		for k, v := range extra {
			form[k] = v
		}
		return reader.PostForm("/wiki/Special:Preferences", form)
	}
	res := makeLink(nil)
	m := feedURLRE.FindStringSubmatch(res.Body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("preferences: %d, no feed link\n%s", res.StatusCode, res.Body)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	path := strings.TrimPrefix(link, "https://wiki.example")
	anon := w.Client(t)

	t.Run("the link gives the watchlist's changes to a reader without a session, privately", func(t *testing.T) {
		res := anon.Get(path)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/atom+xml") {
			t.Fatalf("%s: %d %s\n%s", path, res.StatusCode, res.Header.Get("Content-Type"), res.Body)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "private") || strings.Contains(cc, "public") {
			t.Errorf("Cache-Control %q", cc)
		}
		if xc := res.Header.Get("X-Cache"); xc == "HIT" || xc == "MISS" {
			t.Errorf("the token feed went through the edge cache (X-Cache %s)", xc)
		}
		titles := wellFormed(t, res.Body, "title")
		joined := strings.Join(titles, "|")
		if !strings.Contains(joined, "Followed") || strings.Contains(joined, "Ignored") {
			t.Errorf("entry titles %q", titles)
		}
		dir := t.TempDir()
		f := filepath.Join(dir, "watchlist-atom.xml")
		if err := os.WriteFile(f, []byte(res.Body), 0o644); err != nil {
			t.Fatal(err)
		}
		rss := anon.Get(strings.Replace(path, "feed=atom", "feed=rss", 1))
		fr := filepath.Join(dir, "watchlist-rss.xml")
		if err := os.WriteFile(fr, []byte(rss.Body), 0o644); err != nil {
			t.Fatal(err)
		}
		checkWithFeedparser(t, []string{f, fr})
	})
	t.Run("a wrong token, another owner or a revoked link gets nothing", func(t *testing.T) {
		for _, bad := range []string{
			strings.Replace(path, "wltoken=", "wltoken=x", 1),
			strings.Replace(path, "wlowner=Reader", "wlowner=Writer", 1),
			strings.Replace(path, "wlowner=Reader", "wlowner=Nobody", 1),
		} {
			if res := anon.Get(bad); res.StatusCode != http.StatusForbidden || strings.Contains(res.Body, "Followed") {
				t.Errorf("%s: %d", bad, res.StatusCode)
			}
		}
		if res := anon.Get("/wiki/Special:Watchlist?wlowner=Reader&wltoken=abc"); res.StatusCode != http.StatusBadRequest {
			t.Errorf("no feed parameter: %d", res.StatusCode)
		}
		makeLink(url.Values{"revoke": {"1"}})
		if res := anon.Get(path); res.StatusCode != http.StatusForbidden {
			t.Errorf("revoked: %d", res.StatusCode)
		}
	})
}

// TestFeedsWatchlistOnPrivateWiki: on a wiki only logged-in users read,
// the feed link works for its reader (which has no session) while its
// owner may read the wiki, and the watchlist page still asks for a login.
func TestFeedsWatchlistOnPrivateWiki(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) {
		c.CanonicalURL = "https://wiki.example"
		c.ReadGroup = wiki.GroupUser
	})
	_, pw := w.CreateUser(t, "Reader", wiki.GroupUser)
	reader := w.Login(t, "Reader", pw)
	reader.Edit("Followed", "first")
	res := reader.PostForm("/wiki/Special:Preferences", url.Values{"csrf": {reader.CSRF("/wiki/Special:Preferences")}, "do": {"wltoken"}})
	m := feedURLRE.FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatalf("no feed link: %d", res.StatusCode)
	}
	path := strings.TrimPrefix(strings.ReplaceAll(m[1], "&amp;", "&"), "https://wiki.example")
	anon := w.Client(t)
	if res := anon.Get(path); res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "Followed") {
		t.Fatalf("the feed link on a private wiki: %d\n%.300s", res.StatusCode, res.Body)
	}
	if res := anon.Get("/wiki/Special:Watchlist"); res.StatusCode != http.StatusFound {
		t.Errorf("the watchlist page without a session: %d", res.StatusCode)
	}
	if res := anon.Get(strings.Replace(path, "wltoken=", "wltoken=x", 1)); res.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong token on a private wiki: %d", res.StatusCode)
	}
}
