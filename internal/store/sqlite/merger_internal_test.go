package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestMergePlan(t *testing.T) {
	seg := func(id, docs, live int64) segmentLive { return segmentLive{id: id, docs: docs, live: live} }
	for _, tc := range []struct {
		name string
		segs []segmentLive
		want []int64
	}{
		{"nothing to do", []segmentLive{seg(1, 1000, 1000), seg(2, 8000, 8000)}, nil},
		{"eight of a tier, the smallest tier first", []segmentLive{
			seg(1, 1, 1), seg(2, 1, 1), seg(3, 1, 1), seg(4, 1, 1), seg(5, 1, 1), seg(6, 1, 1), seg(7, 1, 1), seg(8, 1, 1),
			seg(9, 900, 900), seg(10, 900, 900), seg(11, 900, 900), seg(12, 900, 900), seg(13, 900, 900), seg(14, 900, 900), seg(15, 900, 900), seg(16, 900, 900),
		}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"at most sixteen at once", func() []segmentLive {
			var s []segmentLive
			for i := range 20 {
				s = append(s, seg(int64(20-i), 3, 3))
			}
			return s
		}(), []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{"the tier counts current entries, not stale ones", []segmentLive{
			seg(1, 5000, 2), seg(2, 2, 2), seg(3, 2, 2), seg(4, 2, 2), seg(5, 2, 2), seg(6, 2, 2), seg(7, 2, 2), seg(8, 2, 2),
		}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"a segment mostly stale is rewritten alone", []segmentLive{seg(1, 1000, 1000), seg(2, 4000, 1500)}, []int64{2}},
		{"one barely stale is left", []segmentLive{seg(2, 4000, 2500)}, nil},
	} {
		if got := mergePlan(tc.segs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: plan %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A MergeSearch waiting for its turn behind a merge under way (the
// merger's) stops when its context ends: `wikid import` interrupted does
// not wait for the merger's merge.
func TestMergeSearchTurnEndsWithContext(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "wikid.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.mergeTurn <- struct{}{} // a merge under way
	defer func() { <-db.mergeTurn }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.MergeSearch(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("MergeSearch behind a merge under way, its context ended: %v, want context.Canceled", err)
	}
}
