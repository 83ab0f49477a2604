package web_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/wiki"
)

// hostileSummary is an edit summary that would end a CDATA section, open
// a script and carry control characters, if a feed let it through as is.
const hostileSummary = "]]> <script>alert(1)</script> & \x01\x0b\x1f done"

// feedWiki is a wiki with a few changes: pages created and edited (one
// with a hostile summary), a category with members.
func feedWiki(t *testing.T, opts ...func(*config.Config)) (*apptest.Wiki, *apptest.Client) {
	t.Helper()
	w := apptest.New(t, opts...)
	_, pw := w.CreateUser(t, "Feeder", wiki.GroupUser)
	u := w.Login(t, "Feeder", pw)
	u.Edit("Alpha", "First line.\n\nSecond line.")
	csrf, base := u.EditForm("Alpha")
	res := u.PostForm("/wiki/Alpha?action=submit", url.Values{"csrf": {csrf}, "baserev": {base},
		"text": {"First line.\n\nSecond line, changed.\n\nThird line."}, "summary": {hostileSummary}})
	mustStatus(t, res, http.StatusSeeOther)
	u.Edit("Tom & Jerry's", "A page whose title needs escaping: <b>bold</b>.\n\n[[Category:News]]")
	u.Edit("Beta", "Beta is news.\n\n[[Category:News]]")
	u.Edit("Category:News", "The news.")
	return w, w.Client(t)
}

// feedURLs are the feeds of every kind, in Atom, for the tests to fetch.
var feedURLs = []string{
	"/wiki/Special:RecentChanges?feed=atom",
	"/wiki/Alpha?action=history&feed=atom",
	"/wiki/Special:Contributions/Feeder?feed=atom",
	"/wiki/Category:News?feed=atom",
}

// rssURL is the RSS form of an Atom feed URL.
func rssURL(u string) string { return strings.Replace(u, "feed=atom", "feed=rss", 1) }

// wellFormed reads the whole document with encoding/xml and returns the
// text of every element named name.
func wellFormed(t *testing.T, body, name string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(body))
	var texts []string
	var in bool
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return texts
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, body)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if tk.Name.Local == name {
				in = true
				cur.Reset()
			}
		case xml.CharData:
			if in {
				cur.Write(tk)
			}
		case xml.EndElement:
			if tk.Name.Local == name && in {
				in = false
				texts = append(texts, cur.String())
			}
		}
	}
}

func TestFeeds(t *testing.T) {
	t.Parallel()
	w, anon := feedWiki(t, func(c *config.Config) { c.CanonicalURL = "https://wiki.example.org" })

	t.Run("every feed is well-formed, typed, and cached as its page is", func(t *testing.T) {
		for _, u := range feedURLs {
			for _, format := range []string{"atom", "rss"} {
				path := u
				if format == "rss" {
					path = rssURL(u)
				}
				res := anon.Get(path)
				mustStatus(t, res, http.StatusOK)
				wantType := "application/atom+xml; charset=utf-8"
				entry := "entry"
				if format == "rss" {
					wantType, entry = "application/rss+xml; charset=utf-8", "item"
				}
				if ct := res.Header.Get("Content-Type"); ct != wantType {
					t.Errorf("%s: Content-Type %q, want %q", path, ct, wantType)
				}
				if cc := res.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "public") {
					t.Errorf("%s: Cache-Control %q, want a shared response (canonical_url is set)", path, cc)
				}
				if res.Header.Get("ETag") == "" {
					t.Errorf("%s: no ETag", path)
				}
				if n := len(wellFormed(t, res.Body, "title")); n < 2 {
					t.Errorf("%s: %d titles", path, n)
				}
				if strings.Count(res.Body, "<"+entry+">") == 0 {
					t.Errorf("%s: no entries\n%s", path, res.Body)
				}
				if strings.Contains(res.Body, "127.0.0.1") {
					t.Errorf("%s: a URL from the request's host in a shared feed", path)
				}
			}
		}
	})

	t.Run("ids are stable across requests and the ETag answers 304", func(t *testing.T) {
		for _, u := range feedURLs {
			a, b := anon.Get(u), anon.Get(u)
			ida, idb := wellFormed(t, a.Body, "id"), wellFormed(t, b.Body, "id")
			if strings.Join(ida, " ") != strings.Join(idb, " ") || len(ida) < 2 {
				t.Errorf("%s: ids %v, then %v", u, ida, idb)
			}
			seen := map[string]bool{}
			for _, id := range ida {
				if seen[id] {
					t.Errorf("%s: id %q twice", u, id)
				}
				seen[id] = true
				if !strings.HasPrefix(id, "https://wiki.example.org/") {
					t.Errorf("%s: id %q is not an absolute URL of the wiki", u, id)
				}
			}
			req := anon.NewRequest(http.MethodGet, u, nil)
			req.Header.Set("If-None-Match", a.Header.Get("ETag"))
			mustStatus(t, anon.Do(req), http.StatusNotModified)
		}
	})

	t.Run("an edit's entry carries its diff and the hostile summary escaped", func(t *testing.T) {
		res := anon.Get("/wiki/Alpha?action=history&feed=atom")
		if strings.Contains(res.Body, "<script>") || strings.Contains(res.Body, "]]>") || strings.ContainsAny(res.Body, "\x01\x0b\x1f") {
			t.Fatalf("the summary reached the feed unescaped:\n%s", res.Body)
		}
		summaries := wellFormed(t, res.Body, "summary")
		if len(summaries) == 0 || !strings.Contains(summaries[0], "]]> <script>alert(1)</script> &") {
			t.Fatalf("summaries %q: want the hostile summary as text", summaries)
		}
		contents := wellFormed(t, res.Body, "content")
		if len(contents) != 2 || !strings.Contains(contents[0], `<table class="diff">`) || !strings.Contains(contents[0], "Third line.") {
			t.Fatalf("the edit's content is not its diff: %q", contents)
		}
		if !strings.Contains(contents[1], "<pre>First line.") {
			t.Fatalf("the creation's content is not the start of its text: %q", contents[1])
		}
		rss := anon.Get(rssURL("/wiki/Alpha?action=history&feed=atom"))
		if strings.Contains(rss.Body, "<script>") || strings.ContainsAny(rss.Body, "\x01\x0b\x1f") {
			t.Fatalf("the summary reached the RSS feed unescaped:\n%s", rss.Body)
		}
		if d := wellFormed(t, rss.Body, "description"); len(d) < 2 || !strings.Contains(d[1], "&lt;script&gt;") {
			t.Fatalf("the RSS description does not hold the summary escaped as HTML: %q", d)
		}
	})

	t.Run("a title that needs escaping is escaped", func(t *testing.T) {
		res := anon.Get("/wiki/Category:News?feed=atom")
		titles := wellFormed(t, res.Body, "title")
		if strings.Join(titles[1:], ",") != "Beta,Tom & Jerry's" {
			t.Fatalf("titles = %q, want the newest member first", titles)
		}
		if !strings.Contains(res.Body, "Tom &amp; Jerry") {
			t.Fatalf("title not escaped:\n%s", res.Body)
		}
	})

	t.Run("the limit bounds the entries", func(t *testing.T) {
		res := anon.Get("/wiki/Special:RecentChanges?feed=atom&limit=2")
		mustStatus(t, res, http.StatusOK)
		if n := len(wellFormed(t, res.Body, "entry")); n != 2 {
			t.Fatalf("%d entries with limit=2", n)
		}
		res = anon.Get("/wiki/Special:RecentChanges?feed=rss&limit=100000")
		mustStatus(t, res, http.StatusMovedPermanently) // to limit=500, the largest
	})

	t.Run("a bad feed value is a 400 that no cache keeps", func(t *testing.T) {
		for _, u := range []string{"/wiki/Special:RecentChanges?feed=json", "/wiki/Alpha?action=history&feed=ATOM",
			"/wiki/Category:News?feed=%3Cscript%3E", "/wiki/Special:Contributions/Feeder?feed=atom&feed=rss"} {
			res := anon.Get(u)
			mustStatus(t, res, http.StatusBadRequest)
			if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", u, cc)
			}
			if strings.Contains(res.Body, "<script>") {
				t.Errorf("%s: the value is echoed unescaped", u)
			}
		}
	})

	t.Run("pages with feeds offer them in their head", func(t *testing.T) {
		for _, u := range feedURLs {
			page := strings.Replace(strings.Replace(u, "?feed=atom", "", 1), "&feed=atom", "", 1)
			res := anon.Get(page)
			mustStatus(t, res, http.StatusOK)
			head, _, _ := strings.Cut(res.Body, "</head>")
			for _, f := range []string{"atom", "rss"} {
				if !strings.Contains(head, `<link rel="alternate" type="application/`+f+`+xml"`) {
					t.Errorf("%s: no %s feed link in the head", page, f)
				}
			}
		}
	})

	t.Run("a change purges the recent changes feed", func(t *testing.T) {
		before := anon.Get("/wiki/Special:RecentChanges?feed=atom")
		_, pw := w.CreateUser(t, "Second", wiki.GroupUser)
		w.Login(t, "Second", pw).Edit("Gamma", "New.")
		after := anon.Get("/wiki/Special:RecentChanges?feed=atom")
		if after.Body == before.Body || !strings.Contains(after.Body, "Gamma") {
			t.Fatalf("the feed did not show the new change")
		}
		hist := anon.Get("/wiki/Alpha?action=history&feed=atom")
		w.Login(t, "Second", pw).Edit("Alpha", "Replaced.")
		if again := anon.Get("/wiki/Alpha?action=history&feed=atom"); again.Body == hist.Body {
			t.Fatalf("the history feed did not show the new revision")
		}
	})

	t.Run("feedparser reads every feed cleanly", func(t *testing.T) {
		var paths []string
		dir := t.TempDir()
		for i, u := range feedURLs {
			for _, path := range []string{u, rssURL(u)} {
				res := anon.Get(path)
				mustStatus(t, res, http.StatusOK)
				f := filepath.Join(dir, strings.Repeat("f", i+1)+strings.TrimPrefix(path[strings.LastIndex(path, "feed="):], "feed=")+".xml")
				if err := os.WriteFile(f, []byte(res.Body), 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, f)
			}
		}
		checkWithFeedparser(t, paths)
	})
}

// TestFeedsWithoutCanonicalURL: a feed whose URLs come from the request's
// Host is never shared.
func TestFeedsWithoutCanonicalURL(t *testing.T) {
	t.Parallel()
	_, anon := feedWiki(t)
	for _, u := range feedURLs {
		res := anon.Get(u)
		mustStatus(t, res, http.StatusOK)
		if cc := res.Header.Get("Cache-Control"); cc != "private, no-cache" {
			t.Errorf("%s: Cache-Control %q, want private", u, cc)
		}
		req := anon.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("If-None-Match", res.Header.Get("ETag"))
		mustStatus(t, anon.Do(req), http.StatusNotModified)
	}
}

// checkWithFeedparser runs feedparser (PyPI) on the files: every feed
// must parse without a bozo flag, every entry with a title, link, id,
// parsed date, author and content. Without Python or feedparser it skips,
// unless WIKID_REQUIRE_FEEDPARSER=1 (.ci/run), where it fails.
// WIKID_FEEDPARSER_PYTHON names the interpreter (a virtual environment's).
func checkWithFeedparser(t *testing.T, paths []string) {
	t.Helper()
	python := os.Getenv("WIKID_FEEDPARSER_PYTHON")
	if python == "" {
		python = "python3"
	}
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "feed", "testdata", "feedcheck.py")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(python, append([]string{script}, paths...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.Is(err, exec.ErrNotFound) || errors.As(err, &exit) && exit.ExitCode() == 3 {
		if os.Getenv("WIKID_REQUIRE_FEEDPARSER") == "1" {
			t.Fatalf("%s with feedparser is required (WIKID_REQUIRE_FEEDPARSER=1): %v %s", python, err, stderr.String())
		}
		t.Skipf("%s with feedparser is not available (pip install feedparser; set WIKID_REQUIRE_FEEDPARSER=1 to fail instead)", python)
	}
	if err != nil {
		t.Fatalf("feedcheck.py: %v\n%s", err, stderr.String())
	}
	var docs []struct {
		File, Version, Title, Link, Feedparser string
		Bozo                                   int
		BozoException                          string `json:"bozo_exception"`
		Entries                                []struct {
			Title, Link, ID, Updated, Author, Content string
			UpdatedParsed                             bool `json:"updated_parsed"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &docs); err != nil {
		t.Fatalf("feedcheck.py's output: %v\n%s", err, stdout.String())
	}
	if len(docs) != len(paths) {
		t.Fatalf("feedparser read %d documents of %d", len(docs), len(paths))
	}
	for _, d := range docs {
		name := filepath.Base(d.File)
		if d.Bozo != 0 {
			t.Errorf("%s: feedparser %s: bozo %s", name, d.Feedparser, d.BozoException)
		}
		want := "atom10"
		if strings.HasSuffix(name, "rss.xml") {
			want = "rss20"
		}
		if d.Version != want || d.Title == "" || d.Link == "" {
			t.Errorf("%s: version %q title %q link %q", name, d.Version, d.Title, d.Link)
		}
		if len(d.Entries) == 0 {
			t.Errorf("%s: no entries", name)
		}
		for _, e := range d.Entries {
			if e.Title == "" || e.Link == "" || e.ID == "" || !e.UpdatedParsed || e.Author == "" || e.Content == "" {
				t.Errorf("%s: entry %+v lacks a part", name, e)
			}
		}
	}
	t.Logf("feedparser %s parsed %d feeds", docs[0].Feedparser, len(docs))
}
