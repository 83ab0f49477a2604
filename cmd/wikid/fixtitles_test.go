package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store/sqlite"
)

// fixTitlesStatus runs wikid fix-titles on data and returns its output and
// exit status.
func fixTitlesStatus(t *testing.T, data string, args ...string) (string, int) {
	t.Helper()
	out, _, err := wikid(t, "", nil, append([]string{"fix-titles", "--data", data}, args...)...)
	var ee *exitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &ee) && ee.err == nil:
		return out, ee.code
	}
	t.Fatalf("wikid fix-titles: %v, not an exit status", err)
	return "", 0
}

// TestFixTitles: pages saved before their namespace existed (stored as
// older versions stored them) are listed by check with the title they now
// have, and fix-titles moves them there as the maintenance script, sets
// the namespace column of titles that are right, and skips, saying why,
// what it cannot do.
func TestFixTitles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	if _, _, err := wikid(t, "admin-password\n", nil, "user", "add", "Admin", "--admin", "--data", data); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(data, "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite", filepath.Join(data, "wikid.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// old stores a page as an older version did: title and namespace as given.
	n := 0
	old := func(title, ns string, deleted bool) int64 {
		t.Helper()
		n++
		p := savePage(t, db, fmt.Sprintf("Placeholder %d", n))
		if _, err := raw.ExecContext(ctx, `UPDATE pages SET title = ?, ns = ?, deleted = ? WHERE id = ?`, title, ns, deleted, p.ID); err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	takenBy := savePage(t, db, "Talk:Taken").ID
	// A page linking to one of them, its link row naming the title as it
	// was parsed then.
	linker := savePage(t, db, "Linker")
	if _, err := raw.ExecContext(ctx, `INSERT INTO links (from_page, kind, target_title) VALUES (?, 'link', 'Talk:foo')`, linker.ID); err != nil {
		t.Fatal(err)
	}
	talkFoo := old("Talk:foo", "", false)                                // Talk was no namespace: "talk:foo" was saved so
	about := old("Wikid:About", "Wikid", false)                          // the project namespace's old name
	talkBar := old("Talk:Bar", "", false)                                // the right title, in the main namespace's column
	taken := old("TALK:Taken", "", false)                                // its title now is a live page's
	bad := old("Talk:User:x", "", false)                                 // no title today: a User page in the Talk namespace
	deleted := old("Image:old.png", "", true)                            // only live pages move
	dup1, dup2 := old("Talk:dup", "", false), old("TALK:dup", "", false) // two pages, one title

	title := func(id int64) (string, string) {
		t.Helper()
		var title, ns string
		if err := raw.QueryRowContext(ctx, `SELECT title, ns FROM pages WHERE id = ?`, id).Scan(&title, &ns); err != nil {
			t.Fatal(err)
		}
		return title, ns
	}

	t.Run("check lists the pages with the title each would become", func(t *testing.T) {
		out, code := checkStatus(t, data)
		if code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		for _, want := range []string{
			fmt.Sprintf(`page %d "Talk:foo": not in normal form; the title is now "Talk:Foo", which cannot reach this page; move it there with: wikid fix-titles`, talkFoo),
			fmt.Sprintf(`page %d "Wikid:About": not in normal form; the title is now "Project:About"`, about),
			fmt.Sprintf(`page %d "Talk:Bar": its namespace column says (main), its title "Talk"; wikid fix-titles corrects it`, talkBar),
			fmt.Sprintf(`page %d "Talk:User:x": the title "Talk:User:x" puts a User page in the Talk namespace`, bad),
			fmt.Sprintf(`page %d (deleted) "Image:old.png": not in normal form; the title is now "File:Old.png"`, deleted),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("check does not say\n  %s\nin\n%s", want, out)
			}
		}
	})

	wantOut := func(t *testing.T, out string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(out, l+"\n") {
				t.Errorf("output lacks\n  %s\nin\n%s", l, out)
			}
		}
	}

	t.Run("a dry run says what would be done and changes nothing", func(t *testing.T) {
		out, code := fixTitlesStatus(t, data, "--dry-run")
		if code != 1 {
			t.Errorf("exit status %d, want 1 (pages are skipped)", code)
		}
		wantOut(t, out,
			fmt.Sprintf(`would move page %d from "Talk:foo" to "Talk:Foo"`, talkFoo),
			fmt.Sprintf(`would move page %d from "Wikid:About" to "Project:About"`, about),
			fmt.Sprintf(`would set the namespace of page %d "Talk:Bar" from (main) to "Talk"`, talkBar),
			fmt.Sprintf(`would move page %d from "Talk:dup" to "Talk:Dup"`, dup1),
			fmt.Sprintf(`skipped page %d "TALK:dup": page %d goes to "Talk:Dup" too; merge the two by hand, then delete this one`, dup2, dup1),
			"3 pages to move, 1 namespace to correct, 4 to skip; nothing was changed")
		if ti, ns := title(talkFoo); ti != "Talk:foo" || ns != "" {
			t.Errorf("after a dry run: %q in %q", ti, ns)
		}
		if _, ns := title(talkBar); ns != "" {
			t.Errorf("after a dry run: namespace %q", ns)
		}
	})

	t.Run("pages move to their titles as the maintenance script; what cannot is skipped, saying why", func(t *testing.T) {
		out, code := fixTitlesStatus(t, data, "--reason", "namespaces")
		if code != 1 {
			t.Errorf("exit status %d, want 1 (pages are skipped)", code)
		}
		wantOut(t, out,
			fmt.Sprintf(`move page %d from "Talk:foo" to "Talk:Foo"`, talkFoo),
			fmt.Sprintf(`move page %d from "Wikid:About" to "Project:About"`, about),
			fmt.Sprintf(`set the namespace of page %d "Talk:Bar" from (main) to "Talk"`, talkBar),
			fmt.Sprintf(`skipped page %d "TALK:Taken": a page "Talk:Taken" (id %d) exists already; merge the two by hand, then delete this one or move it with: wikid page move --id %d NEW_TITLE`, taken, takenBy, taken),
			fmt.Sprintf(`skipped page %d "Talk:User:x": the title "Talk:User:x" puts a User page in the Talk namespace; the talk page of a User page is in User talk (User talk:…); rename it with: wikid page move --id %d NEW_TITLE`, bad, bad),
			fmt.Sprintf(`skipped page %d "Image:old.png": it is deleted, and only live pages move; it would be "File:Old.png"`, deleted),
			"3 pages moved, 1 namespace corrected, 4 skipped")
		for id, want := range map[int64][2]string{talkFoo: {"Talk:Foo", "Talk"}, about: {"Project:About", "Project"}, talkBar: {"Talk:Bar", "Talk"},
			taken: {"TALK:Taken", ""}, dup1: {"Talk:Dup", "Talk"}, dup2: {"TALK:dup", ""}} {
			if ti, ns := title(id); ti != want[0] || ns != want[1] {
				t.Errorf("page %d: %q in %q, want %q in %q", id, ti, ns, want[0], want[1])
			}
		}
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pages WHERE title IN ('Talk:foo', 'Wikid:About')`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d pages at the old titles (err %v), want none: no redirect unless asked", n, err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM log WHERE type = 'move' AND user_name = 'Maintenance script' AND comment LIKE '%namespaces'`).Scan(&n); err != nil || n != 3 {
			t.Errorf("%d moves logged by the maintenance script with the reason (err %v), want 3", n, err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM changes WHERE kind = 'move' AND title = 'Talk:foo' AND new_title = 'Talk:Foo'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("%d moves in recent changes (err %v), want 1", n, err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE state = 'queued'`).Scan(&n); err != nil || n == 0 {
			t.Errorf("%d jobs queued (err %v): a move's jobs are for the server's workers", n, err)
		}
		if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE state = 'queued' AND kind = 'links' AND payload LIKE '%"Linker"%'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("%d link jobs for the page linking to the old title (err %v), want 1", n, err)
		}
	})

	t.Run("again, only what needs a hand is left", func(t *testing.T) {
		out, code := fixTitlesStatus(t, data)
		if code != 1 || !strings.Contains(out, "0 pages moved, 0 namespaces corrected, 4 skipped") {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
	})

	t.Run("arguments are a usage error", func(t *testing.T) {
		_, _, err := wikid(t, "", nil, "fix-titles", "extra", "--data", data)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "usage: wikid fix-titles") {
			t.Errorf("err %v", err)
		}
	})
}
