package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/store/sqlite/sqlitetest"
	"github.com/wikid/wikid/internal/store/storetest"
	"github.com/wikid/wikid/internal/wiki"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) wiki.Store { return sqlitetest.Open(t) })
}

func TestSQLite(t *testing.T) {
	ctx := context.Background()

	t.Run("write statements are prepared once and kept", func(t *testing.T) {
		db := sqlitetest.Open(t)
		save := func(title, text string) {
			t.Helper()
			if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"}); err != nil {
				t.Fatal(err)
			}
		}
		save("First", "Words [[Second]].")
		// The statements are kept after the transaction, off its path.
		var kept []string
		for range 1000 {
			if kept = sqlite.Kept(db); slices.ContainsFunc(kept, func(q string) bool { return strings.HasPrefix(q, "INSERT INTO revisions") }) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !slices.ContainsFunc(kept, func(q string) bool { return strings.HasPrefix(q, "INSERT INTO revisions") }) {
			t.Fatalf("the revision insert is not kept: %d statements kept", len(kept))
		}
		for _, q := range kept {
			if !strings.Contains(q, "?") {
				t.Errorf("a statement without arguments is kept: %q", q)
			}
		}
		for range 1000 { // every statement of the first save kept
			if len(sqlite.Kept(db)) == int(sqlite.TxPrepares(db)) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		before := sqlite.TxPrepares(db)
		save("Second", "More words [[First]].")
		if n := sqlite.TxPrepares(db) - before; n != 0 {
			t.Errorf("a second save of the same kind prepared %d statements for itself: the kept ones were not used", n)
		}
		if got, err := db.FindPage(ctx, "Second"); err != nil || got.LatestID == 0 {
			t.Fatalf("the second save: %+v, %v", got, err)
		}
	})

	t.Run("a new database has 16 KB pages; an existing one keeps its own", func(t *testing.T) {
		pageSize := func(path string) int {
			t.Helper()
			raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			var n int
			if err := raw.QueryRow(`PRAGMA page_size`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		dir := t.TempDir()
		fresh := filepath.Join(dir, "new.db")
		db, err := sqlite.Open(ctx, fresh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Page", Text: "Text.", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if n := pageSize(fresh); n != 16<<10 {
			t.Errorf("a new database's page size: %d, want 16384", n)
		}
		// A database made with SQLite's default pages, as before.
		old := filepath.Join(dir, "old.db")
		raw, err := sql.Open("sqlite", "file:"+old+"?_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`CREATE TABLE before (x)`); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		db, err = sqlite.Open(ctx, old)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Page", Text: "Text.", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
		if p, err := db.FindPage(ctx, "Page"); err != nil || p.LatestID == 0 {
			t.Fatalf("the page saved in the older database: %+v, %v", p, err)
		}
		db.Close()
		if n := pageSize(old); n != 4096 {
			t.Errorf("an existing database's page size: %d, want its own 4096", n)
		}
	})

	// Connections of one process take SQLite's locks as other processes'
	// do: four opening a new database at once stand for serve and import
	// started together on an empty folder. Without connectFirst's retry,
	// about one open in fifty failed with "database is locked".
	t.Run("four opening one new database at once all open it", func(t *testing.T) {
		for round := range 40 {
			path := filepath.Join(t.TempDir(), "wikid.db")
			errs := make(chan error, 4)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					db, err := sqlite.Open(ctx, path)
					if err == nil {
						err = db.Close()
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
		}
	})

	t.Run("an import finds a page whose title is not UTF-8, which JSON would change", func(t *testing.T) {
		// The engine accepts no such title; the store does not depend on it.
		db := sqlitetest.Open(t)
		const bad = wiki.Title("Bad\xff")
		first, err := db.SavePage(ctx, wiki.SaveRequest{Title: bad, Text: "one", UserName: "U"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: bad, Text: "two", UserName: "Importer"}})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Created || res[0].Revision.ParentID != first.Revision.ID {
			t.Fatalf("the import of an existing page = %+v, want a revision on top of %d", res[0], first.Revision.ID)
		}
	})

	t.Run("a search's statements are prepared once and kept, up to a bound", func(t *testing.T) {
		sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
		db := sqlitetest.Open(t)
		for i, title := range []string{"Page 0", "Help:Page 1", "Page 2", "Help:Page 3", "Page 4"} {
			saveSearchable(t, db, title, fmt.Sprintf("kept statements number %d", i))
		}
		search := func(q string, ns ...string) []string {
			t.Helper()
			hits, err := db.Search(ctx, wiki.SearchQuery{Text: q, Limit: 10, Namespaces: ns})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, h := range hits {
				out = append(out, string(h.Title))
			}
			slices.Sort(out)
			return out
		}
		want := []string{"Page 0", "Page 2", "Page 4"}
		if got := search(`"kept statements"`, ""); !slices.Equal(got, want) {
			t.Fatalf("main namespace hits = %v, want %v", got, want)
		}
		before := sqlite.ReadPrepares(db)
		if before == 0 {
			t.Fatal("a search kept no prepared statement")
		}
		for _, q := range []string{`"kept statements"`, `"statements number"`, "kept"} {
			if got := search(q, ""); !slices.Equal(got, want) {
				t.Fatalf("%s: main namespace hits = %v, want %v", q, got, want)
			}
		}
		if n := sqlite.ReadPrepares(db) - before; n != 0 {
			t.Errorf("searches of the same shape prepared %d more statements: the kept ones were not used", n)
		}

		// Past the bound, statements are prepared for their one run.
		sqlite.SetMaxReadStmts(t, 2)
		db = sqlitetest.Open(t)
		for i := range 5 {
			saveSearchable(t, db, fmt.Sprintf("Help:Page %d", i), fmt.Sprintf("bounded statements number %d", i))
		}
		for range 3 {
			if got := search(`"bounded statements"`, "Help", ""); len(got) != 5 {
				t.Fatalf("hits past the bound = %v, want the 5 help pages", got)
			}
		}
		if n := sqlite.ReadStmts(db); n > 2 {
			t.Errorf("%d read statements kept, past the bound of 2", n)
		}
	})

	t.Run("a search of common words reads its page and pages alike", func(t *testing.T) {
		sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
		sqlite.SetSearchRare(t, 3)             // every word below is common
		db := sqlitetest.Open(t)
		for i := range 30 {
			title := fmt.Sprintf("Page %02d", i)
			if i%10 == 0 {
				title = fmt.Sprintf("Common ground %02d", i)
			}
			text := fmt.Sprintf("common ground number %d", i)
			if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"}); err != nil {
				t.Fatal(err)
			}
		}
		titles := func(offset, limit int) []string {
			t.Helper()
			return searchTitles(t, db, `"common ground"`, offset, limit)
		}
		all := titles(0, 40)
		if len(all) != 30 || !strings.HasPrefix(all[0], "Common ground") || !strings.HasPrefix(all[2], "Common ground") || all[3] != "Page 29" || all[29] != "Page 01" {
			t.Fatalf("all hits = %v, want the title matches, then the others newest first", all)
		}
		var paged []string
		for off := 0; off < 30; off += 7 {
			paged = append(paged, titles(off, 7)...)
		}
		if !slices.Equal(paged, all) {
			t.Fatalf("pages of 7 = %v, want %v", paged, all)
		}
	})

	t.Run("a common word of one large segment finds its newest live pages past deleted ones", func(t *testing.T) {
		sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
		sqlite.SetSearchRare(t, 3)             // the word is common
		db := sqlitetest.Open(t)
		var reqs []wiki.SaveRequest
		for i := range 40 {
			text := fmt.Sprintf("plentiful word %d", i)
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %02d", i)), Text: text, SearchText: text, UserName: "U"})
		}
		if _, err := db.ImportPages(ctx, reqs); err != nil { // one segment
			t.Fatal(err)
		}
		for i := 32; i < 40; i++ { // the newest eight, more than a page of hits
			if err := db.DeletePage(ctx, wiki.Title(fmt.Sprintf("Page %02d", i)), 0, "U", "gone", time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := searchTitles(t, db, "plentiful", 0, 5), []string{"Page 31", "Page 30", "Page 29", "Page 28", "Page 27"}; !slices.Equal(got, want) {
			t.Fatalf("hits = %v, want the newest live pages %v", got, want)
		}
		if got := searchTitles(t, db, "plentiful", 5, 5); !slices.Equal(got, []string{"Page 26", "Page 25", "Page 24", "Page 23", "Page 22"}) {
			t.Fatalf("second page of hits = %v, want Page 26 to Page 22", got)
		}
	})

	t.Run("a search with more title matches than a page reads only the page's, in the same order", func(t *testing.T) {
		sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
		db := sqlitetest.Open(t)
		save := func(title, text string) {
			t.Helper()
			if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			// Titles of different lengths: BM25 over titles orders them.
			save(fmt.Sprintf("Orchard %s %02d", strings.Repeat("tree ", i%5), i), "fruit")
			if i == 12 {
				save("Orchard", "the page whose title is the query")
			}
		}
		for i := range 10 {
			save(fmt.Sprintf("Field %02d", i), "an orchard mentioned in passing")
		}
		titles := func(offset, limit int) []string { t.Helper(); return searchTitles(t, db, "orchard", offset, limit) }
		all := titles(0, 40)
		if len(all) != 31 || all[0] != "Orchard" || !strings.HasPrefix(all[20], "Orchard ") || !strings.HasPrefix(all[21], "Field") {
			t.Fatalf("all hits = %v, want the exact title, the 20 other title matches, then the 10 others", all)
		}
		for _, size := range []int{1, 3, 7} {
			var paged []string
			for off := 0; off < 31; off += size {
				paged = append(paged, titles(off, size)...)
			}
			if !slices.Equal(paged, all) {
				t.Fatalf("pages of %d = %v, want %v", size, paged, all)
			}
		}
	})

	t.Run("a page whose title is the query comes first even when other titles outrank it", func(t *testing.T) {
		sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
		sqlite.SetSearchRare(t, 3)             // every word below is common
		db := sqlitetest.Open(t)
		var reqs []wiki.SaveRequest
		add := func(title, text string) {
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"})
		}
		add("Orchard", "the page whose title is the query")
		for i := range 60 {
			add(fmt.Sprintf("Orchard orchard orchard %02d", i), "fruit") // higher BM25 over titles
		}
		for i := range 20 {
			add(fmt.Sprintf("Field %02d", i), "an orchard in passing")
		}
		if _, err := db.ImportPages(ctx, reqs); err != nil {
			t.Fatal(err)
		}
		all := searchTitles(t, db, "orchard", 0, 100)
		if len(all) != 81 || all[0] != "Orchard" || !strings.HasPrefix(all[60], "Orchard orchard") || !strings.HasPrefix(all[61], "Field") {
			t.Fatalf("all hits = %v, want the exact title, the 60 other title matches, then the 20 others", all)
		}
		for _, size := range []int{1, 3, 7, 21} {
			if paged := pagedTitles(t, db, "orchard", size, 100); !slices.Equal(paged, all) {
				t.Fatalf("pages of %d = %v, want %v", size, paged, all)
			}
		}
	})

	t.Run("a search reads at most as many title and body matches as SearchCandidates each", func(t *testing.T) {
		sqlite.SetSearchBudget(t, time.Minute) // the same answer on a loaded machine
		sqlite.SetSearchRare(t, 3)
		db := sqlitetest.Open(t)
		var reqs []wiki.SaveRequest
		for i := range 2*sqlite.SearchCandidates + 150 {
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Orchard %04d", i)), Text: "x", SearchText: "x", UserName: "U"})
		}
		for i := range 20 {
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Field %02d", i)), Text: "orchard", SearchText: "orchard", UserName: "U"})
		}
		if _, err := db.ImportPages(ctx, reqs); err != nil {
			t.Fatal(err)
		}
		// Pages of 37 cross both bounds mid-page (1,000 and 2,000 are no
		// multiples of 37).
		by100, by37 := pagedTitles(t, db, "orchard", 100, 5000), pagedTitles(t, db, "orchard", 37, 5000)
		if len(by100) != 2*sqlite.SearchCandidates || !slices.Equal(by37, by100) {
			t.Fatalf("pages of 100 gave %d hits, pages of 37 %d; want %d, the same", len(by100), len(by37), 2*sqlite.SearchCandidates)
		}
		if got := searchTitles(t, db, "orchard", 2*sqlite.SearchCandidates-20, 21); len(got) != 20 {
			t.Fatalf("the last page: %d hits, want 20 (none past the bound)", len(got))
		}
		if got := searchTitles(t, db, "orchard", sqlite.SearchCandidates, 5); len(got) != 5 || !strings.HasPrefix(got[0], "Field") {
			t.Fatalf("after the title matches: %v, want the body matches", got)
		}
	})

	t.Run("a database a newer wikid migrated is refused, unchanged", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "w.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		have, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 0)`, have+1); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		_, err = sqlite.Open(ctx, path)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d, newer than this wikid's (%d)", have+1, have)) {
			t.Fatalf("opening a newer schema: %v", err)
		}
	})

	t.Run("an import beside busy readers keeps the WAL small", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "w.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// A server's readers: another connection reading without pause.
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				db.FindPage(ctx, "Page 1")
			}
		}()
		text := strings.Repeat("Words of an imported page, not all alike: ", 400)
		var batch int64
		for b := range 12 {
			var reqs []wiki.SaveRequest
			for i := range 50 {
				body := fmt.Sprintf("%s %d %d", text, b, i)
				reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %d", b*50+i)), Text: body, SearchText: body, UserName: "U"})
			}
			if _, err := db.ImportPages(ctx, reqs); err != nil {
				t.Fatal(err)
			}
			if b == 0 {
				batch = walSize(t, path)
			}
		}
		close(stop)
		<-done
		// The WAL holds up to two batches between two restarts
		// (pagesRestartEvery), with the merges of their search segments;
		// a restart that waits for the readers, or gives up, leaves it
		// more until the next (six batches leave room for a loaded
		// machine). Never restarted, it would hold twelve.
		if size := walSize(t, path); size > 6*batch {
			t.Fatalf("WAL after 12 batches = %d bytes, after the first %d: it grows with the import", size, batch)
		}
	})

	t.Run("the database is in WAL mode", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "w.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if mode, err := sqlite.JournalMode(ctx, db); err != nil || mode != "wal" {
			t.Fatalf("journal mode = %q, %v", mode, err)
		}
	})

	t.Run("connections are configured by the DSN", func(t *testing.T) {
		db := sqlitetest.Open(t)
		for _, c := range []struct {
			pragma string
			reader bool
			want   string
		}{
			{"foreign_keys", false, "1"},
			{"synchronous", false, "1"}, // NORMAL
			{"busy_timeout", false, "10000"},
			{"query_only", false, "0"},
			{"foreign_keys", true, "1"},
			{"query_only", true, "1"},
			{"journal_mode", true, "wal"},
		} {
			if got, err := sqlite.Pragma(ctx, db, c.pragma, c.reader); err != nil || got != c.want {
				t.Errorf("%s (reader %v) = %q, %v; want %q", c.pragma, c.reader, got, err, c.want)
			}
		}
	})

	t.Run("user name skeletons are filled at open, and existing look-alikes are kept", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "w.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		admin, err := db.CreateUser(ctx, wiki.User{Name: "Admin", PasswordHash: "x"})
		if err != nil {
			t.Fatal(err)
		}
		// As a database from before the skeleton column: a look-alike
		// account that exists already, and no skeletons.
		if err := sqlite.Exec(ctx, db, `INSERT INTO users (name, name_key, password_hash, grp, created) VALUES ('\u0410dmin', '\u0430dmin', 'x', 'user', 0)`); err != nil {
			t.Fatal(err)
		}
		if err := sqlite.Exec(ctx, db, `UPDATE users SET skeleton = ''`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		db, err = sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if s, err := sqlite.UserSkeleton(ctx, db, admin.ID); err != nil || s != wiki.UserNameSkeleton("Admin") {
			t.Fatalf("skeleton of Admin = %q, %v", s, err)
		}
		if n, err := db.CountUsers(ctx); err != nil || n != 2 {
			t.Fatalf("count = %d, %v; want both accounts kept", n, err)
		}
		if _, err := db.CreateUser(ctx, wiki.User{Name: "Adrnin", PasswordHash: "x"}); wiki.KindOf(err) != wiki.KindConflict {
			t.Fatalf("create Adrnin: %v; want refused as a look-alike", err)
		}
		plan, err := sqlite.Plan(ctx, db, `SELECT name FROM users WHERE skeleton IN (?, ?) ORDER BY name_key = ? DESC, id LIMIT 1`, "x", "x", "y")
		if err != nil || !strings.Contains(strings.Join(plan, "\n"), "users_skeleton") {
			t.Fatalf("the look-alike lookup does not use the index: %q, %v", plan, err)
		}
	})

	t.Run("leasing finds due jobs through the jobs_due index", func(t *testing.T) {
		db := sqlitetest.Open(t)
		plan, err := sqlite.Plan(ctx, db, `SELECT id FROM jobs INDEXED BY jobs_due WHERE state IN ('queued', 'running') AND run_at <= ? ORDER BY run_at, id LIMIT ?`, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "; "); !strings.Contains(p, "jobs_due") || strings.Contains(p, "TEMP B-TREE") {
			t.Fatalf("plan = %s", p)
		}
	})

	t.Run("recent changes of a period stop at its first change, found through changes_ts", func(t *testing.T) {
		db := sqlitetest.Open(t)
		plan, err := sqlite.RecentChangesPlan(ctx, db, wiki.ChangeQuery{Since: time.Now(), HideMinor: true})
		if err != nil {
			t.Fatal(err)
		}
		// The scan of changes is bounded below (by ID, through the primary
		// key or a partial index), the bound found in changes_ts.
		p := strings.Join(plan, "; ")
		if !(strings.Contains(p, "(rowid>? AND rowid<?)") || strings.Contains(p, "(id>? AND id<?)")) || !strings.Contains(p, "changes_ts") {
			t.Fatalf("plan = %s", p)
		}
	})

	t.Run("new pages only and major changes only are read from partial indexes", func(t *testing.T) {
		db := sqlitetest.Open(t)
		plan, err := sqlite.RecentChangesPlan(ctx, db, wiki.ChangeQuery{OnlyNew: true})
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "; "); !strings.Contains(p, "changes_new") {
			t.Fatalf("plan = %s", p)
		}
		plan, err = sqlite.RecentChangesPlan(ctx, db, wiki.ChangeQuery{HideMinor: true})
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "; "); !strings.Contains(p, "changes_major") {
			t.Fatalf("hide minor: plan = %s", p)
		}
	})

	t.Run("a namespace's changes are read newest first per title prefix, not the whole namespace sorted", func(t *testing.T) {
		db := sqlitetest.Open(t)
		for _, q := range []wiki.ChangeQuery{
			{Namespaces: []string{"Talk"}},
			{Namespaces: []string{"File", "Help talk"}, HideMinor: true},
			{Namespaces: []string{"Talk"}, Since: time.Now()},
		} {
			plan, err := sqlite.RecentChangesPlan(ctx, db, q)
			if err != nil {
				t.Fatal(err)
			}
			p := strings.Join(plan, "; ")
			if !strings.Contains(p, "SEARCH c USING INDEX changes_prefix (<expr>=? AND id") || strings.Contains(p, "changes_title") {
				t.Errorf("%v: plan = %s", q.Namespaces, p)
			}
		}
		// The main namespace is most changes: the newest, filtered.
		plan, err := sqlite.RecentChangesPlan(ctx, db, wiki.ChangeQuery{Namespaces: []string{"", "Talk"}})
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "; "); !strings.Contains(p, "SEARCH c USING INTEGER PRIMARY KEY (rowid<?)") {
			t.Errorf("main and Talk: plan = %s", p)
		}
		// Contributions: the user's changes.
		plan, err = sqlite.RecentChangesPlan(ctx, db, wiki.ChangeQuery{Namespaces: []string{"Talk"}, UserName: "Ann"})
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "; "); !strings.Contains(p, "changes_user (user_name=? AND id<?)") {
			t.Errorf("contributions in Talk: plan = %s", p)
		}
		// Whether an edit's revision is deleted is read from an index, not
		// from the revision's row after its text.
		for _, q := range []wiki.ChangeQuery{{}, {Namespaces: []string{"Talk"}}, {UserName: "Ann"}} {
			plan, err := sqlite.RecentChangesPlan(ctx, db, q)
			if err != nil {
				t.Fatal(err)
			}
			if p := strings.Join(plan, "; "); !strings.Contains(p, "SEARCH lr USING COVERING INDEX revisions_deleted (id=?)") {
				t.Errorf("%+v: plan = %s", q, p)
			}
		}
	})

	t.Run("a watchlist's changes are read per watched title, not by scanning every change", func(t *testing.T) {
		db := sqlitetest.Open(t)
		plan, err := sqlite.WatchedChangesPlan(ctx, db, wiki.ChangeQuery{HideMinor: true, Namespaces: []string{"Talk"}, Since: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "SEARCH w USING PRIMARY KEY (user_id=?") || !strings.Contains(p, "SEARCH c USING INDEX changes_title (title=?") {
			t.Fatalf("plan = %s", p)
		}
	})

	t.Run("file reads are index ranges: a blob's chunks, a page's newest visible version, a version by content (visible first)", func(t *testing.T) {
		db := sqlitetest.Open(t)
		for _, c := range []struct {
			query string
			args  []any
			want  []string
		}{
			{sqlite.BlobChunksQuery, []any{"x", 0, 1}, []string{"SEARCH blob_chunks USING INDEX sqlite_autoindex_blob_chunks_1 (sha256=? AND n>? AND n<?)"}},
			{sqlite.CurrentFilesQuery, []any{"[]"}, []string{"SEARCH v USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH file_versions USING COVERING INDEX file_versions_page (page_id=?)"}},
			{sqlite.FindFileVersionQuery, []any{"x", "y"}, []string{"SEARCH v USING INDEX file_versions_sha (sha256=? AND page_id=?)"}},
		} {
			plan, err := sqlite.Plan(ctx, db, c.query, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			p := strings.Join(plan, "; ")
			for _, w := range c.want {
				if !strings.Contains(p, w) || strings.Contains(p, "TEMP B-TREE") {
					t.Errorf("plan = %s, want %s", p, w)
				}
			}
		}
	})

	t.Run("a fresh database passes the integrity check", func(t *testing.T) {
		db := sqlitetest.Open(t)
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: "A", Text: "a", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the plain-text migration queues the search job of every live page", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		for _, title := range []wiki.Title{"Alpha", "서울", "Gone"} {
			if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: title, Text: "**text**", UserName: "U"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.DeletePage(ctx, "Gone", 0, "U", "", time.Time{}); err != nil {
			t.Fatal(err)
		}
		// Back to the schema before it, with no jobs queued.
		for _, q := range []string{`DELETE FROM jobs`, `DELETE FROM schema_version WHERE version = 3`} {
			if err := sqlite.Exec(ctx, db, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if db, err = sqlite.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		jobs, err := db.ListJobs(ctx, wiki.JobQueued, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, j := range jobs {
			var p struct{ Title wiki.Title }
			if err := json.Unmarshal(j.Payload, &p); err != nil {
				t.Fatalf("payload %q: %v", j.Payload, err)
			}
			got = append(got, j.Kind+" "+string(p.Title)+" "+j.Key)
		}
		slices.Sort(got)
		if want := []string{"search Alpha search:Alpha", "search 서울 search:서울"}; !slices.Equal(got, want) {
			t.Fatalf("queued jobs = %q, want %q", got, want)
		}
	})

	t.Run("a category listing reads one range of links_category, in its order", func(t *testing.T) {
		db := sqlitetest.Open(t)
		for _, q := range []wiki.CategoryQuery{
			{Limit: 201},
			{Limit: 201, Subcategories: true},
			{From: wiki.CategoryCursor{SortKey: "B", Title: "Banana"}, Limit: 201},
			{From: wiki.CategoryCursor{SortKey: "B"}, Before: wiki.CategoryCursor{SortKey: "BA", Title: "Bar"}, Limit: 1},
		} {
			plan, err := sqlite.CategoryMembersPlan(ctx, db, "Category:Fruit", q)
			if err != nil {
				t.Fatal(err)
			}
			// The members come in (key, title) order from the index,
			// without a sort: a page among a million members of one key
			// (one template's DEFAULTSORT gives them all one) costs what
			// any page costs.
			p := strings.Join(plan, "; ")
			if !strings.Contains(p, "links_category (target_title=? AND subcat=?") || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("plan of %+v = %s", q, p)
			}
		}
	})

	t.Run("the pages using a title are read in one range of links_target, in its order", func(t *testing.T) {
		plan, err := sqlite.DependentsPlan(ctx, sqlitetest.Open(t))
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "links_target (target_title=? AND kind=? AND from_page>?)") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("plan = %s", p)
		}
	})

	t.Run("the sort key migration gives old category rows their pages' keys", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "k.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		storetest.SortKeyBackfill(t, db, func(t *testing.T) wiki.Store {
			for _, q := range []string{`DROP INDEX links_category`, `ALTER TABLE links DROP COLUMN sortkey`,
				`ALTER TABLE links DROP COLUMN subcat`, `DELETE FROM schema_version WHERE version = 12`} {
				if err := sqlite.Exec(ctx, db, q); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = sqlite.Open(ctx, path); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		})
	})

	t.Run("reopening keeps data and applies no migration twice", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "r.db")
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := db.SavePage(ctx, wiki.SaveRequest{Title: "한국어 위키", Text: "위키는 누구나 편집할 수 있는 웹사이트입니다", UserName: "U"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.UpdateSearchIndex(ctx, res.Page.ID, func(s string, _ wiki.ContentModel) string { return s }); err != nil {
			t.Fatal(err)
		}
		v1, err := db.SchemaVersion(ctx)
		if err != nil || v1 < 1 {
			t.Fatalf("schema version = %d, %v", v1, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			db, err = sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := db.FindRevision(ctx, res.Revision.ID)
			if err != nil || r.Text != "위키는 누구나 편집할 수 있는 웹사이트입니다" {
				t.Fatalf("revision after reopen = %+v, %v", r, err)
			}
			if hits, err := db.Search(ctx, wiki.SearchQuery{Text: "위키", Limit: 10}); err != nil || len(hits) != 1 {
				t.Fatalf("search after reopen = %+v, %v", hits, err)
			}
			if v, err := db.SchemaVersion(ctx); err != nil || v != v1 {
				t.Fatalf("schema version after reopen = %d, %v; want %d", v, err, v1)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkSavePage(b *testing.B) {
	ctx := context.Background()
	db := sqlitetest.Open(b)
	text := strings.Repeat("Some wiki text with [[Links]] and words. ", 50)
	links := wiki.LinkSet{Links: []wiki.Title{"A", "B", "C", "D"}, Categories: []wiki.Title{"Category:X"}}
	for i := 0; b.Loop(); i++ {
		_, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Page %d", i)), Text: text, UserName: "U", Links: links})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindPageParallel(b *testing.B) {
	ctx := context.Background()
	db := sqlitetest.Open(b)
	if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Main Page", Text: "hello", UserName: "U"}); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.FindPage(ctx, "Main Page"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// saveSearchable saves a page whose text is indexed as it is.
func saveSearchable(t *testing.T, db *sqlite.DB, title, text string) {
	t.Helper()
	if _, err := db.SavePage(context.Background(), wiki.SaveRequest{Title: wiki.Title(title), Text: text, SearchText: text, UserName: "U"}); err != nil {
		t.Fatal(err)
	}
}

// searchTitles returns the titles of one page of search hits.
func searchTitles(t *testing.T, db *sqlite.DB, q string, offset, limit int) []string {
	t.Helper()
	hits, err := db.Search(context.Background(), wiki.SearchQuery{Text: q, Offset: offset, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, string(h.Title))
	}
	return out
}

// pagedTitles returns the hits of q read size at a time, up to max.
func pagedTitles(t *testing.T, db *sqlite.DB, q string, size, max int) []string {
	t.Helper()
	var out []string
	for off := 0; off < max; off += size {
		page := searchTitles(t, db, q, off, size)
		if len(page) == 0 {
			break
		}
		out = append(out, page...)
	}
	return out
}

// A page's link rows go by statements of 64 rows and of one row: every
// row is written, with its own columns (links, categories with their sort
// keys, templates, a redirect), across the chunks' boundaries, by a save
// and by an import.
func TestLinkRowsInChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	var ls wiki.LinkSet
	for i := range 150 {
		ls.Links = append(ls.Links, wiki.Title(fmt.Sprintf("L%03d", i)))
	}
	for i := range 70 {
		ls.Categories = append(ls.Categories, wiki.Title(fmt.Sprintf("Category:C%02d", i)))
	}
	ls.Templates = []wiki.Title{"Template:T"}
	ls.Redirect = "L000"
	check := func(title wiki.Title) {
		t.Helper()
		p, err := db.FindPage(ctx, title)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []wiki.Title{"L000", "L063", "L064", "L127", "L128", "L149"} {
			bl, err := db.Backlinks(ctx, target, wiki.ListQuery{Limit: 10})
			if err != nil || !slices.ContainsFunc(bl, func(b wiki.Page) bool { return b.ID == p.ID }) {
				t.Fatalf("backlinks of %s = %v, %v; want %s among them", target, bl, err, title)
			}
		}
		links, err := db.PageLinks(ctx, p.ID)
		if err != nil || len(links) != 150 || !slices.Contains(links, "L149") {
			t.Fatalf("%s's link rows: %d, %v; want 150", title, len(links), err)
		}
		cats, err := db.PageCategories(ctx, p.ID)
		if err != nil || len(cats) != 70 {
			t.Fatalf("%s's categories: %d, %v; want 70", title, len(cats), err)
		}
		for _, c := range []wiki.Title{"Category:C00", "Category:C63", "Category:C64", "Category:C69"} {
			m, err := db.CategoryMembers(ctx, c, wiki.CategoryQuery{Limit: 10})
			if err != nil || !slices.ContainsFunc(m, func(m wiki.CategoryMember) bool { return m.Page.ID == p.ID && m.SortKey != "" }) {
				t.Fatalf("members of %s = %+v, %v; want %s with its sort key", c, m, err, title)
			}
		}
		uses, err := db.Dependents(ctx, "Template:T", wiki.TemplateUse, 0, 10)
		if err != nil || !slices.ContainsFunc(uses, func(u wiki.Page) bool { return u.ID == p.ID }) {
			t.Fatalf("pages using Template:T = %v, %v; want %s", uses, err, title)
		}
	}
	if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Saved", Text: "many links", UserName: "U", Links: ls}); err != nil {
		t.Fatal(err)
	}
	check("Saved")
	if _, err := db.ImportPages(ctx, []wiki.SaveRequest{{Title: "Imported", Text: "many links", UserName: "U", Links: ls}}); err != nil {
		t.Fatal(err)
	}
	check("Imported")
}
