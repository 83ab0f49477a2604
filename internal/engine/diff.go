package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/maypok86/otter/v2"

	"github.com/wikid/wikid/internal/diff"
	"github.com/wikid/wikid/internal/wiki"
)

// diffMemBytes bounds the memory of computed comparisons. The largest one,
// for two revisions at the size limit, holds its rows and its HTML table,
// each capped near diff.DefaultMaxBytes: the budget keeps a few of those and
// thousands of ordinary ones.
const diffMemBytes = 32 << 20

// diffKey names a comparison: revision texts never change, so the
// comparison of two revisions changes only with the diff code's Version.
// Nothing invalidates an entry; deleting a page hides its revisions before
// any comparison is looked up.
type diffKey struct {
	old, new int64
	version  int
}

// diffCache holds computed comparisons, bounded by bytes with W-TinyLFU
// admission, so one-off comparisons do not push out the popular ones.
// Concurrent requests for one pair wait for a single computation (otter's
// Get loads each key once at a time). It holds viewer-independent data
// only: the diff page around it is built per request.
type diffCache struct {
	once     sync.Once
	c        *otter.Cache[diffKey, *diff.Result]
	computed atomic.Int64 // comparisons computed, for tests
}

func (dc *diffCache) cache() *otter.Cache[diffKey, *diff.Result] {
	dc.once.Do(func() {
		dc.c = otter.Must(&otter.Options[diffKey, *diff.Result]{
			MaximumWeight: diffMemBytes,
			Weigher: func(_ diffKey, r *diff.Result) uint32 {
				return uint32(min(r.Size(), 1<<31))
			},
		})
	})
	return dc.c
}

// Diff returns the comparison of revision old with revision new (old may be
// the zero Revision: the page's creation). It is computed once per pair and
// kept; a revision's text is read from the store when it was not loaded.
func (e *Engine) Diff(ctx context.Context, old, new wiki.Revision) (*diff.Result, error) {
	key := diffKey{old: old.ID, new: new.ID, version: diff.Version}
	return e.diffs.cache().Get(ctx, key, otter.LoaderFunc[diffKey, *diff.Result](func(ctx context.Context, _ diffKey) (*diff.Result, error) {
		// Requests waiting for this load share its result: a client that
		// goes away must not fail them.
		ctx = context.WithoutCancel(ctx)
		var err error
		if old, err = e.withText(ctx, old); err != nil {
			return nil, err
		}
		if new, err = e.withText(ctx, new); err != nil {
			return nil, err
		}
		// A comparison grows with the texts as a render does: it takes a
		// slot of the render gate.
		release, err := e.gate.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		e.diffs.computed.Add(1)
		return diff.Compare(old.Text, new.Text, diff.Options{}), nil
	}))
}

// DiffsComputed counts the comparisons Diff computed (not found in its
// cache), for tests.
func (e *Engine) DiffsComputed() int64 { return e.diffs.computed.Load() }

// withText returns rev with its text, reading it when it was not loaded.
func (e *Engine) withText(ctx context.Context, rev wiki.Revision) (wiki.Revision, error) {
	if rev.ID == 0 || rev.Text != "" || rev.Size == 0 {
		return rev, nil
	}
	return e.store.FindRevision(ctx, rev.ID)
}

// DiffText compares two texts of which one is not a stored revision (an
// edit proposed on top of the latest one), in a slot of the render gate.
// Nothing is kept: the texts have no revision IDs to key it by.
func (e *Engine) DiffText(ctx context.Context, old, new string) (*diff.Result, error) {
	release, err := e.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return diff.Compare(old, new, diff.Options{}), nil
}
