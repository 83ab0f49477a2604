package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// MustOpen opens a fresh database in tb.TempDir() and closes it when the
// test ends. For tests of any package that needs a real store.
func MustOpen(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "wikid.db"))
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
