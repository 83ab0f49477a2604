package sqlite

import (
	"context"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

// JournalMode reports the journal mode of db's writer connection.
func JournalMode(ctx context.Context, db *DB) (string, error) {
	var mode string
	err := db.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)
	return mode, err
}

// SetBulkIdle sets how long after an import's last batch the writer
// connection checkpoints again (bulkIdle).
func SetBulkIdle(db *DB, d time.Duration) { db.bulk.wait = d }

// ForeignKeyViolations counts the rows PRAGMA foreign_key_check reports.
func ForeignKeyViolations(ctx context.Context, db *DB) (int, error) {
	rows, err := db.w.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// Pragma reads a pragma on the writer (reader false) or a reader connection.
func Pragma(ctx context.Context, db *DB, name string, reader bool) (string, error) {
	conn := db.w
	if reader {
		conn = db.r.DB
	}
	var v string
	err := conn.QueryRowContext(ctx, `PRAGMA `+name).Scan(&v)
	return v, err
}

// Plan returns the EXPLAIN QUERY PLAN lines of q.
func Plan(ctx context.Context, db *DB, q string, args ...any) ([]string, error) {
	rows, err := db.r.DB.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}

// Exec runs q on the writer connection.
func Exec(ctx context.Context, db *DB, q string, args ...any) error {
	_, err := db.w.ExecContext(ctx, q, args...)
	return err
}

// UserSkeleton reads the stored skeleton of a user's name.
func UserSkeleton(ctx context.Context, db *DB, id int64) (string, error) {
	var s string
	err := db.r.QueryRowContext(ctx, `SELECT skeleton FROM users WHERE id = ?`, id).Scan(&s)
	return s, err
}

// QueryRow scans the one row of q, on a reader connection, into dest.
func QueryRow(ctx context.Context, db *DB, q string, args []any, dest ...any) error {
	return db.r.QueryRowContext(ctx, q, args...).Scan(dest...)
}

// MinCompress is the shortest revision text stored compressed.
const MinCompress = minCompress

// Kept returns the write statements db keeps prepared.
func Kept(db *DB) []string {
	db.keptMu.Lock()
	defer db.keptMu.Unlock()
	out := make([]string, 0, len(db.kept))
	for q := range db.kept {
		out = append(out, q)
	}
	return out
}

// TxPrepares counts the statements db prepared for one transaction only,
// because no kept statement served them.
func TxPrepares(db *DB) int64 { return db.prepares.Load() }

// ReadPrepares counts the read statements db prepared on its reader
// pool, and ReadStmts those it keeps.
func ReadPrepares(db *DB) int64 { return db.r.prepares.Load() }
func ReadStmts(db *DB) int64    { return db.r.n.Load() }

// SetMaxReadStmts sets how many read statements a DB opened from now on
// keeps, until the test ends.
func SetMaxReadStmts(t interface{ Cleanup(func()) }, n int64) {
	old := maxReadStmts
	maxReadStmts = n
	t.Cleanup(func() { maxReadStmts = old })
}

// SetSearchRare sets how many pages a rare word is in at most, until the
// test ends.
func SetSearchRare(t interface{ Cleanup(func()) }, n int) {
	old := searchRare
	searchRare = n
	t.Cleanup(func() { searchRare = old })
}

// SetSearchBudget sets how long a search may read the index, until the
// test ends.
func SetSearchBudget(t interface{ Cleanup(func()) }, d time.Duration) {
	old := searchBudget
	searchBudget = d
	t.Cleanup(func() { searchBudget = old })
}

// CategoryMembersPlan returns the EXPLAIN QUERY PLAN lines of the query
// CategoryMembers runs for cat and q.
func CategoryMembersPlan(ctx context.Context, db *DB, cat wiki.Title, q wiki.CategoryQuery) ([]string, error) {
	query, args := categoryMembersQuery(cat, q)
	return Plan(ctx, db, query, args...)
}

// DependentsPlan returns the EXPLAIN QUERY PLAN lines of the query
// Dependents runs for one kind of row.
func DependentsPlan(ctx context.Context, db *DB) ([]string, error) {
	return Plan(ctx, db, dependentsQuery, "Template:T", "template", 0, 500)
}

// WatchedChangesPlan returns the EXPLAIN QUERY PLAN lines of the query
// WatchedChanges runs for q.
func WatchedChangesPlan(ctx context.Context, db *DB, q wiki.ChangeQuery) ([]string, error) {
	query, args := watchedChangesQuery(1, q, time.Now())
	return Plan(ctx, db, query, args...)
}

// RecentChangesPlan returns the EXPLAIN QUERY PLAN lines of the query
// RecentChanges runs for q.
func RecentChangesPlan(ctx context.Context, db *DB, q wiki.ChangeQuery) ([]string, error) {
	query, args, ok := recentChangesQuery(q)
	if !ok {
		return nil, nil
	}
	return Plan(ctx, db, query, args...)
}

// File queries, for their plans.
const (
	BlobChunksQuery      = blobChunksQuery
	CurrentFilesQuery    = currentFilesQuery
	FindFileVersionQuery = findFileVersionQuery
)

// SearchSegments reports the live search segments' count and documents
// (stale entries included), and how many pages have an entry.
func SearchSegments(ctx context.Context, db *DB) (segments, docs, indexed int, err error) {
	err = db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(docs), 0), (SELECT count(*) FROM pages WHERE search_seg <> 0)
		FROM search_segments WHERE state = 0`).Scan(&segments, &docs, &indexed)
	return
}
