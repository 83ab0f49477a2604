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

func (db *DB) FindPage(_ context.Context, _ wiki.Title) (wiki.Page, error) {
	return wiki.Page{}, errors.ErrUnsupported
}

func (db *DB) FindPageByID(_ context.Context, _ int64) (wiki.Page, error) {
	return wiki.Page{}, errors.ErrUnsupported
}

func (db *DB) FindRevision(_ context.Context, _ int64) (wiki.Revision, error) {
	return wiki.Revision{}, errors.ErrUnsupported
}

func (db *DB) ExistingTitles(_ context.Context, _ []wiki.Title) (map[wiki.Title]bool, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) SavePage(_ context.Context, _ wiki.SaveRequest) (wiki.SaveResult, error) {
	return wiki.SaveResult{}, errors.ErrUnsupported
}

func (db *DB) ImportPages(_ context.Context, _ []wiki.SaveRequest) ([]wiki.SaveResult, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) MovePage(_ context.Context, _ wiki.MoveRequest) (wiki.Page, error) {
	return wiki.Page{}, errors.ErrUnsupported
}

func (db *DB) DeletePage(_ context.Context, _ wiki.Title, _ int64, _, _ string, _ time.Time, _ ...wiki.JobSpec) error {
	return errors.ErrUnsupported
}

func (db *DB) UndeletePage(_ context.Context, _ wiki.Title, _ int64, _, _ string, _ time.Time, _ ...wiki.JobSpec) (wiki.Page, error) {
	return wiki.Page{}, errors.ErrUnsupported
}

func (db *DB) FindProtection(_ context.Context, _ wiki.Title) (wiki.Protection, error) {
	return wiki.Protection{}, errors.ErrUnsupported
}

func (db *DB) ProtectPage(_ context.Context, _ wiki.ProtectRequest) (string, error) {
	return "", errors.ErrUnsupported
}

func (db *DB) Log(_ context.Context, _ wiki.LogQuery) ([]wiki.LogEntry, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) RefreshLinks(_ context.Context, _, _ int64, _ wiki.LinkSet) (bool, error) {
	return false, errors.ErrUnsupported
}
