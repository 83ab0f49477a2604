// Placeholders until this part of the store is written: each returns
// errors.ErrUnsupported.
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/wikid/wikid/internal/wiki"
)

var _ = time.Time{}

func (db *DB) History(_ context.Context, _ wiki.HistoryQuery) ([]wiki.Revision, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) RecentChanges(_ context.Context, _ wiki.ChangeQuery) ([]wiki.Change, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) AllPages(_ context.Context, _ wiki.ListQuery) ([]wiki.Page, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) Backlinks(_ context.Context, _ wiki.Title, _ wiki.ListQuery) ([]wiki.Page, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) CategoryMembers(_ context.Context, _ wiki.Title, _ wiki.ListQuery) ([]wiki.Page, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) PageCategories(_ context.Context, _ int64) ([]wiki.Title, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) Search(_ context.Context, _ string, _, _ int) ([]wiki.SearchHit, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) SearchTitles(_ context.Context, _ string, _ int) ([]wiki.Page, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) RandomPage(_ context.Context) (wiki.Title, error) {
	return "", errors.ErrUnsupported
}

func (db *DB) PageCount(_ context.Context) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) UpdateSearchIndex(_ context.Context, _ int64, _ func(source string) string) error {
	return errors.ErrUnsupported
}
