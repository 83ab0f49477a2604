package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/wiki"
)

// A database from before compression migrates (renders.codec), and
// CompressOld rewrites its rows, which then read the same.
func TestCompressOld(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[int64]string{}
	renders := map[int64][]byte{}
	for i := range 40 {
		var text string
		switch i % 4 {
		case 0:
			text = longText + fmt.Sprint(i)
		case 1:
			text = koreanText + fmt.Sprint(i)
		case 2:
			text = fmt.Sprintf("Short %d.", i)
		case 3:
			text = noisyText(sqlite.MinCompress + i)
		}
		res := save(t, db, wiki.Title(fmt.Sprintf("Page %d", i)), text)
		texts[res.Revision.ID] = text
		if i%2 == 0 {
			html := fmt.Appendf(nil, `{"HTML":%q}`, strings.Repeat(fmt.Sprintf("<p>Paragraph of page %d.</p>", i), 30))
			renders[res.Revision.ID] = html
			if err := db.SaveRender(ctx, res.Revision.ID, 1, html); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Back to the schema before compression: texts as TEXT, renders as
	// they were, no codec column.
	for id, text := range texts {
		if err := sqlite.Exec(ctx, db, `UPDATE revisions SET text = ? WHERE id = ?`, text, id); err != nil {
			t.Fatal(err)
		}
	}
	for id, html := range renders {
		if err := sqlite.Exec(ctx, db, `UPDATE renders SET data = ? WHERE rev_id = ?`, html, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{`ALTER TABLE renders DROP COLUMN codec`, `DELETE FROM schema_version WHERE version = 8`} {
		if err := sqlite.Exec(ctx, db, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check := func(t *testing.T) {
		t.Helper()
		for id, text := range texts {
			readsBack(t, db, id, text)
		}
		for id, html := range renders {
			if data, err := db.FindRender(ctx, id, 1); err != nil || string(data) != string(html) {
				t.Fatalf("render of revision %d: %.40q, %v", id, data, err)
			}
		}
	}
	check(t)
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Revisions != 40 || c.PlainRevisions != 30 || c.Renders != 20 || c.PlainRenders != 20 {
		t.Fatalf("before: %+v; want 40 revisions, 30 of them long and stored as is, 20 renders as is", c)
	}

	calls := 0
	res, err := db.CompressOld(ctx, func(sqlite.CompressResult) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.Revisions != 20 || res.Renders != 20 || res.After >= res.Before || calls == 0 {
		t.Fatalf("compressed %+v (progress called %d times); want the 20 long texts and the 20 renders, smaller", res, calls)
	}
	check(t)
	for id, text := range texts {
		want := "text"
		if strings.HasPrefix(text, longText) || strings.HasPrefix(text, koreanText) {
			want = "blob"
		}
		if got := storageClass(t, db, id); got != want {
			t.Errorf("revision %d is stored as %s, want %s", id, got, want)
		}
	}
	if c, err = db.Counts(ctx); err != nil || c.PlainRevisions != 10 || c.PlainRenders != 0 {
		t.Fatalf("after: %+v, %v; want only the 10 incompressible texts left as is", c, err)
	}
	if again, err := db.CompressOld(ctx, nil); err != nil || again != (sqlite.CompressResult{}) {
		t.Fatalf("a second pass compressed %+v, %v; want nothing", again, err)
	}

	if _, err := db.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	sp, err := db.Space(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp.FreeBytes != 0 {
		t.Errorf("%d free bytes after VACUUM", sp.FreeBytes)
	}
	check(t)
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

// Space puts indexes under their table, and accounts for every page of
// the file.
func TestSpace(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	res := save(t, db, "Indexed", longText)
	if err := db.UpdateSearchIndex(ctx, res.Page.ID, func(s string, _ wiki.ContentModel) string { return s }); err != nil {
		t.Fatal(err)
	}
	sp, err := db.Space(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]sqlite.TableSpace{}
	for _, tb := range sp.Tables {
		tables[tb.Name] = tb
	}
	parts := func(name string) []string {
		var out []string
		for _, p := range tables[name].Parts {
			out = append(out, p.Name)
		}
		return out
	}
	if tb := tables["search_blocks"]; tb.Virtual || tb.Bytes == 0 || !containsAll(parts("search_blocks"), "search_blocks_key") {
		t.Errorf("search_blocks: %+v", tb)
	}
	if tb := tables["revisions"]; tb.Bytes == 0 || !containsAll(parts("revisions"), "revisions_page") {
		t.Errorf("revisions: %+v", tb)
	}
	if !containsAll(parts("renders"), "sqlite_autoindex_renders_1") {
		t.Errorf("renders: %+v", tables["renders"])
	}
	for _, name := range []string{"search_blocks_key", "revisions_page", "sqlite_autoindex_renders_1"} {
		if _, ok := tables[name]; ok {
			t.Errorf("%s is listed as a table of its own", name)
		}
	}
	var sum int64
	for _, tb := range sp.Tables {
		sum += tb.Total()
	}
	var pages int64
	if err := sqlite.QueryRow(ctx, db, `PRAGMA page_count`, nil, &pages); err != nil {
		t.Fatal(err)
	}
	if sum+sp.FreeBytes != pages*sp.PageSize || sp.Total() != pages*sp.PageSize {
		t.Errorf("tables %d + free %d bytes; the file has %d pages of %d", sum, sp.FreeBytes, pages, sp.PageSize)
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
