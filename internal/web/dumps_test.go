package web_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/app/apptest"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/mwxml"
	"github.com/wikid/wikid/internal/wiki"
)

// TestSpecialExportImport: Special:Export answers its form and dumps, as
// attachments no cache keeps; Special:Import is for administrators, takes
// a gzip dump through the form and imports every revision; a private wiki
// exports to readers only.
func TestSpecialExportImport(t *testing.T) {
	t.Parallel()
	w := apptest.New(t, func(c *config.Config) { c.MaxImportBytes = 1 << 20 })
	_, apw := w.CreateUser(t, "Boss", wiki.GroupAdmin)
	admin := w.Login(t, "Boss", apw)
	_, upw := w.CreateUser(t, "Plain", wiki.GroupUser)
	user := w.Login(t, "Plain", upw)
	anon := w.Client(t)

	var dump bytes.Buffer
	if err := mwxml.Generate(&dump, 4, 3, 7); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(dump.Bytes())
	zw.Close()

	// The import form: administrators only.
	if res := user.Get("/wiki/Special:Import"); res.StatusCode != http.StatusForbidden {
		t.Errorf("Special:Import for a user: %d", res.StatusCode)
	}
	form := admin.Get("/wiki/Special:Import")
	if form.StatusCode != http.StatusOK || !strings.Contains(form.Body, `enctype="multipart/form-data"`) || form.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("Special:Import form: %d %q", form.StatusCode, form.Header.Get("Cache-Control"))
	}
	csrf := admin.CSRF("/wiki/Special:Import")
	if res := admin.Multipart("/wiki/Special:Import", map[string]string{}, "dump.xml.gz", gz.Bytes(), nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("an import without a CSRF token: %d", res.StatusCode)
	}
	res := admin.Multipart("/wiki/Special:Import", map[string]string{"csrf": csrf, "log-comment": "from the test"}, "dump.xml.gz", gz.Bytes(), nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "10 pages read (10 created, 0 updated), 18 revisions: 18 imported, 0 skipped") {
		t.Fatalf("import: %d\n%s", res.StatusCode, res.Body)
	}
	w.Settle(t)
	if h := anon.Get("/wiki/Page_1?action=history").Body; !strings.Contains(h, "imported&gt;Editor") || strings.Count(h, "edit 2 of Page 1") != 1 {
		t.Errorf("the history of an imported page lacks its authors or revisions")
	}
	if log := anon.Get("/wiki/Special:Log/import").Body; !strings.Contains(log, "imported <a href=\"/wiki/Page_1\"><bdi>Page 1</bdi></a> by file upload (3 revisions)") {
		t.Errorf("the import log does not show the import")
	}
	csrf = admin.CSRF("/wiki/Special:Import")
	again := admin.Multipart("/wiki/Special:Import", map[string]string{"csrf": csrf}, "dump.xml", dump.Bytes(), nil)
	if !strings.Contains(again.Body, "0 imported, 18 skipped") {
		t.Errorf("import again: %d", again.StatusCode)
	}
	csrf = admin.CSRF("/wiki/Special:Import")
	big := admin.Multipart("/wiki/Special:Import", map[string]string{"csrf": csrf}, "big.xml", bytes.Repeat([]byte(" "), 2<<20), nil)
	if big.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(big.Body, "max_import_bytes") {
		t.Errorf("an import over the limit: %d", big.StatusCode)
	}

	// Export: the form, a page's current revision, and the form's dump.
	ef := anon.Get("/wiki/Special:Export")
	if ef.StatusCode != http.StatusOK || !strings.Contains(ef.Body, "at most 1000 pages") || ef.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Special:Export form: %d %q", ef.StatusCode, ef.Header.Get("Cache-Control"))
	}
	one := anon.Get("/wiki/Special:Export/Page_1")
	if one.StatusCode != http.StatusOK || one.Header.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(one.Header.Get("Content-Disposition"), "attachment") || strings.Count(one.Body, "<revision>") != 1 {
		t.Fatalf("Special:Export/Page_1: %d %v\n%s", one.StatusCode, one.Header, one.Body)
	}
	if !strings.Contains(one.Body, "<title>Page 1</title>") || !strings.Contains(one.Body, "<comment>edit 2 of Page 1</comment>") {
		t.Errorf("the export of Page 1:\n%s", one.Body)
	}
	ecsrf := anon.CSRF("/wiki/Special:Export")
	full := anon.PostForm("/wiki/Special:Export", url.Values{"csrf": {ecsrf}, "pages": {"Page 1\nPage 2\nNo such page"}, "templates": {"1"}})
	if full.StatusCode != http.StatusOK || strings.Count(full.Body, "<page>") != 3 || strings.Count(full.Body, "<revision>") != 9 {
		t.Errorf("full export of two pages and their template: %d, %d pages, %d revisions", full.StatusCode,
			strings.Count(full.Body, "<page>"), strings.Count(full.Body, "<revision>"))
	}
	cat := anon.PostForm("/wiki/Special:Export", url.Values{"csrf": {ecsrf}, "catname": {"Group 1"}, "curonly": {"1"}})
	if !strings.Contains(cat.Body, "<title>Page 1</title>") || strings.Count(cat.Body, "<page>") != 1 {
		t.Errorf("export of a category:\n%s", cat.Body)
	}
	if bad := anon.PostForm("/wiki/Special:Export", url.Values{"csrf": {ecsrf}, "pages": {"a|b"}}); bad.StatusCode != http.StatusBadRequest {
		t.Errorf("export of a bad title: %d", bad.StatusCode)
	}

	// Lists are a few a minute per client; a page's own dump is not.
	limited := false
	for range 10 {
		res := anon.PostForm("/wiki/Special:Export", url.Values{"csrf": {ecsrf}, "pages": {"Page 1"}})
		if res.StatusCode == http.StatusTooManyRequests {
			limited = strings.Contains(res.Body, "wait a minute") && res.Header.Get("Retry-After") != ""
			break
		}
	}
	if !limited {
		t.Errorf("ten exports of a list in a row were all served, or refused without saying when to come back")
	}
	if res := anon.Get("/wiki/Special:Export/Page_1"); res.StatusCode != http.StatusOK {
		t.Errorf("a page's dump after the list limit: %d", res.StatusCode)
	}

	// A private wiki exports to readers only.
	p := apptest.New(t, func(c *config.Config) { c.ReadGroup = wiki.GroupUser })
	if res := p.Client(t).Get("/wiki/Special:Export/Main_Page"); res.StatusCode == http.StatusOK {
		t.Errorf("a private wiki's export for an anonymous reader: %d", res.StatusCode)
	}
}
