package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/wiki"
)

// Races the contract suite leaves to one writer on SQLite, which
// PostgreSQL settles with locks and unique indexes.
func TestConcurrentPageWrites(t *testing.T) {
	ctx := context.Background()
	t.Run("concurrent creations of one title: exactly one wins, the others are ErrExists", func(t *testing.T) {
		db := pgtest.Open(t)
		errs := make(chan error, 12)
		var wg sync.WaitGroup
		for i := range cap(errs) {
			wg.Go(func() {
				_, err := db.SavePage(ctx, wiki.SaveRequest{Title: "Hot", Text: fmt.Sprintf("writer %d", i), UserName: "U"})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		wins := 0
		for err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, wiki.ErrExists):
				t.Fatalf("unexpected error: %v", err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d creations won, want 1", wins)
		}
	})
	t.Run("concurrent protections of an unprotected title: one protects, the others modify", func(t *testing.T) {
		db := pgtest.Open(t)
		actions := make(chan string, 8)
		var wg sync.WaitGroup
		for range cap(actions) {
			wg.Go(func() {
				act, err := db.ProtectPage(ctx, wiki.ProtectRequest{Title: "Locked", Edit: wiki.ProtectAdmins, UserName: "Admin"})
				if err != nil {
					t.Error(err)
				}
				actions <- act
			})
		}
		wg.Wait()
		close(actions)
		count := map[string]int{}
		for a := range actions {
			count[a]++
		}
		if count["protect"] != 1 || count["modify"] != cap(actions)-1 {
			t.Fatalf("actions = %v, want one protect and the rest modify", count)
		}
		log, err := db.Log(ctx, wiki.LogQuery{Type: wiki.LogProtect, Target: "Locked"})
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != cap(actions) || log[len(log)-1].Action != "protect" {
			t.Fatalf("protect log = %+v", log)
		}
	})
	t.Run("an import beside saves of the same titles loses nothing", func(t *testing.T) {
		db := pgtest.Open(t)
		var reqs []wiki.SaveRequest
		for i := range 20 {
			reqs = append(reqs, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("P%02d", i)), Text: "imported", UserName: "Importer"})
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := db.ImportPages(ctx, reqs); err != nil {
				t.Error(err)
			}
		})
		for i := range 20 {
			wg.Go(func() {
				_, err := db.SavePage(ctx, wiki.SaveRequest{Title: reqs[i].Title, Text: "saved", UserName: "U"})
				if err != nil && !errors.Is(err, wiki.ErrExists) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for _, req := range reqs {
			p, err := db.FindPage(ctx, req.Title)
			if err != nil {
				t.Fatal(err)
			}
			r, err := db.FindRevision(ctx, p.LatestID)
			if err != nil {
				t.Fatal(err)
			}
			// The import is applied on top of whatever it found.
			if r.Text != "imported" {
				t.Errorf("%s: latest text %q, want the import's", req.Title, r.Text)
			}
		}
	})
}

// Moves of several pages to one title that names no page: one wins, the
// others are told the title is taken (ErrExists), never a raw constraint
// error. A held lock on the title's protection row makes every move pass
// its check of the title before any of them writes it.
func TestConcurrentMovesToOneTitle(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t)
	for i := range 8 {
		if _, err := db.SavePage(ctx, wiki.SaveRequest{Title: wiki.Title(fmt.Sprintf("Source %d", i)), Text: "x", UserName: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO protection (title, user_name, ts) VALUES ('Target', 'x', 0)`); err != nil {
		t.Fatal(err)
	}
	hold, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT 1 FROM protection WHERE title = 'Target' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(500*time.Millisecond, func() { hold.Rollback(ctx) })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := db.MovePage(ctx, wiki.MoveRequest{From: wiki.Title(fmt.Sprintf("Source %d", i)), To: "Target", UserName: "U"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, wiki.ErrExists):
			t.Errorf("move: %v, want ErrExists", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d moves won, want 1", won)
	}
}
