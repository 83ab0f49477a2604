package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// wikid check's reads on PostgreSQL: titles and names as stored, and the
// rows that break the store's invariants (the same SQL as on SQLite).
func TestCheckReads(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, title := range []wiki.Title{"Fine", "Broken"} {
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: title, Text: "x", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.CreateUser(ctx, wiki.User{Name: "Alice", PasswordHash: "h", Group: wiki.GroupUser}); err != nil {
		t.Fatal(err)
	}
	// Break one page: its latest revision points nowhere; and a revision
	// by an account that does not exist.
	if _, err := db.Pool().Exec(ctx, `UPDATE pages SET latest_rev = 999999 WHERE title = 'Broken'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE revisions SET user_id = 4242 WHERE page_id = (SELECT id FROM pages WHERE title = 'Fine')`); err != nil {
		t.Fatal(err)
	}
	// A blob whose chunks do not hold its bytes.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO blobs (sha256, size, created) VALUES ('b1', 5, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO blob_chunks (sha256, n, data) VALUES ('b1', 0, '\x0102'::bytea)`); err != nil {
		t.Fatal(err)
	}
	ro, err := postgres.OpenForCheck(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var titles, names, problems []string
	if err := ro.EachPageTitle(ctx, func(p store.CheckTitle) error { titles = append(titles, p.Title); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := ro.EachUserName(ctx, func(u store.CheckUser) error { names = append(names, u.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := ro.EachInconsistency(ctx, func(in store.Inconsistency) error { problems = append(problems, in.Problem); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(titles, []string{"Fine", "Broken"}) || !slices.Equal(names, []string{"Alice"}) {
		t.Fatalf("titles %q, names %q", titles, names)
	}
	all := strings.Join(problems, "\n")
	if len(problems) != 3 || !strings.Contains(all, "latest revision 999999 does not exist") || !strings.Contains(all, "user id 4242") ||
		!strings.Contains(all, "blob b1 holds 2 bytes in its chunks, not its size, 5") {
		t.Fatalf("problems found:\n%s", all)
	}
	// wikid fix-titles' repair of a namespace column; a page that does not
	// exist is not found.
	if err := db.SetPageNamespace(ctx, 1, wiki.NSTalk); err != nil {
		t.Fatal(err)
	}
	var ns []string
	if err := ro.EachPageTitle(ctx, func(p store.CheckTitle) error { ns = append(ns, p.NS); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ns, []string{"Talk", ""}) {
		t.Fatalf("namespace columns %q", ns)
	}
	if err := db.SetPageNamespace(ctx, 424242, ""); !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("a missing page: %v", err)
	}
	// A schema this build does not expect is refused, not migrated.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO schema_version (version, applied) VALUES (9999, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.OpenForCheck(ctx, dsn); err == nil || !strings.Contains(err.Error(), "this wikid expects") {
		t.Fatalf("opening a newer schema for a check: %v", err)
	}
}
