package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/postgres/pgtest"
	"github.com/wikid/wikid/internal/store/storetest"
	"github.com/wikid/wikid/internal/wiki"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The contract suite every backend runs, on a real PostgreSQL.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) wiki.Store { return pgtest.Open(t) })
}

// Both engines migrate along one numbered list: the PostgreSQL schema
// starts at the SQLite one's version, and every later number is in both.
func TestMigrationsFollowOneList(t *testing.T) {
	nums := func(dir string) []int {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, e := range ents {
			n, _, _ := strings.Cut(e.Name(), "_")
			v, err := strconv.Atoi(n)
			if err != nil || !strings.HasSuffix(e.Name(), ".sql") {
				t.Fatalf("%s: a migration's name is NNNN_name.sql", filepath.Join(dir, e.Name()))
			}
			out = append(out, v)
		}
		sort.Ints(out)
		return out
	}
	lite, pg := nums("../sqlite/migrations"), nums("migrations")
	if lite[len(lite)-1] != pg[len(pg)-1] || postgres.LatestMigration() != pg[len(pg)-1] {
		t.Fatalf("latest migration: SQLite %d, PostgreSQL %d (embedded %d): add the same number to both",
			lite[len(lite)-1], pg[len(pg)-1], postgres.LatestMigration())
	}
	for _, v := range pg[1:] {
		if _, ok := sort.Find(len(lite), func(i int) int { return v - lite[i] }); !ok {
			t.Errorf("PostgreSQL migration %04d has no SQLite migration of that number", v)
		}
	}
}

// A database a newer wikid migrated is refused before anything changes.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO schema_version (version, applied) VALUES (9999, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = postgres.Open(ctx, dsn)
	if err == nil || !strings.Contains(err.Error(), "newer than this wikid") {
		t.Fatalf("opening a newer schema: %v", err)
	}
}

// The sort key migration gives the category rows an older wikid wrote
// their pages' default keys, in its transaction.
func TestSortKeyBackfill(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	storetest.SortKeyBackfill(t, db, func(t *testing.T) wiki.Store {
		if _, err := db.Pool().Exec(ctx, `DROP INDEX links_category;
			ALTER TABLE links DROP COLUMN sortkey, DROP COLUMN subcat;
			DELETE FROM schema_version WHERE version = 12`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if db, err = postgres.Open(ctx, dsn); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}
