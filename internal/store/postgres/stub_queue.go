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

func (db *DB) EnqueueJobs(_ context.Context, _ []wiki.JobSpec) error {
	return errors.ErrUnsupported
}

func (db *DB) LeaseJobs(_ context.Context, _ string, _ int, _ time.Duration, _ time.Time) ([]wiki.Job, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) CompleteJob(_ context.Context, _ int64) error {
	return errors.ErrUnsupported
}

func (db *DB) FailJob(_ context.Context, _ int64, _ string, _ time.Time, _ bool) error {
	return errors.ErrUnsupported
}

func (db *DB) ListJobs(_ context.Context, _ wiki.JobState, _ int) ([]wiki.Job, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) JobStats(_ context.Context) (wiki.JobStats, error) {
	return wiki.JobStats{}, errors.ErrUnsupported
}

func (db *DB) RetryJob(_ context.Context, _ int64) error {
	return errors.ErrUnsupported
}

func (db *DB) DeleteDoneJobs(_ context.Context, _ time.Time) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) TrimChanges(_ context.Context, _ time.Time) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) AppendPurges(_ context.Context, _ []wiki.PurgeEvent) error {
	return errors.ErrUnsupported
}

func (db *DB) PurgesAfter(_ context.Context, _ int64, _ int) ([]wiki.PurgeEvent, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) LastPurge(_ context.Context) (int64, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) TrimPurges(_ context.Context, _ time.Time) (int, error) {
	return 0, errors.ErrUnsupported
}

func (db *DB) FindRender(_ context.Context, _ int64, _ int) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

func (db *DB) SaveRender(_ context.Context, _ int64, _ int, _ []byte) error {
	return errors.ErrUnsupported
}

func (db *DB) DeleteRenders(_ context.Context, _ []int64) error {
	return errors.ErrUnsupported
}
