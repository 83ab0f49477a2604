package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/engine"
	"github.com/wikid/wikid/internal/render/pathological"
	"github.com/wikid/wikid/internal/wiki"
)

type apiErrorBody struct {
	HTTPCode            int               `json:"httpCode"`
	ErrorKey            string            `json:"errorKey"`
	MessageTranslations map[string]string `json:"messageTranslations"`
}

func TestPageSizeLimit(t *testing.T) {
	t.Parallel()
	const limit = 4096
	w := apptest.New(t, func(c *config.Config) { c.MaxPageBytes = limit })
	u, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	token := apiToken(t, w, u)
	alice := w.Login(t, "Alice", pw)
	big := strings.Repeat("word ", limit/5+1) // just over the limit

	t.Run("a page of the limit saves", func(t *testing.T) {
		alice.Edit("Fits", strings.Repeat("a", limit))
	})
	t.Run("a larger save shows the form again with the text and a 413", func(t *testing.T) {
		csrf, base := alice.EditForm("Big")
		res := alice.Submit("Big", csrf, base, big)
		mustStatus(t, res, http.StatusRequestEntityTooLarge)
		mustContain(t, res, "max_page_bytes", "4096 bytes", "Split the page", `name="text"`, "word word word")
	})
	t.Run("a larger preview shows the form again with a 413", func(t *testing.T) {
		csrf, base := alice.EditForm("Big")
		res := alice.PostForm("/wiki/Big?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {big}, "preview": {"1"}})
		mustStatus(t, res, http.StatusRequestEntityTooLarge)
		mustContain(t, res, "max_page_bytes", `name="text"`, "word word word")
	})
	t.Run("REST answers a larger page with a JSON 413", func(t *testing.T) {
		res := w.Client(t).JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Big","source":"`+big+`"}`)
		mustStatus(t, res, http.StatusRequestEntityTooLarge)
		e := decode[apiErrorBody](t, res)
		if e.ErrorKey != "rest-too-large" || !strings.Contains(e.MessageTranslations["en"], "max_page_bytes") {
			t.Errorf("413 body %+v", e)
		}
	})
	t.Run("REST answers a body over the request limit with a JSON 413", func(t *testing.T) {
		huge := strings.Repeat("x", 3*limit+65<<10)
		res := w.Client(t).JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"Huge","source":"`+huge+`"}`)
		mustStatus(t, res, http.StatusRequestEntityTooLarge)
		if e := decode[apiErrorBody](t, res); e.ErrorKey != "rest-too-large" {
			t.Errorf("413 body %+v", e)
		}
	})
}

// TestPreviewsChargedByWhatTheyRender: a preview of a short text that
// transcludes a large page renders megabytes; previews are charged to the
// client's parse limit (shared with api.php's parse) by their text and by
// what they made, so that a few such previews a minute are shown and the
// next is answered 429 with the author's text kept, while saving, and
// another user's previews, go on.
func TestPreviewsChargedByWhatTheyRender(t *testing.T) {
	t.Parallel()
	w := apptest.New(t)
	_, apw := w.CreateUser(t, "Alice", wiki.GroupUser)
	alice := w.Login(t, "Alice", apw)
	alice.Edit("Big", strings.Repeat("lorem ipsum ", 34000)) // 400 KB
	csrf, base := alice.EditForm("Sandbox")
	preview := func(c *apptest.Client, text string) *apptest.Response {
		return c.PostForm("/wiki/Sandbox?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {text}, "preview": {"1"}})
	}
	shown, last := 0, (*apptest.Response)(nil)
	for i := range 30 {
		last = preview(alice, fmt.Sprintf("{{:Big}} %d", i))
		if last.StatusCode != http.StatusOK {
			break
		}
		mustContain(t, last, "lorem ipsum")
		shown++
	}
	if shown < 2 || shown >= 20 {
		t.Fatalf("%d previews transcluding 400 KB shown in a row, want a few", shown)
	}
	mustStatus(t, last, http.StatusTooManyRequests)
	mustContain(t, last, `name="text"`, "{{:Big}}", "previewed a lot of text")
	if last.Header.Get("Retry-After") == "" || strings.Contains(last.Body, `class="preview"`) {
		t.Errorf("the refused preview: Retry-After %q, or a preview shown", last.Header.Get("Retry-After"))
	}
	// A section's preview is refused too, before its heading is looked for.
	res := alice.PostForm("/wiki/Sandbox?action=submit&section=1", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"# Part\n\n{{:Big}}"}, "preview": {"1"}})
	mustStatus(t, res, http.StatusTooManyRequests)
	mustContain(t, res, `name="text"`, "{{:Big}}", "previewed a lot of text")
	// Saving does not wait for the parse limit.
	if res := alice.Submit("Sandbox", csrf, base, "{{:Big}} saved"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a save after the previews ran out: %d", res.StatusCode)
	}
	// Another user's limit is their own.
	_, bpw := w.CreateUser(t, "Bob", wiki.GroupUser)
	bob := w.Login(t, "Bob", bpw)
	bcsrf, bbase := bob.EditForm("Bob sandbox")
	res = bob.PostForm("/wiki/Bob_sandbox?action=submit", url.Values{"csrf": {bcsrf}, "baserev": {bbase}, "text": {"Bob's *text*"}, "preview": {"1"}})
	mustStatus(t, res, http.StatusOK)
	mustContain(t, res, "<em>text</em>")
}

func TestBusyRendersAnswer503WithRetryAfter(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) {
		c.RenderConcurrency, c.RenderWait = 1, config.Duration(50*time.Millisecond)
	})
	w.AllowServerErrors()
	u, pw := w.CreateUser(t, "Alice", wiki.GroupUser)
	token := apiToken(t, w, u)
	alice := w.Login(t, "Alice", pw)
	alice.Edit("Uncached", "Some *text*.")
	anon := w.Client(t)

	release, err := w.App.Engine.AcquireRenderSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := anon.Get("/wiki/Uncached")
	mustStatus(t, res, http.StatusServiceUnavailable)
	mustContain(t, res, "try again")
	if res.Header.Get("Retry-After") == "" || res.Header.Get("X-Cache") == "HIT" {
		t.Errorf("503 headers %v", res.Header)
	}
	res = anon.JSON(http.MethodGet, "/w/rest.php/v1/page/Uncached/html", "", "")
	mustStatus(t, res, http.StatusServiceUnavailable)
	if e := decode[apiErrorBody](t, res); e.ErrorKey != "rest-unavailable" || res.Header.Get("Retry-After") == "" {
		t.Errorf("REST 503: %+v, Retry-After %q", e, res.Header.Get("Retry-After"))
	}
	csrf, base := alice.EditForm("Uncached")
	res = alice.PostForm("/wiki/Uncached?action=submit", url.Values{"csrf": {csrf}, "baserev": {base}, "text": {"kept text"}, "preview": {"1"}})
	mustStatus(t, res, http.StatusServiceUnavailable)
	mustContain(t, res, `name="text"`, "kept text")
	res = w.Client(t).JSON(http.MethodPost, "/w/rest.php/v1/page", token, `{"title":"New","source":"text"}`)
	mustStatus(t, res, http.StatusServiceUnavailable)

	release()
	mustStatus(t, anon.Get("/wiki/Uncached"), http.StatusOK)
}

// TestWorstCaseRendersLeaveTheWikiAnswering: four of the slowest pages the
// size limit allows, all rendering at once, take the render slots; a cached
// page is still served at once, and a small uncached page waits its turn and
// renders. (The limit is an eighth of the default, to keep the test short
// under the race detector; the renders' cost grows with it linearly.)
func TestWorstCaseRendersLeaveTheWikiAnswering(t *testing.T) {
	t.Parallel()
	const limit = pathological.PageLimit / 8
	w := apptest.New(t, func(c *config.Config) {
		c.MaxPageBytes = limit
		c.RenderWait = config.Duration(5 * time.Minute) // only the test's own timeout ends a wait
		c.JobWorkers = 0                                // no search indexing of the big pages meanwhile
	})
	c := w.Client(t)
	slow := []string{"wiki-link-openers", "reference-label-openers", "emphasis-mismatched", "nested-brackets"}
	pages := map[string]string{"Small": "A *small* page."}
	for _, name := range slow {
		s, _ := pathological.Find(name)
		pages["Slow "+name] = s.Gen(limit)
	}
	for title, text := range pages {
		if _, err := w.App.Engine.Save(context.Background(), engine.Edit{Title: wiki.Title(title), Text: text, Editor: engine.Editor{UserName: "Bot"}}); err != nil {
			t.Fatal(err)
		}
	}
	mustStatus(t, c.Get("/wiki/Main_Page"), http.StatusOK)
	if res := c.Get("/wiki/Main_Page"); xcache(res) != "HIT" {
		t.Fatalf("the main page is not cached: X-Cache %q", xcache(res))
	}

	var wg sync.WaitGroup
	statuses := make(chan int, len(slow))
	for _, name := range slow {
		wg.Go(func() {
			res, err := http.Get(w.URL + "/wiki/Slow_" + name)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses <- res.StatusCode
		})
	}
	eng := w.App.Engine
	deadline := time.Now().Add(time.Minute)
	for eng.RenderStats().Running == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}

	start := time.Now()
	res := c.Get("/wiki/Main_Page")
	mustStatus(t, res, http.StatusOK)
	if d := time.Since(start); xcache(res) != "HIT" || d > 5*time.Second {
		t.Errorf("the cached page while worst-case pages render: X-Cache %q in %v", xcache(res), d)
	}
	st := eng.RenderStats()
	res = c.Get("/wiki/Small")
	mustStatus(t, res, http.StatusOK)
	mustContain(t, res, "<em>small</em>")
	t.Logf("render slots when the small page was asked for: %+v", st)

	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusOK {
			t.Errorf("a worst-case page answered %d", s)
		}
	}
}

func TestARenderCutShortIsCachedBriefly(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) {
		c.RenderTimeout = config.Duration(100 * time.Millisecond)
		c.JobWorkers = 0
	})
	s, _ := pathological.Find("list-items")
	if _, err := w.App.Engine.Save(context.Background(), engine.Edit{Title: "Slow", Text: s.Gen(1 << 20), Editor: engine.Editor{UserName: "Bot"}}); err != nil {
		t.Fatal(err)
	}
	c := w.Client(t)
	res := c.Get("/wiki/Slow")
	mustStatus(t, res, http.StatusOK)
	mustContain(t, res, "took too long")
	ttl := int(time.Duration(config.Default().ListTTL).Seconds())
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "s-maxage="+strconv.Itoa(ttl)) {
		t.Errorf("Cache-Control %q: want the short lifetime s-maxage=%d", cc, ttl)
	}
	if res := c.Get("/wiki/Slow"); xcache(res) != "HIT" {
		t.Errorf("the page is not cached at all: X-Cache %q", xcache(res))
	}
	res = c.Get("/w/rest.php/v1/page/Slow/html")
	mustStatus(t, res, http.StatusOK)
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "s-maxage="+strconv.Itoa(ttl)) {
		t.Errorf("REST html Cache-Control %q: want the short lifetime s-maxage=%d", cc, ttl)
	}
}
