// Package sqlite implements wiki.Store on an embedded SQLite database
// (modernc.org/sqlite, pure Go) in WAL mode.
//
// Connections: one writer connection (its own *sql.DB, MaxOpenConns 1,
// every transaction BEGIN IMMEDIATE) serializes all writes in the process,
// so writers queue in Go instead of failing with SQLITE_BUSY; a pool of
// query_only reader connections reads concurrently from WAL snapshots and
// never waits for the writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/cores"
	"github.com/wikid/wikid/internal/wiki"
	"modernc.org/sqlite" // registers driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var _ wiki.Store = (*DB)(nil)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is a Wikid store in one SQLite file.
type DB struct {
	path string
	w    *sql.DB   // the single writer connection
	r    *readPool // query_only reader pool

	// Hot read statements, prepared once on the reader pool.
	findPage       *sql.Stmt
	findRevision   *sql.Stmt
	existingTitles *sql.Stmt
	findSession    *sql.Stmt
	findRender     *sql.Stmt

	// Write statements with arguments, prepared on the writer connection
	// after the first transaction that ran them (wtx).
	keptMu   sync.Mutex
	kept     map[string]*sql.Stmt
	prepares atomic.Int64 // statements prepared for one transaction only (tests)

	bulkOnce sync.Once // ImportPages grew the writer's page cache

	segcache   segcache      // what queries read of search segments
	rebuilding sync.Map      // search segments found corrupt, being rebuilt (corrupt)
	merger     merger        // of search segments, in the background
	mergeTurn  chan struct{} // one merge at a time (mergeSearch)
	// bulkBatches counts import batches: the WAL restarts every so many
	// (writeBulk).
	bulkBatches atomic.Int64
	bulk        bulkCheckpoints // an import holds off the writer's checkpoints
	// buildWait is importBuildWait when not zero (tests shorten it), and
	// buildHook, when not nil, runs before each import batch's segment
	// is built (tests slow it).
	buildWait time.Duration
	buildHook func()
	// cores: an import's writer keeps one; the search segments it builds
	// and the merges take the others as the engine's parses do
	// (ShareCores).
	cores *cores.Gate
}

// ShareCores makes the store's import writer keep a core of g's while it
// writes, and the work that feeds it (a batch's search segment, merges)
// take cores from g. Call it before the store is used.
func (db *DB) ShareCores(g *cores.Gate) { db.cores = g }

// bulkCacheKiB is the writer's page cache once the process imports in
// bulk (ImportPages), where it is otherwise that of the dsn. A batch
// dirties index pages all over the link target index (80 MB at 100,000
// pages) and the title indexes: a cache smaller than what a batch dirties
// spills pages to the WAL mid-transaction and reads them back. 128 MB
// took the writer as little CPU as 256 MB, for 240 MB less memory.
const bulkCacheKiB = 128 << 10

// Open opens (creating if needed) the database at path and applies any
// pending schema migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	db := &DB{path: path, mergeTurn: make(chan struct{}, 1)}
	var err error
	db.w, err = sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)
	if err := connectFirst(ctx, db.w); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := db.fillSkeletons(ctx); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: user name skeletons: %w", path, err)
	}
	rp, err := sql.Open("sqlite", dsn(path, true))
	db.r = &readPool{DB: rp}
	if err != nil {
		db.w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.r.SetMaxOpenConns(n)
	db.r.SetMaxIdleConns(n)
	db.r.SetConnMaxIdleTime(0)
	db.r.SetConnMaxLifetime(0)
	if err := db.prepare(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

// connectFirst makes the writer's first connection, which puts the
// database in WAL mode. Two processes opening a new database at once (serve
// and import started together on an empty folder) can both read it before
// either has switched it: the one that cannot then take the write lock
// fails at once with SQLITE_BUSY, which SQLite does not wait out (its
// busy handler would deadlock them), about one time in fifty with four
// processes. The first connection is tried again for as long as a
// statement waits for a lock (busyTimeoutMS), after a short random pause.
func connectFirst(ctx context.Context, w *sql.DB) error {
	deadline := time.Now().Add(busyTimeoutMS * time.Millisecond)
	for attempt := 1; ; attempt++ {
		err := w.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(time.Duration(1+rand.IntN(5*min(attempt, 20))) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// busyError returns err, or when it is SQLITE_BUSY (the writer was held
// longer than busyTimeoutMS, by another process's long write) an error
// that tells the user so: a 503 with Retry-After, the edit form keeping
// the text, where it was a 500 that said nothing of what to do.
func busyError(err error) error {
	if err == nil || !isBusy(err) {
		return err
	}
	return &wiki.Error{Kind: wiki.KindUnavailable, RetryAfter: busyRetryAfter, Err: err,
		Msg: "The wiki's database is busy with a long write (an import or maintenance), so this change was not saved. Try again in a few seconds."}
}

// busyRetryAfter is how long busyError tells a client to wait.
const busyRetryAfter = 5 * time.Second

// isBusy reports whether err is SQLITE_BUSY (of any extended code).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// pageSize is a new database's page size, 16 KB where SQLite's default is
// 4 KB. A search reads its index in blocks of about 16 KB
// (search.BlockSize), each a leaf page and four overflow pages when a page
// is 4 KB, read one after another; with 16 KB pages, a leaf and one. On a
// 100,000-page wiki, with 16 KB pages the slowest prefix searches (p99, 4
// clients) took 40 ms against 88 and 128 ms, and phrases 46 and 60 ms
// against 62 and 63; the file was 3% smaller, and creating pages through
// REST took the server as much CPU. The cost is in bytes written: a WAL
// frame is a page, so an edit's commit writes about 3.5 times as many
// (840 KB against 240 KB for an edit that rewrites 25 link rows), and the
// automatic checkpoint, counted in pages, comes at 16 MB of WAL, not 4.
// Pages of 32 KB made the file a quarter larger.
const pageSize = 16 << 10

// busyTimeoutMS is how long a statement waits for a lock the other
// process or connection holds before it fails with SQLITE_BUSY.
const busyTimeoutMS = 10000

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-8000)") // 8 MB per connection: the render and edge caches hold the hot data
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// A new database's pages are pageSize bytes; an existing one
		// keeps its own. The driver runs the _pragma list in the order
		// of the names, and only then the journal mode, which writes the
		// first page and so fixes the size.
		q.Add("_pragma", fmt.Sprintf("page_size(%d)", pageSize))
		q.Set("_journal_mode", "WAL")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

func (db *DB) prepare(ctx context.Context) error {
	stmts := []struct {
		s   **sql.Stmt
		sql string
	}{
		{&db.findPage, `SELECT ` + pageCols + ` FROM pages p WHERE p.title = ?`},
		{&db.findRevision, `SELECT ` + revCols + `, r.text FROM revisions r JOIN pages p ON p.id = r.page_id
			LEFT JOIN revisions pr ON pr.id = r.parent_id WHERE r.id = ? AND r.deleted = 0`},
		{&db.existingTitles, `SELECT title FROM pages WHERE deleted = 0 AND title IN (SELECT value FROM json_each(?))`},
		{&db.findSession, `SELECT id, user_id, csrf, created, expires FROM sessions WHERE id = ? AND expires > ?`},
		{&db.findRender, `SELECT data, codec FROM renders WHERE rev_id = ? AND version = ?`},
	}
	for _, st := range stmts {
		s, err := db.r.PrepareContext(ctx, st.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", st.sql, err)
		}
		*st.s = s
	}
	return nil
}

// Close closes every connection.
func (db *DB) Close() error {
	db.merger.close()
	db.bulk.close()
	var errs []error
	for _, s := range []*sql.Stmt{db.findPage, db.findRevision, db.existingTitles, db.findSession, db.findRender} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	db.keptMu.Lock()
	for _, s := range db.kept {
		errs = append(errs, s.Close())
	}
	db.kept = nil
	db.keptMu.Unlock()
	if db.r != nil && db.r.DB != nil {
		db.r.stmts.Range(func(_, s any) bool {
			errs = append(errs, s.(*sql.Stmt).Close())
			return true
		})
		errs = append(errs, db.r.Close())
	}
	if db.w != nil && (db.r == nil || db.w != db.r.DB) {
		// Closing the last connection checkpoints the WAL.
		errs = append(errs, db.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check and reports any problem found.
func (db *DB) IntegrityCheck(ctx context.Context) error {
	rows, err := db.w.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("sqlite: integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("sqlite: integrity check: %w", err)
		}
		if s != "ok" {
			msgs = append(msgs, s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: integrity check: %w", err)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("sqlite: integrity check: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// SchemaVersion returns the number of the last migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}

// migrate applies migrations/NNNN_name.sql files above the recorded
// version, each in its own transaction with its version row.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	// A database a newer wikid migrated has tables and meanings this one
	// does not know: running on it could lose what the newer one relies
	// on (the purge log, say). Refuse before changing anything.
	var have int
	if err := db.w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&have); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if known := latestMigration(); have > known {
		return fmt.Errorf("the database's schema is at version %d, newer than this wikid's (%d): run the wikid version that last opened it, or restore a backup made before", have, known)
	}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return fmt.Errorf("migrate: %s: name must start with a number", base)
		}
		if err := db.apply(ctx, v, name); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

func (db *DB) apply(ctx context.Context, version int, name string) error {
	body, err := migrations.ReadFile(name)
	if err != nil {
		return err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_version WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if fill := backfills[version]; fill != nil {
		if err := fill(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied) VALUES (?, ?)`, version, time.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// backfills are the steps of migrations that SQL cannot take, by
// version: each runs after its migration's script, in its transaction.
var backfills = map[int]func(context.Context, *sql.Tx) error{
	12: backfillSortKeys,
}

// backfillSortKeys gives the category rows that migration 12 found the
// sort keys an old wikid's rows stand for: their pages' default keys
// (wiki.Title.DefaultSortKey), and whether their pages are categories.
// Page by page in ID order, a thousand pages per read: the update of a
// page's rows does not run beside a read of the table it changes.
func backfillSortKeys(ctx context.Context, tx *sql.Tx) error {
	update, err := tx.PrepareContext(ctx, `UPDATE links SET sortkey = ?, subcat = ? WHERE from_page = ? AND kind = 'category'`)
	if err != nil {
		return err
	}
	defer update.Close()
	type page struct {
		id    int64
		title wiki.Title
	}
	batch := make([]page, 0, 1000)
	for after := int64(0); ; after = batch[len(batch)-1].id {
		rows, err := tx.QueryContext(ctx, `SELECT id, title FROM pages p WHERE id > ?
			AND EXISTS (SELECT 1 FROM links WHERE from_page = p.id AND kind = 'category') ORDER BY id LIMIT ?`, after, cap(batch))
		if err != nil {
			return err
		}
		batch = batch[:0]
		for rows.Next() {
			var p page
			if err := rows.Scan(&p.id, &p.title); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, p)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		for _, p := range batch {
			if _, err := update.ExecContext(ctx, wiki.StoredSortKey(p.title.DefaultSortKey(), p.title), b2i(p.title.IsSubcategory()), p.id); err != nil {
				return err
			}
		}
	}
}

// write runs fn in a write transaction (BEGIN IMMEDIATE on the single
// writer connection) and commits if fn returns nil.
func (db *DB) write(ctx context.Context, fn func(tx *wtx) error) error {
	return db.writeOn(ctx, db.w.BeginTx, fn)
}

// writeOn is write, its transaction begun by begin: the writer pool's, or
// one of its connection's, held with settings of its own (writeBulk).
func (db *DB) writeOn(ctx context.Context, begin func(context.Context, *sql.TxOptions) (*sql.Tx, error), fn func(tx *wtx) error) (err error) {
	defer func() { err = busyError(err) }()
	tx, err := begin(ctx, nil)
	if err != nil {
		return err
	}
	t := &wtx{Tx: tx, db: db}
	defer func() {
		tx.Rollback()
		if len(t.missed) > 0 {
			// Off the caller's path: preparing waits for the writer
			// connection, which the next transaction may hold.
			go db.keep(context.WithoutCancel(ctx), t.missed)
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if t.indexed {
		db.merger.kick(db)
	}
	return nil
}

// wtx is a write transaction whose statements with arguments run prepared:
// SQLite takes longer to prepare most of them than to run them. A
// statement is prepared on the writer connection once and kept (db.kept);
// the first transaction that runs it prepares it for itself, and db.write
// keeps it when that transaction is over, because the writer connection,
// which the transaction holds, is the only one it can be prepared on.
// Statements without arguments (schema changes) are not kept.
type wtx struct {
	*sql.Tx
	db     *DB
	stmts  map[string]*sql.Stmt // this transaction's handles
	missed []string             // statements to keep after it
	// indexed: the transaction wrote a search segment (the merger is
	// told once it commits).
	indexed bool
}

func (tx *wtx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := tx.stmts[query]; ok {
		return s, nil
	}
	tx.db.keptMu.Lock()
	kept := tx.db.kept[query]
	tx.db.keptMu.Unlock()
	var s *sql.Stmt
	if kept != nil {
		s = tx.Tx.StmtContext(ctx, kept)
	} else {
		var err error
		if s, err = tx.Tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		tx.db.prepares.Add(1)
		tx.missed = append(tx.missed, query)
	}
	if tx.stmts == nil {
		tx.stmts = make(map[string]*sql.Stmt)
	}
	tx.stmts[query] = s
	return s, nil
}

// ExecContext runs query in the transaction, prepared when it has args.
func (tx *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if len(args) == 0 {
		return tx.Tx.ExecContext(ctx, query)
	}
	s, err := tx.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

// QueryContext runs query in the transaction, prepared when it has args.
func (tx *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if len(args) == 0 {
		return tx.Tx.QueryContext(ctx, query)
	}
	s, err := tx.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext runs query in the transaction, prepared when it has
// args. A statement that cannot be prepared reports its error through
// the row, as the transaction's own method does.
func (tx *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if len(args) == 0 {
		return tx.Tx.QueryRowContext(ctx, query)
	}
	s, err := tx.stmt(ctx, query)
	if err != nil {
		return tx.Tx.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// readPool is the reader pool, whose queries with arguments run prepared,
// as the writer's do (wtx): SQLite takes about as long to prepare most of
// them as to run them (a search runs a dozen; a page view that misses the
// caches, a few). Each is prepared on the pool once (stmt), and on each
// reader connection the first time it runs there; database/sql keeps it
// with the connection from then on.
type readPool struct {
	*sql.DB
	stmts    sync.Map // query text to *sql.Stmt
	n        atomic.Int64
	prepares atomic.Int64 // statements prepared to be kept (tests)
}

// QueryContext runs query on a reader connection, prepared when it has
// args.
func (p *readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query, len(args)); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query on a reader connection, prepared when it
// has args.
func (p *readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(ctx, query, len(args)); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

// The statements the reader pool keeps are bounded: at most maxReadStmts,
// each of at most maxReadStmtText bytes, the first ones run (a kept
// statement takes about 25 KB on each reader connection that ran it). The
// package's queries are constants but for their filters' placeholders
// (one per namespace asked for, of which a wiki has a few dozen); the
// queries of change lists, whose filters combine into many texts, run
// unkept (readChanges). Past the bounds a statement is prepared for its
// one run.
var maxReadStmts int64 = 128

const maxReadStmtText = 2048

// stmt returns query prepared on the pool, or nil when it runs unprepared:
// it has no arguments, it is past the bounds, or it did not prepare (its
// run then reports why). Preparing takes a connection of the pool for a
// moment: a caller holding one (a read transaction) uses kept instead.
func (p *readPool) stmt(ctx context.Context, query string, args int) *sql.Stmt {
	if s := p.kept(query, args); s != nil || !p.keepable(query, args) {
		return s
	}
	s, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.prepares.Add(1)
	if old, loaded := p.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return old.(*sql.Stmt)
	}
	p.n.Add(1)
	return s
}

// kept returns query's kept statement, or nil.
func (p *readPool) kept(query string, args int) *sql.Stmt {
	if args == 0 {
		return nil
	}
	if s, ok := p.stmts.Load(query); ok {
		return s.(*sql.Stmt)
	}
	return nil
}

// keepable reports whether query may be kept, bounds permitting.
func (p *readPool) keepable(query string, args int) bool {
	return args > 0 && len(query) <= maxReadStmtText && p.n.Load() < maxReadStmts
}

// rtx is a read transaction, whose queries with arguments run as the
// pool's kept statements (readPool). A query not kept yet runs unprepared
// and is prepared on the pool once the transaction has ended (end): the
// transaction holds a connection of the pool, and preparing on the pool
// meanwhile would wait for another, which with every connection held by
// such a transaction never comes.
type rtx struct {
	*sql.Tx
	r      *readPool
	missed []string
}

// beginRead begins a read transaction on the reader pool; end it with
// end.
func (db *DB) beginRead(ctx context.Context) (*rtx, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &rtx{Tx: tx, r: db.r}, nil
}

// end rolls the transaction back, then keeps the statements it missed.
func (tx *rtx) end(ctx context.Context) {
	tx.Rollback()
	for _, q := range tx.missed {
		tx.r.stmt(ctx, q, 1)
	}
	tx.missed = nil
}

// QueryContext runs query in the transaction, prepared when it has args.
func (tx *rtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := tx.lookup(query, len(args)); s != nil {
		return tx.Tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction, prepared when it has
// args.
func (tx *rtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := tx.lookup(query, len(args)); s != nil {
		return tx.Tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}

// lookup returns query's kept statement, or nil, noting a query to keep.
func (tx *rtx) lookup(query string, args int) *sql.Stmt {
	s := tx.r.kept(query, args)
	if s == nil && tx.r.keepable(query, args) && !slices.Contains(tx.missed, query) {
		tx.missed = append(tx.missed, query)
	}
	return s
}

// keep prepares queries on the writer connection, between transactions,
// for the next ones. The writer's statements are all constants of this
// package, so the map stays as small as the package's list of them.
func (db *DB) keep(ctx context.Context, queries []string) {
	for _, q := range queries {
		db.keptMu.Lock()
		done := db.kept[q] != nil
		db.keptMu.Unlock()
		if done {
			continue
		}
		s, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			continue // prepared again by the next transaction that runs it
		}
		db.keptMu.Lock()
		if db.kept == nil {
			db.kept = make(map[string]*sql.Stmt)
		}
		if db.kept[q] == nil {
			db.kept[q] = s
			s = nil
		}
		db.keptMu.Unlock()
		if s != nil {
			s.Close()
		}
	}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// now returns t, or the current time if t is zero, in UTC at ms precision.
func now(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Millisecond)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// notFound maps sql.ErrNoRows to wiki.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return wiki.ErrNotFound
	}
	return err
}

// limit clamps a listing's requested size.
func limit(n int) int {
	if n <= 0 {
		return 50
	}
	return min(n, 5000)
}
