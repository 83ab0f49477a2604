package sqlite

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wikid/wikid/internal/search"
)

// Merging search segments. Every indexing transaction adds a segment (an
// edit, a segment of one page), so that segments are merged as they
// accumulate, as in an LSM tree: segments of about the same size (the same
// tier, by powers of mergeFanout of their current entries) are merged
// together once there are mergeFanout of them, and a segment most of
// whose entries are stale is rewritten alone. A query then reads a few
// segments per tier.
//
// A merge reads its segments without holding the writer, writes the new
// segment's blocks in transactions of their own under a segment row in
// state 1 (which no query reads), then in one transaction checks that the
// merged segments are still live, moves their pages' current entries to
// the new segment and drops them. A page indexed meanwhile names a newer
// segment and is left alone; a process that dies mid-merge leaves a state
// 1 segment, removed by the next merge after an hour.

const (
	mergeFanout = 8
	// mergeChunk: the merged segment's blocks are written this many
	// bytes per transaction, so that a merge holds the writer briefly.
	mergeChunk = 4 << 20
	// mergeBacklog: how many chunks a merge keeps merging ahead of its
	// writes (mergeWriter), beside the one being written and the one
	// being filled: a merge holds up to 40 MB of blocks.
	mergeBacklog = 8
	// abandonedAfter: a segment still being written after this long was
	// left by a process that stopped.
	abandonedAfter = time.Hour
)

// merger runs merges on one goroutine, woken by kick.
type merger struct {
	mu      sync.Mutex
	started bool
	closed  bool
	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

// kick tells the merger there may be work; the first kick starts it.
func (m *merger) kick(db *DB) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if !m.started {
		m.started = true
		m.wake = make(chan struct{}, 1)
		m.done = make(chan struct{})
		var ctx context.Context
		ctx, m.cancel = context.WithCancel(context.Background())
		go m.run(ctx, db)
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// close stops the merger, abandoning a merge under way.
func (m *merger) close() {
	m.mu.Lock()
	m.closed = true
	started := m.started
	m.mu.Unlock()
	if started {
		m.cancel()
		<-m.done
	}
}

func (m *merger) run(ctx context.Context, db *DB) {
	defer close(m.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		if err := db.MergeSearch(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("sqlite: merging search segments", "err", err)
		}
	}
}

// MergeSearch runs the merges there are to run now, and returns when
// none is left: a bulk import ends with it. The background merger's merges
// take turns with its own; another process may run one meanwhile (each
// merge checks that its segments are still live).
func (db *DB) MergeSearch(ctx context.Context) error {
	for {
		merged, err := db.mergeSearch(ctx)
		if err != nil {
			return fmt.Errorf("sqlite: merge the search index: %w", err)
		}
		if !merged {
			return nil
		}
	}
}

// segmentLive is a live segment with its count of current entries.
type segmentLive struct {
	id, docs, live int64
}

// tier is a segment's size class.
func tier(live int64) int {
	if live <= 1 {
		return 0
	}
	return (bits.Len64(uint64(live-1)) + 2) / 3 // log8, rounded up
}

// mergePlan picks the segments to merge next: the smallest tier holding
// mergeFanout segments or more (those of it, up to twice that), else a
// segment mostly stale; nil when there is nothing to do.
func mergePlan(segs []segmentLive) []int64 {
	byTier := map[int][]segmentLive{}
	for _, s := range segs {
		byTier[tier(s.live)] = append(byTier[tier(s.live)], s)
	}
	tiers := make([]int, 0, len(byTier))
	for t := range byTier {
		tiers = append(tiers, t)
	}
	slices.Sort(tiers)
	for _, t := range tiers {
		if ss := byTier[t]; len(ss) >= mergeFanout {
			slices.SortFunc(ss, func(a, b segmentLive) int { return cmp.Compare(a.id, b.id) })
			ids := make([]int64, 0, 2*mergeFanout)
			for _, s := range ss[:min(len(ss), 2*mergeFanout)] {
				ids = append(ids, s.id)
			}
			return ids
		}
	}
	for _, s := range segs {
		if s.docs >= 2*mergeFanout && s.live*2 < s.docs {
			return []int64{s.id}
		}
	}
	return nil
}

// mergeSearch runs one merge, if there is one to run. The merges of one
// process run one at a time (mergeTurn): MergeSearch beside the merger
// would otherwise plan the merge the merger is running, and run it again
// for nothing (the second to finish finds its segments gone). Waiting
// for its turn ends with ctx.
func (db *DB) mergeSearch(ctx context.Context) (bool, error) {
	select {
	case db.mergeTurn <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-db.mergeTurn }()
	if err := db.write(ctx, func(tx *wtx) error {
		// Segments a stopped process left half written.
		_, err := tx.ExecContext(ctx, `DELETE FROM search_blocks WHERE seg IN (SELECT id FROM search_segments WHERE state = 1 AND created < ?)`,
			time.Now().Add(-abandonedAfter).UnixMilli())
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM search_segments WHERE state = 1 AND created < ?`, time.Now().Add(-abandonedAfter).UnixMilli())
		}
		return err
	}); err != nil {
		return false, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT s.id, s.docs, (SELECT count(*) FROM pages p WHERE p.search_seg = s.id AND p.search_seg <> 0) FROM search_segments s WHERE s.state = 0`)
	if err != nil {
		return false, err
	}
	var segs []segmentLive
	for rows.Next() {
		var s segmentLive
		if err := rows.Scan(&s.id, &s.docs, &s.live); err != nil {
			rows.Close()
			return false, err
		}
		segs = append(segs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	ids := mergePlan(segs)
	if ids == nil {
		return false, nil
	}
	if err := db.mergeSegments(ctx, ids); err != nil {
		return false, fmt.Errorf("merge segments %v: %w", ids, err)
	}
	return true, nil
}

// mergeSegments merges the segments ids into a new one.
func (db *DB) mergeSegments(ctx context.Context, ids []int64) error {
	idList, _ := json.Marshal(ids)
	// The pages whose current entry the segments hold.
	current := map[int64]int64{} // page → segment
	rows, err := db.r.QueryContext(ctx, `SELECT id, search_seg FROM pages WHERE search_seg <> 0 AND search_seg IN (SELECT value FROM json_each(?))`, string(idList))
	if err != nil {
		return err
	}
	for rows.Next() {
		var page, seg int64
		if err := rows.Scan(&page, &seg); err != nil {
			rows.Close()
			return err
		}
		current[page] = seg
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	pages := make([]int64, 0, len(current))
	for p := range current {
		pages = append(pages, p)
	}
	slices.Sort(pages)
	number := make(map[int64]int64, len(pages)) // page → its document number
	var docmap []byte
	prev := int64(0)
	for i, p := range pages {
		number[p] = int64(i + 1)
		docmap = binary.AppendVarint(docmap, p-prev)
		prev = p
	}
	// Each merged segment's document numbers, mapped to the new one's (0:
	// a stale entry, dropped).
	renumber := make([][]int64, len(ids))
	lens := make([][]int32, len(ids)) // each merged segment's lengths (segment.lens)
	for i, id := range ids {
		seg, err := db.segcache.segment(ctx, db.r, id)
		if errors.Is(err, search.ErrCorrupt) {
			return db.rebuildSegment(ctx, id, err) // its docmap or lens does not decode
		}
		if err != nil {
			return err
		}
		lens[i] = seg.lens
		renumber[i] = make([]int64, len(seg.pages))
		for doc, p := range seg.pages {
			if doc > 0 && current[p] == id {
				renumber[i][doc] = number[p]
			}
		}
	}
	var newID int64
	if len(pages) > 0 {
		if err := db.write(ctx, func(tx *wtx) error {
			return tx.QueryRowContext(ctx, `INSERT INTO search_segments (state, docs, tokens, max_page, docmap, created) VALUES (1, ?, 0, ?, ?, ?) RETURNING id`,
				len(pages), pages[len(pages)-1], docmap, time.Now().UnixMilli()).Scan(&newID)
		}); err != nil {
			return err
		}
	}
	out := db.newMergeWriter(ctx, newID)
	srcs := make([]search.BlockSource, len(ids))
	for i, id := range ids {
		srcs[i] = db.blockSource(ctx, id)
	}
	// The merge takes a core from an import's writer's share
	// (ShareCores), and gives it back at every chunk it queues
	// (mergeWriter.send).
	db.cores.Acquire()
	seg, err := search.Merge(srcs, len(pages), func(i int, doc int64) int64 {
		if doc <= 0 || doc >= int64(len(renumber[i])) {
			return 0
		}
		return renumber[i][doc]
	}, func(i int, doc int64) int32 {
		if doc <= 0 || doc >= int64(len(lens[i])) {
			return 0
		}
		return lens[i][doc]
	}, out.add)
	db.cores.Release()
	if werr := out.close(err == nil); err == nil {
		err = werr
	}
	if se := (*search.SegmentError)(nil); errors.As(err, &se) && errors.Is(err, search.ErrCorrupt) {
		// A segment that does not decode is rebuilt from its pages,
		// rather than stall every merge of its tier.
		db.dropSegment(newID)
		return db.rebuildSegment(ctx, ids[se.Index], err)
	}
	if err != nil {
		db.dropSegment(newID)
		return err
	}
	err = db.write(ctx, func(tx *wtx) error {
		// A newer wikid may have migrated the database since this process
		// opened it, and written segments in a format this one cannot
		// read whole: a merge would drop what it does not know.
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return err
		}
		if version > latestMigration() {
			return fmt.Errorf("sqlite: a newer wikid migrated the database to schema version %d (this one knows %d): merges stop; restart every process on this data folder with the newer wikid", version, latestMigration())
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM search_segments WHERE state = 0 AND id IN (SELECT value FROM json_each(?))`, string(idList)).Scan(&n); err != nil {
			return err
		}
		if n != len(ids) {
			return errMergeLost
		}
		if newID != 0 {
			// The new segment must still be there, whole: another process
			// removes a segment in state 1 it takes for abandoned (this
			// merge ran past abandonedAfter, or its clock is ahead), and
			// pages moved to a segment that is gone would not be found.
			res, err := tx.ExecContext(ctx, `UPDATE search_segments SET state = 0, tokens = ?, lens = ? WHERE id = ? AND state = 1`, seg.Tokens, encodeLens(seg.Lens), newID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return errMergeRemoved
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET search_seg = ? WHERE search_seg <> 0 AND search_seg IN (SELECT value FROM json_each(?))`, newID, string(idList)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_blocks WHERE seg IN (SELECT value FROM json_each(?))`, string(idList)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM search_segments WHERE id IN (SELECT value FROM json_each(?))`, string(idList))
		return err
	})
	if err == errMergeLost {
		db.dropSegment(newID) // another process merged them first
		return nil
	}
	if err != nil {
		db.dropSegment(newID)
	}
	return err
}

// mergeWriter writes a merge's blocks under its new segment, mergeChunk
// bytes a transaction, one transaction at a time on a goroutine of its
// own, so that the merge goes on while a chunk waits for the writer. An
// import's batch holds the writer for seconds: a merge that waited for
// each of its chunks in turn finished seconds after the import's last
// batch (of 57 s at 100,000 pages, 13 to 16 s of a merge's 19 to 20 were
// spent waiting), and the import waits for it. Up to mergeBacklog chunks
// wait for the writer; the merge waits beyond that.
type mergeWriter struct {
	db      *DB
	pending []search.Block // the chunk being filled
	size    int            // its bytes
	chunks  chan []search.Block
	done    chan struct{} // closed when the writes are over
	failed  chan struct{} // closed at the first write that fails (err)
	err     error
	dropped atomic.Bool // the merge failed: the chunks left are not written
}

func (db *DB) newMergeWriter(ctx context.Context, seg int64) *mergeWriter {
	w := &mergeWriter{db: db, chunks: make(chan []search.Block, mergeBacklog), done: make(chan struct{}), failed: make(chan struct{})}
	go func() {
		defer close(w.done)
		for chunk := range w.chunks {
			if w.err != nil || w.dropped.Load() {
				continue // the merge stops at its next block, or has
			}
			w.err = db.write(ctx, func(tx *wtx) error {
				for _, b := range chunk {
					if _, err := tx.ExecContext(ctx, `INSERT INTO search_blocks (seg, first, data) VALUES (?, ?, ?)`, seg, b.First, b.Data); err != nil {
						return err
					}
				}
				// created doubles as a heartbeat: a long merge that is
				// still writing is not taken for abandoned by another
				// process.
				_, err := tx.ExecContext(ctx, `UPDATE search_segments SET created = ? WHERE id = ?`, time.Now().UnixMilli(), seg)
				return err
			})
			if w.err != nil {
				close(w.failed)
			}
		}
	}()
	return w
}

// add takes the merge's next block (search.Merge's emit).
func (w *mergeWriter) add(b search.Block) error {
	select {
	case <-w.failed:
		return w.err
	default:
	}
	w.pending = append(w.pending, b)
	w.size += len(b.Data)
	if w.size < mergeChunk {
		return nil
	}
	w.send()
	return nil
}

// send queues the chunk being filled. The merge gives its core back at
// every chunk, as work that feeds an import's writer takes cores in
// short pieces (cores.Gate): the batch's segment build, which the batch
// holding the writer waits for, gets a core after the merge's next chunk,
// not once its backlog is full. It waits without its core when the
// backlog is full.
func (w *mergeWriter) send() {
	if len(w.pending) == 0 {
		return
	}
	w.db.cores.Release()
	w.chunks <- w.pending // the goroutine takes every chunk, failed or not
	w.db.cores.Acquire()
	w.pending, w.size = nil, 0
}

// close writes the last chunk when the merge went well (ok), or else
// drops the chunks not yet written, waits for the writes, and returns the
// first that failed.
func (w *mergeWriter) close(ok bool) error {
	if !ok {
		w.dropped.Store(true)
	} else if len(w.pending) > 0 {
		w.chunks <- w.pending // the merge holds no core now
	}
	close(w.chunks)
	<-w.done
	return w.err
}

var errMergeLost = fmt.Errorf("sqlite: the segments were merged by another process")

// errMergeRemoved: the segment a merge was writing was removed as
// abandoned before it was published; the merged segments stay live.
var errMergeRemoved = fmt.Errorf("sqlite: the merged segment was removed (taken for abandoned) before it was published")

// rebuildSegment removes segment id, which cause says does not decode,
// and queues a search job for each page it held the entry of: they are
// searchable again once their jobs have run.
func (db *DB) rebuildSegment(ctx context.Context, id int64, cause error) error {
	slog.Error("sqlite: a search segment does not decode; its pages are indexed again", "segment", id, "err", cause)
	err := db.write(ctx, func(tx *wtx) error {
		if _, err := queueSearchJobs(ctx, tx, `search_seg = ? AND search_seg <> 0`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET search_rev = 0, search_seg = 0 WHERE search_seg = ? AND search_seg <> 0`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_blocks WHERE seg = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM search_segments WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("rebuild search segment %d: %w", id, err)
	}
	return nil
}

// dropSegment removes a segment a merge did not finish.
func (db *DB) dropSegment(id int64) {
	if id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_blocks WHERE seg = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM search_segments WHERE id = ? AND state = 1`, id)
		return err
	})
	if err != nil {
		slog.Warn("sqlite: dropping an unfinished search segment (the next merge after an hour will)", "segment", id, "err", err)
	}
}

// blockSource reads segment seg's blocks in order, a few per query.
func (db *DB) blockSource(ctx context.Context, seg int64) search.BlockSource {
	var buf [][]byte
	after, done := "", false
	first := true
	return func() ([]byte, error) {
		if len(buf) == 0 && !done {
			cond := `first > ?`
			if first {
				cond = `first >= ?`
				first = false
			}
			rows, err := db.r.QueryContext(ctx, `SELECT first, data FROM search_blocks WHERE seg = ? AND `+cond+` ORDER BY first LIMIT 16`, seg, after)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			for rows.Next() {
				var data []byte
				if err := rows.Scan(&after, &data); err != nil {
					return nil, err
				}
				buf = append(buf, data)
			}
			if err := rows.Err(); err != nil {
				return nil, err
			}
			done = len(buf) < 16
		}
		if len(buf) == 0 {
			return nil, nil
		}
		b := buf[0]
		buf = buf[1:]
		return b, nil
	}
}
