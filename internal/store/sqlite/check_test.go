package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// TestCheck: the read-only open and the iterators wikid check reads.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wikid.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := db.CreateUser(ctx, wiki.User{Name: "Editor", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	save := func(title string) wiki.Page {
		t.Helper()
		res, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.MustTitle(title), Text: "x", UserID: u.ID, UserName: u.Name, Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return res.Page
	}
	save("A")
	b, c := save("B"), save("C")

	ro, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	problems := func() []string {
		t.Helper()
		var got []string
		if err := ro.EachInconsistency(ctx, func(in store.Inconsistency) error {
			got = append(got, in.Title+": "+in.Problem)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("a consistent store has no inconsistencies", func(t *testing.T) {
		if got := problems(); len(got) != 0 {
			t.Errorf("got %q", got)
		}
	})

	t.Run("the read-only store refuses writes and reads pages", func(t *testing.T) {
		if _, err := ro.CreateUser(ctx, wiki.User{Name: "Other", PasswordHash: "x"}); err == nil {
			t.Error("CreateUser on a read-only store: no error")
		}
		if p, err := ro.FindPageByID(ctx, b.ID); err != nil || p.Title != "B" {
			t.Errorf("FindPageByID: %+v, %v", p, err)
		}
	})

	t.Run("each broken row is reported once", func(t *testing.T) {
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		for _, q := range []string{
			`UPDATE pages SET latest_rev = 0 WHERE title = 'A'`,
			`UPDATE pages SET latest_rev = (SELECT latest_rev FROM pages WHERE title = 'C') WHERE title = 'B'`,
			`INSERT INTO revisions (id, page_id, user_id, user_name, ts, summary, text, size, sha1) VALUES (500, 77, 0, 'x', 0, '', '', 0, '')`,
			`INSERT INTO revisions (id, page_id, user_id, user_name, ts, summary, text, size, sha1) VALUES (501, ` + fmt.Sprint(c.ID) + `, 99, 'Ghost', 0, '', '', 0, '')`,
			`INSERT INTO blobs (sha256, size, created) VALUES ('b1', 5, 0), ('b2', 2, 0), ('b3', 3, 0)`,
			`INSERT INTO blob_chunks (sha256, n, data) VALUES ('b2', 1, x'0102'), ('b3', 0, x'010203')`,
		} {
			if _, err := raw.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		want := []string{
			"A: its latest revision 0 does not exist",
			"B: its latest revision " + fmt.Sprint(c.LatestID) + " belongs to page " + fmt.Sprint(c.ID),
			": revision 500 belongs to page 77, which does not exist",
			"C: revision 501 is by user id 99 (Ghost), which does not exist",
			": blob b1 holds 0 bytes in its chunks, not its size, 5",
			": blob b2 lacks a chunk: its 1 chunks are numbered up to 1",
		}
		if got := problems(); !slices.Equal(got, want) {
			t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("titles and names stream in id order", func(t *testing.T) {
		var titles []string
		if err := ro.EachPageTitle(ctx, func(p store.CheckTitle) error { titles = append(titles, p.Title); return nil }); err != nil {
			t.Fatal(err)
		}
		var names []string
		if err := ro.EachUserName(ctx, func(u store.CheckUser) error {
			if u.Skeleton != wiki.UserNameSkeleton(u.Name) {
				t.Errorf("user %q: skeleton %q", u.Name, u.Skeleton)
			}
			names = append(names, u.Name)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(titles, []string{"A", "B", "C"}) || !slices.Equal(names, []string{"Editor"}) {
			t.Errorf("titles %q, names %q", titles, names)
		}
	})

	t.Run("a missing database is an error and is not created", func(t *testing.T) {
		none := filepath.Join(t.TempDir(), "none.db")
		if _, err := sqlite.OpenReadOnly(ctx, none); err == nil {
			t.Error("no error")
		}
		if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the database was created: %v", err)
		}
	})
}
