// Package postgres implements wiki.Store on PostgreSQL (jackc/pgx v5), for
// several wikid nodes sharing one database.
//
// Concurrency is PostgreSQL's: transactions run at READ COMMITTED, a save
// locks its page row (SELECT … FOR UPDATE) before it checks the base
// revision, job leases take rows with FOR UPDATE SKIP LOCKED, upserts use
// ON CONFLICT, and a transaction that loses a serialization or deadlock
// race is run again (write). Statements are prepared once per connection
// by pgx's statement cache.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wikid/wikid/internal/wiki"
)

var _ wiki.Store = (*DB)(nil)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is a Wikid store in a PostgreSQL database.
type DB struct {
	pool *pgxpool.Pool
}

// Open connects to the database dsn names (a postgres:// URL or a
// key=value string, with pgxpool's pool_* settings) and applies any
// pending schema migrations; it refuses a database a newer wikid
// migrated.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: the database setting is not a valid PostgreSQL connection string (postgres://user:password@host:5432/name): %w", err)
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "wikid"
	if !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default (four, or one per CPU) is taken by a few
		// searches at once; saves and session lookups would wait.
		cfg.MaxConns = int32(max(defaultPool, 2*runtime.GOMAXPROCS(0)))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", redact(cfg), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s: %w", redact(cfg), err)
	}
	db := &DB{pool: pool}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", redact(cfg), err)
	}
	return db, nil
}

// defaultPool is the fewest connections a node's pool may open when the
// connection string does not say (pool_max_conns).
const defaultPool = 8

// redact names the server and database of cfg, without the password.
func redact(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("database %q on %s:%d", c.Database, c.Host, c.Port)
}

// Close closes every connection.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Pool returns the connection pool (for LISTEN and for tests).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// SchemaVersion returns the number of the last migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// migrateLock is the advisory lock key that serializes migrations of
// nodes starting at once.
const migrateLock = 0x77696b6964 // "wikid"

// migrate applies the migrations/NNNN_name.sql files not recorded as
// applied, each in its own transaction with its version row, under an
// advisory lock so that nodes starting together apply each once.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version integer PRIMARY KEY, applied bigint NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&have); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, known, err := migrationFiles()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if have > known {
		return fmt.Errorf("the database's schema is at version %d, newer than this wikid's (%d): run the wikid version that last opened it, or restore a backup made before", have, known)
	}
	// Every migration not recorded is applied, as SQLite's are, not only
	// those above the latest recorded: numbers merged out of order (one
	// branch's 13 after another's 15) still run.
	rows, err := conn.Query(ctx, `SELECT version FROM schema_version`)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range names {
		if slices.Contains(applied, int32(m.version)) {
			continue
		}
		body, err := migrations.ReadFile(m.name)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			if fill := backfills[m.version]; fill != nil {
				if err := fill(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version, applied) VALUES ($1, $2)`, m.version, time.Now().UnixMilli())
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", strings.TrimPrefix(m.name, "migrations/"), err)
		}
	}
	return nil
}

// backfills are the steps of migrations that SQL cannot take, by
// version: each runs after its migration's script, in its transaction.
var backfills = map[int]func(context.Context, pgx.Tx) error{
	12: backfillSortKeys,
}

// backfillSortKeys gives the category rows that migration 12 found the
// sort keys an old wikid's rows stand for: their pages' default keys
// (wiki.Title.DefaultSortKey), and whether their pages are categories.
// A thousand pages per round trip, in ID order.
func backfillSortKeys(ctx context.Context, tx pgx.Tx) error {
	const batch = 1000
	for after := int64(0); ; {
		rows, err := tx.Query(ctx, `SELECT id, title FROM pages p WHERE id > $1
			AND EXISTS (SELECT 1 FROM links WHERE from_page = p.id AND kind = 'category') ORDER BY id LIMIT $2`, after, batch)
		if err != nil {
			return err
		}
		var ids []int64
		var keys []string
		var subcats []bool
		var id int64
		var title string
		_, err = pgx.ForEachRow(rows, []any{&id, &title}, func() error {
			t := wiki.Title(title)
			ids, keys, subcats = append(ids, id), append(keys, wiki.StoredSortKey(t.DefaultSortKey(), t)), append(subcats, t.IsSubcategory())
			return nil
		})
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE links l SET sortkey = u.sortkey, subcat = u.subcat
			FROM unnest($1::bigint[], $2::text[], $3::boolean[]) AS u(id, sortkey, subcat)
			WHERE l.from_page = u.id AND l.kind = 'category'`, ids, keys, subcats); err != nil {
			return err
		}
		after = ids[len(ids)-1]
	}
}

type migration struct {
	version int
	name    string
}

// migrationFiles lists the embedded migrations in order and the highest
// version.
func migrationFiles() ([]migration, int, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(names)
	var out []migration
	latest := 0
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: name must start with a number", base)
		}
		out = append(out, migration{v, name})
		latest = max(latest, v)
	}
	return out, latest, nil
}

// LatestMigration is the schema version this wikid migrates to.
func LatestMigration() int {
	_, v, _ := migrationFiles()
	return v
}

// maxAttempts is how many times write runs a transaction that lost a
// serialization or deadlock race.
const maxAttempts = 5

// writeTx is every write transaction's isolation: READ COMMITTED, whatever
// the database's default (default_transaction_isolation), as the store
// is written for it: each statement sees what committed before it began,
// which the purge log's numbering after its lock relies on, and the locks
// taken (FOR UPDATE) settle the races a snapshot would turn into errors.
var writeTx = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// write runs fn in a transaction and commits if fn returns nil. A
// transaction that fails with a serialization failure or a deadlock is
// run again from the start, up to maxAttempts times; fn must not keep
// state across attempts other than through its return.
func (db *DB) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = pgx.BeginTxFunc(ctx, db.pool, writeTx, fn)
		if err == nil || attempt == maxAttempts || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

// writeRetrying runs write and, while fn breaks the unique constraint
// (a row another transaction inserted after fn looked), runs it again, up
// to maxAttempts times in all.
func (db *DB) writeRetrying(ctx context.Context, constraint string, fn func(tx pgx.Tx) error) error {
	var err error
	for range maxAttempts {
		if err = db.write(ctx, fn); !isUnique(err, constraint) {
			return err
		}
	}
	return err
}

// retryable reports a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// isUnique reports a unique-constraint violation, of constraint if it is
// not empty.
func isUnique(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && (constraint == "" || pe.ConstraintName == constraint)
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

// notFound maps pgx.ErrNoRows to wiki.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
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

// Describe names the database dsn points at, without its password.
func Describe(dsn string) string {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return "(an invalid connection string)"
	}
	return redact(cfg)
}

// Identity names the database this store is connected to whatever the
// connection string said: the server (by the instant it started) and the
// database's OID in it.
func (db *DB) Identity(ctx context.Context) (string, error) {
	var id string
	err := db.pool.QueryRow(ctx, `SELECT pg_postmaster_start_time()::text || ' ' || d.oid::text
		FROM pg_database d WHERE d.datname = current_database()`).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("postgres: identify the database: %w", err)
	}
	return id, nil
}
