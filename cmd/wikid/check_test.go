package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// checkStatus runs wikid check on data and returns its output and exit status.
func checkStatus(t *testing.T, data string) (string, int) {
	t.Helper()
	out, _, err := wikid(t, "", nil, "check", "--data", data)
	var ee *exitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &ee):
		return out, ee.code
	}
	t.Fatalf("wikid check: %v, not an exit status", err)
	return "", 0
}

// savePage creates title with one revision by user 1 (Admin).
func savePage(t *testing.T, db *sqlite.DB, title string) wiki.Page {
	t.Helper()
	res, err := db.SavePage(context.Background(), wiki.SaveRequest{
		Title: wiki.MustTitle(title), Text: "Text of " + title + ".", UserID: 1, UserName: "Admin", Time: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Page
}

func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	if _, _, err := wikid(t, "admin-password\n", nil, "user", "add", "Admin", "--admin", "--data", data); err != nil {
		t.Fatal(err)
	}
	// The store stays open, as a running server's would.
	db, err := sqlite.Open(ctx, filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	savePage(t, db, "Main Page")
	savePage(t, db, "Talk:Main Page")
	if _, err := db.CreateUser(ctx, wiki.User{Name: "Alice", PasswordHash: "x"}); err != nil {
		t.Fatal(err)
	}

	t.Run("a clean wiki has no problems and exit status 0", func(t *testing.T) {
		out, code := checkStatus(t, data)
		if code != 0 || out != "no problems found\n" {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
	})

	t.Run("a missing database is exit status 2 and is not created", func(t *testing.T) {
		empty := t.TempDir()
		_, _, err := wikid(t, "", nil, "check", "--data", empty)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || ee.err == nil || !strings.Contains(err.Error(), "there is no wiki database at") {
			t.Errorf("err %v, want exit status 2 with a message", err)
		}
		if _, err := os.Stat(filepath.Join(empty, "wikid.db")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("check created the database: %v", err)
		}
	})

	t.Run("arguments are a usage error with exit status 2", func(t *testing.T) {
		_, _, err := wikid(t, "", nil, "check", "extra", "--data", data)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "usage: wikid check") {
			t.Errorf("err %v", err)
		}
	})

	// Rows today's rules refuse, written as older versions (or hands) could.
	rlo := savePage(t, db, "Invoice")
	nfd := savePage(t, db, "Cafe")
	broken := savePage(t, db, "Broken")
	wrongNS := savePage(t, db, "Notes")
	raw, err := sql.Open("sqlite", filepath.Join(data, "wikid.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE pages SET title = ? WHERE id = ?`, []any{"Invoice\u202Efdp.exe", rlo.ID}},
		{`UPDATE pages SET title = ?, deleted = 1 WHERE id = ?`, []any{"Cafe\u0301", nfd.ID}},
		{`UPDATE pages SET latest_rev = 999999 WHERE id = ?`, []any{broken.ID}},
		{`UPDATE pages SET ns = 'Talk' WHERE id = ?`, []any{wrongNS.ID}},
		{`INSERT INTO revisions (page_id, user_id, user_name, ts, summary, text, size, sha1) VALUES (424242, 1, 'Admin', 0, '', 'x', 1, '')`, nil},
		{`UPDATE users SET name = ?, name_key = ?, skeleton = ? WHERE name = 'Alice'`,
			[]any{"Al\u200Bice", "al\u200Bice", wiki.UserNameSkeleton("Al\u200Bice")}},
		{`INSERT INTO users (name, name_key, skeleton, password_hash, grp, created) VALUES (?, ?, ?, 'x', 'user', 0)`,
			[]any{"\u0410dmin", "\u0430dmin", wiki.UserNameSkeleton("\u0410dmin")}},
	} {
		if _, err := raw.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}

	t.Run("each bad row is one line under its heading, exit status 1", func(t *testing.T) {
		out, code := checkStatus(t, data)
		if code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		want := []string{
			"Page titles the title rules refuse or now spell differently:",
			fmt.Sprintf(`  page %d "Invoice\u202efdp.exe": the title contains U+202E RIGHT-TO-LEFT OVERRIDE (an invisible bidirectional control) at character 8; remove it; rename with: wikid page move --id %d NEW_TITLE`, rlo.ID, rlo.ID),
			fmt.Sprintf("  page %d (deleted) \"Cafe\u0301\" (\"Cafe\\u0301\"): not in normal form; the title is now \"Caf\u00e9\" (\"Caf\\u00e9\"), which cannot reach this page", nfd.ID),
			"",
			"User names the name rules refuse or now spell differently:",
			`  user 2 "Al\u200bice": the user name contains U+200B ZERO WIDTH SPACE (an invisible character) at character 3; remove it`,
			"",
			"Users whose names look alike (only one of each group could be created today):",
			"  \"Admin\" (id 1), \"\u0410dmin\" (\"\\u0410dmin\") (id 3)",
			"",
			"Stored data that disagrees with itself:",
			fmt.Sprintf(`  page %d "Notes": its namespace column says "Talk", its title (main); wikid fix-titles corrects it`, wrongNS.ID),
			fmt.Sprintf(`  page %d "Broken": its latest revision 999999 does not exist`, broken.ID),
			fmt.Sprintf(`  revision %d belongs to page 424242, which does not exist`, wrongNS.LatestID+1),
			"",
			"7 problems found",
		}
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
		}
	})

	t.Run("with no server holding the database open, the findings are the same", func(t *testing.T) {
		before, _ := checkStatus(t, data)
		closed = true
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if after, code := checkStatus(t, data); code != 1 || after != before {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s", code, after, before)
		}
	})

	t.Run("page move renames a page no URL reaches, as the maintenance script", func(t *testing.T) {
		id := fmt.Sprint(rlo.ID)
		for _, c := range []struct {
			args []string
			msg  string
		}{
			{[]string{"page", "move", "Invoice.pdf"}, "usage: wikid page move"},
			{[]string{"page", "move", "--id", "424242", "Invoice.pdf"}, "there is no page 424242"},
			{[]string{"page", "move", "--id", fmt.Sprint(nfd.ID), "Café"}, "is deleted"},
			{[]string{"page", "move", "--id", id, "Main Page"}, `a page "Main Page" already exists`},
			{[]string{"page", "move", "--id", id, "Bad\u200Etitle"}, "U+200E LEFT-TO-RIGHT MARK"},
		} {
			if _, _, err := wikid(t, "", nil, append(c.args, "--data", data)...); err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("wikid %q: err %v, want %q", c.args, err, c.msg)
			}
		}
		out, _, err := wikid(t, "", nil, "page", "move", "--id", id, "Invoice.pdf", "--reason", "unreadable title", "--data", data)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("moved page %d from \"Invoice\\u202efdp.exe\" to \"Invoice.pdf\"\n", rlo.ID); out != want {
			t.Errorf("output %q, want %q", out, want)
		}
		var n int
		var by string
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pages WHERE title = ? OR title = 'Invoice.pdf' AND id <> ?`,
			"Invoice\u202Efdp.exe", rlo.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("pages at the old title or a copy: %d (err %v), want 0: no redirect at the old title", n, err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT user_name FROM log WHERE type = 'move' ORDER BY id DESC LIMIT 1`).Scan(&by); err != nil || by != "Maintenance script" {
			t.Errorf("move logged by %q (err %v), want Maintenance script", by, err)
		}
		out, code := checkStatus(t, data)
		if code != 1 || strings.Contains(out, "Invoice") || !strings.Contains(out, "6 problems found") {
			t.Errorf("check after the move: exit %d, output:\n%s", code, out)
		}
	})

	t.Run("check changes nothing", func(t *testing.T) {
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pages WHERE title = ?`, "Cafe\u0301").Scan(&n); err != nil || n != 1 {
			t.Errorf("the title not in NFC is gone (count %d, err %v)", n, err)
		}
	})
}

func TestLookAlikes(t *testing.T) {
	t.Parallel()
	l := newLookAlikes()
	for _, u := range []store.CheckUser{
		{ID: 1, Name: "Admin"}, {ID: 2, Name: "Bob", Skeleton: "stale"}, {ID: 3, Name: "\u0410dmin"},
		{ID: 4, Name: "Carol"}, {ID: 5, Name: "B\u043Eb"}, {ID: 6, Name: "Adrnin"},
	} {
		if u.Skeleton == "" {
			u.Skeleton = wiki.UserNameSkeleton(u.Name)
		}
		l.add(u)
	}
	var got []string
	for _, g := range l.groups() {
		var ids []string
		for _, u := range g {
			ids = append(ids, fmt.Sprint(u.ID))
		}
		got = append(got, strings.Join(ids, ","))
	}
	if strings.Join(got, " ") != "1,3,6 2,5" {
		t.Errorf("groups %q, want 1,3,6 and 2,5", got)
	}
	if len(l.staleSkeletons) != 1 || l.staleSkeletons[0].ID != 2 {
		t.Errorf("stale skeletons %+v, want Bob's", l.staleSkeletons)
	}
}

// A wiki with capital_links false keeps "apple" and "Apple" apart: check
// and fix-titles, given the same setting, find nothing to do; by the
// default rules, "apple" is a title not in normal form.
func TestCheckCapitalLinks(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	lines := `{"title": "apple", "text": "a fruit"}` + "\n" + `{"title": "Apple", "text": "a company"}` + "\n" +
		`{"title": "banana", "text": "[[apple]]"}` + "\n" + `{"title": "user:bob", "text": "Bob's page"}` + "\n"
	if _, _, err := wikid(t, lines, nil, "import", "-", "--capital-links=false", "--data", data); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.OpenReadOnly(context.Background(), filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	err = db.EachPageTitle(context.Background(), func(p store.CheckTitle) error { ids[p.Title] = p.PageID; return nil })
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"apple", "Apple", "banana", "User:Bob"} {
		if ids[title] == 0 {
			t.Fatalf("the import with capital_links false made no page %q: %v", title, ids)
		}
	}

	t.Run("with capital_links false, lower-case titles are in normal form", func(t *testing.T) {
		for _, c := range []struct {
			env  map[string]string
			args []string
		}{
			{nil, []string{"--capital-links=false"}},
			{map[string]string{"WIKID_CAPITAL_LINKS": "false"}, nil},
		} {
			out, _, err := wikid(t, "", c.env, append([]string{"check", "--data", data}, c.args...)...)
			if err != nil || out != "no problems found\n" {
				t.Errorf("check (env %v, flags %q): %v, output:\n%s", c.env, c.args, err, out)
			}
			out, _, err = wikid(t, "", c.env, append([]string{"fix-titles", "--dry-run", "--data", data}, c.args...)...)
			if err != nil || !strings.Contains(out, "0 pages to move, 0 namespaces to correct, 0 to skip") {
				t.Errorf("fix-titles --dry-run (env %v, flags %q): %v, output:\n%s", c.env, c.args, err, out)
			}
		}
	})

	t.Run("with capital_links true, they are reported with the title they now have", func(t *testing.T) {
		out, code := checkStatus(t, data)
		want := []string{
			"Page titles the title rules refuse or now spell differently:",
			fmt.Sprintf(`  page %d "apple": not in normal form; the title is now "Apple", which cannot reach this page; move it there with: wikid fix-titles`, ids["apple"]),
			fmt.Sprintf(`  page %d "banana": not in normal form; the title is now "Banana", which cannot reach this page; move it there with: wikid fix-titles`, ids["banana"]),
			"",
			"2 problems found",
		}
		if code != 1 || strings.TrimSuffix(out, "\n") != strings.Join(want, "\n") {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s", code, out, strings.Join(want, "\n"))
		}
		out, _, err := wikid(t, "", nil, "fix-titles", "--dry-run", "--data", data)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 1 ||
			!strings.Contains(out, fmt.Sprintf(`would move page %d from "banana" to "Banana"`, ids["banana"])) ||
			!strings.Contains(out, fmt.Sprintf(`skipped page %d "apple": a page "Apple" (id %d) exists already`, ids["apple"], ids["Apple"])) {
			t.Errorf("fix-titles --dry-run: %v, output:\n%s", err, out)
		}
	})
}
