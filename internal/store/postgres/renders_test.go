package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// revision inserts a page's revision with SQL, so that the render tests
// need nothing but the renders code.
func revision(t *testing.T, db *postgres.DB, title string) (pageID, revID int64) {
	t.Helper()
	ctx := context.Background()
	err := db.Pool().QueryRow(ctx, `INSERT INTO pages (title, ns, touched) VALUES ($1, '', 0)
		ON CONFLICT (title) DO UPDATE SET touched = 1 RETURNING id`, title).Scan(&pageID)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Pool().QueryRow(ctx, `INSERT INTO revisions (page_id, user_name, ts, summary, text, size, sha1)
		VALUES ($1, 'U', 0, '', 'x', 1, '') RETURNING id`, pageID).Scan(&revID)
	if err != nil {
		t.Fatal(err)
	}
	return pageID, revID
}

func TestRenders(t *testing.T) {
	db := pgtest.Open(t)
	ctx := context.Background()
	a, a1 := revision(t, db, "A")
	_, a2 := revision(t, db, "A")
	_, b1 := revision(t, db, "B")
	find := func(rev int64, v int) string {
		t.Helper()
		data, err := db.FindRender(ctx, rev, v)
		if errors.Is(err, wiki.ErrNotFound) {
			return "<none>"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	xmin := func(rev int64, v int) string {
		t.Helper()
		var x string
		if err := db.Pool().QueryRow(ctx, `SELECT xmin::text FROM renders WHERE rev_id = $1 AND version = $2`, rev, v).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, r := range []struct {
		rev  int64
		v    int
		data string
	}{{a1, 1, "a1"}, {a2, 1, "a2"}, {a2, 2, "a2v2"}, {b1, 1, "b1"}, {b1, 1, "b1"}, {b1, 2, "old"}, {b1, 2, "new"}} {
		if err := db.SaveRender(ctx, r.rev, r.v, []byte(r.data)); err != nil {
			t.Fatal(err)
		}
	}
	if got := find(b1, 1); got != "b1" {
		t.Fatalf("the same render saved twice reads %q", got)
	}
	// Another node saving the same bytes leaves the row as it is.
	before := xmin(b1, 1)
	if err := db.SaveRender(ctx, b1, 1, []byte("b1")); err != nil {
		t.Fatal(err)
	}
	if after := xmin(b1, 1); after != before {
		t.Fatalf("saving the same render again rewrote the row (xmin %s, then %s)", before, after)
	}
	if got := find(b1, 2); got != "new" {
		t.Fatalf("a replaced render reads %q, want the newer", got)
	}
	if got := find(a2, 3); got != "<none>" {
		t.Fatalf("a version never saved reads %q", got)
	}
	err := db.SaveRender(ctx, 999999, 1, []byte("x"))
	if !errors.Is(err, wiki.ErrNotFound) {
		t.Fatalf("saving the render of a missing revision: %v, want ErrNotFound", err)
	}
	if err := db.SaveRender(ctx, a1, 5, nil); err != nil {
		t.Fatalf("saving an empty render: %v", err)
	}
	if err := db.DeleteRenders(ctx, []int64{a}); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []int64{a1, a2} {
		if got := find(rev, 1); got != "<none>" {
			t.Fatalf("render of %d after deleting the page's renders: %q", rev, got)
		}
	}
	if got := find(b1, 1); got != "b1" {
		t.Fatalf("another page's render after delete: %q", got)
	}
	if err := db.DeleteRenders(ctx, nil); err != nil {
		t.Fatal(err)
	}
}
