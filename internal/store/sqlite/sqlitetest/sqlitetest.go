// Package sqlitetest opens SQLite stores for tests: the tests of any
// package that needs a real store import it, and the wikid binary does not.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wikid/wikid/internal/store/sqlite"
)

// Open opens a fresh database in tb.TempDir() and closes it when the test
// ends.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "wikid.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}
