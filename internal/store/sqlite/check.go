package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
)

// OpenReadOnly opens an existing database for reading only, beside a
// server that may be writing it: no migration runs and nothing is written
// (the connections are read-only and query_only; a write method returns an
// error). The schema must be the one this build expects.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	db := &DB{path: path, r: r, w: r}
	have, err := db.SchemaVersion(ctx)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if want := latestMigration(); have != want {
		r.Close()
		return nil, fmt.Errorf("sqlite: open %s: the schema is at version %d, this wikid expects %d; "+
			"start this version of wikid once (wikid serve) to migrate it", path, have, want)
	}
	if err := db.prepare(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// latestMigration is the version of the newest embedded migration.
func latestMigration() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	v := 0
	for _, name := range names {
		var n int
		if _, err := fmt.Sscanf(name, "migrations/%d_", &n); err == nil {
			v = max(v, n)
		}
	}
	return v
}

// CheckTitle is a page's title as stored, for a consistency check.
type CheckTitle struct {
	PageID  int64
	Title   string // as stored, possibly no longer a valid wiki.Title
	NS      string // the pages.ns column
	Deleted bool
}

// EachPageTitle calls fn for every page, live and deleted, in id order,
// reading titles only. It stops at fn's first error and returns it.
func (db *DB) EachPageTitle(ctx context.Context, fn func(CheckTitle) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT id, title, ns, deleted FROM pages ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite: page titles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t CheckTitle
		if err := rows.Scan(&t.PageID, &t.Title, &t.NS, &t.Deleted); err != nil {
			return fmt.Errorf("sqlite: page titles: %w", err)
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: page titles: %w", err)
	}
	return nil
}

// CheckUser is a user's name as stored, for a consistency check.
type CheckUser struct {
	ID       int64
	Name     string // as stored, possibly no longer a valid user name
	Skeleton string // the users.skeleton column
}

// EachUserName calls fn for every user in id order, reading names only.
// It stops at fn's first error and returns it.
func (db *DB) EachUserName(ctx context.Context, fn func(CheckUser) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT id, name, skeleton FROM users ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite: user names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u CheckUser
		if err := rows.Scan(&u.ID, &u.Name, &u.Skeleton); err != nil {
			return fmt.Errorf("sqlite: user names: %w", err)
		}
		if err := fn(u); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: user names: %w", err)
	}
	return nil
}

// Inconsistency is a row that breaks a structural invariant of the store.
type Inconsistency struct {
	PageID  int64  // the page concerned, or 0
	Title   string // its title, when the page exists
	RevID   int64  // the revision concerned, or 0
	Problem string // what is wrong, in a sentence fragment
}

// structuralChecks are joins that each return the rows breaking one
// invariant, as (page id, title, revision id, problem). Each is one pass
// over a table with primary-key lookups on the other; none reads text.
var structuralChecks = []string{
	// A page's latest revision exists and is one of its own.
	`SELECT p.id, p.title, p.latest_rev, 'its latest revision ' || p.latest_rev || ' does not exist'
	   FROM pages p LEFT JOIN revisions r ON r.id = p.latest_rev WHERE r.id IS NULL`,
	`SELECT p.id, p.title, p.latest_rev, 'its latest revision ' || p.latest_rev || ' belongs to page ' || r.page_id
	   FROM pages p JOIN revisions r ON r.id = p.latest_rev WHERE r.page_id <> p.id`,
	// A revision's page exists.
	`SELECT r.page_id, '', r.id, 'revision ' || r.id || ' belongs to page ' || r.page_id || ', which does not exist'
	   FROM revisions r LEFT JOIN pages p ON p.id = r.page_id WHERE p.id IS NULL`,
	// A revision's author exists (accounts are never deleted; 0 is the maintenance script or an anonymous editor).
	`SELECT r.page_id, coalesce(p.title, ''), r.id, 'revision ' || r.id || ' is by user id ' || r.user_id || ' (' || r.user_name || '), which does not exist'
	   FROM revisions r LEFT JOIN users u ON u.id = r.user_id LEFT JOIN pages p ON p.id = r.page_id
	  WHERE r.user_id <> 0 AND u.id IS NULL`,
}

// EachInconsistency runs the structural checks and calls fn for every row
// that breaks one, streaming. It stops at fn's first error and returns it.
func (db *DB) EachInconsistency(ctx context.Context, fn func(Inconsistency) error) error {
	for _, q := range structuralChecks {
		if err := db.eachInconsistency(ctx, q, fn); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) eachInconsistency(ctx context.Context, q string, fn func(Inconsistency) error) error {
	rows, err := db.r.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlite: structural check: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var in Inconsistency
		if err := rows.Scan(&in.PageID, &in.Title, &in.RevID, &in.Problem); err != nil {
			return fmt.Errorf("sqlite: structural check: %w", err)
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: structural check: %w", err)
	}
	return nil
}
