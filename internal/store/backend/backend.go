// Package backend opens the store a configuration names: the embedded
// SQLite file in the data directory (the default), or a PostgreSQL
// database shared by several wikid nodes.
package backend

import (
	"context"
	"fmt"
	"os"

	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/store/postgres"
	"github.com/wikid/wikid/internal/store/sqlite"
	"github.com/wikid/wikid/internal/wiki"
)

// DB is a store and what the commands ask of any engine.
type DB interface {
	wiki.Store
	// SchemaVersion is the number of the last migration applied.
	SchemaVersion(ctx context.Context) (int, error)
}

var (
	_ DB = (*sqlite.DB)(nil)
	_ DB = (*postgres.DB)(nil)
)

// Open opens cfg's store, applying pending migrations; it creates the
// data directory for SQLite. cfg must be valid.
func Open(ctx context.Context, cfg config.Config) (DB, error) {
	if cfg.Postgres() {
		return postgres.Open(ctx, cfg.Database)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
	}
	return sqlite.Open(ctx, cfg.DBPath())
}

// Describe names cfg's store for messages, without a password.
func Describe(cfg config.Config) string {
	if cfg.Postgres() {
		return "the PostgreSQL database " + postgres.Describe(cfg.Database)
	}
	return "the SQLite database " + cfg.DBPath()
}
