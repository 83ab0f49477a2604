package sqlite

import (
	"container/list"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/wikid/wikid/internal/search"
)

// segcache keeps what searches read of search segments, which never
// change once live (and whose IDs are never used twice): each segment's
// docmap, its documents' lengths and the first key of each of its blocks,
// so that finding a key's block is a binary search; the blocks read last,
// up to blockCacheBytes; and where long lists' positions can be entered
// (search.Skips). A search that finds its blocks here makes
// no query of the index at all.
type segcache struct {
	mu     sync.Mutex
	segs   map[int64]*segment
	blocks map[blockKey]*list.Element // of lru
	lru    list.List                  // *cachedBlock, most recent first
	skips  map[skipKey]cachedSkips    // of long lists read by phrases
	// skipBytes: what skips take, up to skipsCacheBytes
	skipBytes int
	bytes     int
}

// blockCacheBytes bounds the blocks kept.
const blockCacheBytes = 32 << 20

// segment is a segment as searches read it.
type segment struct {
	id     int64
	pages  []int64  // page ID by document number (pages[0] unused)
	lens   []int32  // length by document number, as pages; nil for a segment written before its lens
	firsts []string // each block's first key, in order
	// ordered: its documents are numbered in page order, so that the
	// highest numbers are the newest pages (an import batch's are in the
	// order of its requests until a merge, and an import updates pages of
	// any age).
	ordered bool
}

type blockKey struct {
	seg int64
	i   int
}

type cachedBlock struct {
	key  blockKey
	data []byte
}

// blockOf returns the index of the block that would hold key, or -1.
func (s *segment) blockOf(key string) int {
	return sort.Search(len(s.firsts), func(i int) bool { return s.firsts[i] > key }) - 1
}

// segment returns segment id, reading it the first time.
func (c *segcache) segment(ctx context.Context, r querier, id int64) (*segment, error) {
	c.mu.Lock()
	seg := c.segs[id]
	c.mu.Unlock()
	if seg != nil {
		return seg, nil
	}
	seg = &segment{id: id}
	var blob, lens []byte
	if err := r.QueryRowContext(ctx, `SELECT docmap, lens FROM search_segments WHERE id = ?`, id).Scan(&blob, &lens); err != nil {
		return nil, err
	}
	seg.pages = []int64{0}
	prev := int64(0)
	for len(blob) > 0 {
		v, k := binary.Varint(blob)
		if k <= 0 {
			return nil, search.ErrCorrupt
		}
		prev += v
		seg.pages = append(seg.pages, prev)
		blob = blob[k:]
	}
	seg.ordered = slices.IsSorted(seg.pages)
	if len(lens) > 0 {
		seg.lens = make([]int32, 1, len(seg.pages))
		for len(lens) > 0 {
			v, k := binary.Uvarint(lens)
			if k <= 0 || v > math.MaxInt32 || len(seg.lens) == len(seg.pages) {
				return nil, search.ErrCorrupt
			}
			seg.lens = append(seg.lens, int32(v))
			lens = lens[k:]
		}
		if len(seg.lens) != len(seg.pages) {
			return nil, search.ErrCorrupt
		}
	}
	rows, err := r.QueryContext(ctx, `SELECT first FROM search_blocks WHERE seg = ? ORDER BY first`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var first string
		if err := rows.Scan(&first); err != nil {
			return nil, err
		}
		seg.firsts = append(seg.firsts, first)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.segs == nil {
		c.segs = map[int64]*segment{}
	}
	c.segs[id] = seg
	c.mu.Unlock()
	return seg, nil
}

// block returns block i of seg.
func (c *segcache) block(ctx context.Context, r querier, seg *segment, i int) ([]byte, error) {
	k := blockKey{seg.id, i}
	c.mu.Lock()
	if e, ok := c.blocks[k]; ok {
		c.lru.MoveToFront(e)
		data := e.Value.(*cachedBlock).data
		c.mu.Unlock()
		return data, nil
	}
	c.mu.Unlock()
	var data []byte
	if err := r.QueryRowContext(ctx, `SELECT data FROM search_blocks WHERE seg = ? AND first = ?`, seg.id, seg.firsts[i]).Scan(&data); err != nil {
		return nil, err
	}
	if len(data) > blockCacheBytes/8 {
		return data, nil // a very long list: not worth the room
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocks == nil {
		c.blocks = map[blockKey]*list.Element{}
	}
	if _, ok := c.blocks[k]; !ok {
		c.blocks[k] = c.lru.PushFront(&cachedBlock{k, data})
		c.bytes += len(data)
		for c.bytes > blockCacheBytes {
			old := c.lru.Remove(c.lru.Back()).(*cachedBlock)
			delete(c.blocks, old.key)
			c.bytes -= len(old.data)
		}
	}
	return data, nil
}

type skipKey struct {
	seg int64
	key string
}

// skipsCacheBytes bounds what the Skips kept take (search.SkipsBytes):
// 4 MB is those of 160 lists of 100,000 documents, or of 4,000 of 1,024.
// Past it, entries are dropped at random until it holds: the lists that
// phrases read most come back first.
const skipsCacheBytes = 4 << 20

type cachedSkips struct {
	skips *search.Skips
	bytes int
}

// listSkips returns the Skips of the list of key in segment seg, which
// holds docs documents.
func (c *segcache) listSkips(seg int64, key string, docs int) *search.Skips {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := skipKey{seg, key}
	if e, ok := c.skips[k]; ok {
		return e.skips
	}
	if c.skips == nil {
		c.skips = map[skipKey]cachedSkips{}
	}
	// The key is the cache's own copy, counted in its bytes: a query's
	// word may be part of the request's string, which the entry would
	// otherwise keep.
	k.key = strings.Clone(key)
	e := cachedSkips{new(search.Skips), search.SkipsBytes(docs) + len(key)}
	for old, o := range c.skips {
		if c.skipBytes+e.bytes <= skipsCacheBytes {
			break
		}
		delete(c.skips, old)
		c.skipBytes -= o.bytes
	}
	c.skips[k] = e
	c.skipBytes += e.bytes
	return e.skips
}

// keepOnly forgets the segments not in live, and their blocks.
func (c *segcache) keepOnly(live []segmentInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.segs) <= len(live) {
		return
	}
	ids := map[int64]bool{}
	for _, s := range live {
		ids[s.id] = true
	}
	for id := range c.segs {
		if !ids[id] {
			delete(c.segs, id)
		}
	}
	for k, e := range c.blocks {
		if !ids[k.seg] {
			c.bytes -= len(c.lru.Remove(e).(*cachedBlock).data)
			delete(c.blocks, k)
		}
	}
	for k, e := range c.skips {
		if !ids[k.seg] {
			delete(c.skips, k)
			c.skipBytes -= e.bytes
		}
	}
}
