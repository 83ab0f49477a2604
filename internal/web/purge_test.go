package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/wiki"
)

// TestPurgeIsRateLimited: a purge costs a render and a purge of every
// cache, so a user, or an anonymous reader's address, may purge 30 pages a
// minute, each from the confirmation form, and a page that does not exist
// is not purged at all.
func TestPurgeIsRateLimited(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, pw := w.CreateUser(t, "Purger", wiki.GroupUser)
	anon := w.Client(t)
	// The form a GET shows changes nothing; its POST purges.
	tok := anon.CSRF("/wiki/Main_Page?action=purge")
	for i := 0; i < 30; i++ {
		mustRedirect(t, anon.PostForm("/wiki/Main_Page?action=purge", url.Values{"csrf": {tok}}), http.StatusSeeOther, "/wiki/Main_Page")
	}
	res := anon.PostForm("/wiki/Main_Page?action=purge", url.Values{"csrf": {tok}})
	mustStatus(t, res, http.StatusTooManyRequests)
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" || res.Header.Get("Retry-After") == "" {
		t.Errorf("refused purge: Cache-Control %q, Retry-After %q", cc, res.Header.Get("Retry-After"))
	}

	u := w.Login(t, "Purger", pw)
	csrf := u.CSRF("/wiki/Main_Page?action=purge")
	mustStatus(t, u.PostForm("/wiki/No_such_page?action=purge", url.Values{"csrf": {csrf}}), http.StatusNotFound)
	for i := 0; i < 29; i++ { // the 404 above counted too
		mustRedirect(t, u.PostForm("/wiki/Main_Page?action=purge", url.Values{"csrf": {csrf}}), http.StatusSeeOther, "/wiki/Main_Page")
	}
	res = u.PostForm("/wiki/Main_Page?action=purge", url.Values{"csrf": {csrf}})
	mustStatus(t, res, http.StatusTooManyRequests)
	if res.Header.Get("Retry-After") == "" {
		t.Error("a refused purge has no Retry-After")
	}
}
