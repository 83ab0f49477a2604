package web

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/wikid/wikid/internal/wiki"
)

// Gzip for spliced (logged-in) views without compressing the page per
// request. A gzip member is a header, one deflate stream and a trailer
// (CRC-32 and length of the uncompressed data). Each static part of the
// cached page is deflated once, on its own, and ends with a sync flush:
// byte-aligned, non-final blocks whose back-references stay inside the part.
// Such pieces can be concatenated, so a view is
//
//	header · part0 · user bar · part2 · tabs · part4 · final empty block · trailer
//
// with only the small per-user pieces deflated at serve time (the user bar
// once per session). The CRC is computed over the uncompressed parts, which
// hardware-accelerated CRC-32 does in a few microseconds for a large page.

var (
	gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	// finalBlock is an empty fixed-Huffman block with BFINAL set.
	finalBlock = []byte{0x03, 0x00}
)

var flatePool = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// deflateFlushed returns p deflated and sync-flushed (not closed).
func deflateFlushed(p []byte) []byte {
	var b bytes.Buffer
	w := flatePool.Get().(*flate.Writer)
	w.Reset(&b)
	w.Write(p)
	w.Flush()
	flatePool.Put(w)
	return b.Bytes()
}

// crcShift is the linear operator that appends n zero bytes to a CRC-32
// (IEEE) register: crc(A·B) = shift_len(B)(crc(A)) ^ crc(B). Built once per
// length by square-and-multiply over GF(2) 32×32 matrices (zlib's method).
type crcShift [32]uint32

func newCRCShift(n int) *crcShift {
	var one crcShift // one zero bit
	one[0] = crc32.IEEE
	for i := 1; i < 32; i++ {
		one[i] = 1 << (i - 1)
	}
	byteOp := one.mul(&one) // 2 bits
	byteOp = byteOp.mul(&byteOp)
	byteOp = byteOp.mul(&byteOp) // 8 bits: one zero byte
	var res crcShift
	for i := range res {
		res[i] = 1 << i // identity
	}
	for base := byteOp; n > 0; n >>= 1 {
		if n&1 != 0 {
			res = base.mul(&res)
		}
		base = base.mul(&base)
	}
	return &res
}

// apply returns the operator applied to register v.
func (m *crcShift) apply(v uint32) uint32 {
	var sum uint32
	for i := 0; v != 0; i, v = i+1, v>>1 {
		if v&1 != 0 {
			sum ^= m[i]
		}
	}
	return sum
}

// mul returns m·b (b first, then m).
func (m *crcShift) mul(b *crcShift) crcShift {
	var c crcShift
	for i := range c {
		c[i] = m.apply(b[i])
	}
	return c
}

// gzCache holds, per cached page version (edge key and ETag: a purge makes
// a new ETag, so stale parts are never used), what logged-in views of it
// share: the tabs for each group and, once a gzip view is asked for, the
// static parts deflated with their CRCs. Sharded; a shard over its budget
// is emptied.
type gzCache struct {
	seed   maphash.Seed
	shards [16]gzShard
}

type gzShard struct {
	mu    sync.Mutex
	m     map[string]*gzEntry
	bytes int
}

type gzEntry struct {
	once   sync.Once
	static [3][]byte
	crc0   uint32                                 // CRC of part 0
	crc4   uint32                                 // CRC of part 4, the long rest of the page
	shift4 *crcShift                              // appends len(part 4) zero bytes
	tabs   [2 * wiki.Ranks]atomic.Pointer[gzTabs] // by tabsVariant
	marks  atomic.Pointer[[4]int]                 // offsets of the user bar's and tabs' markers (splice)
}

type gzTabs struct {
	html, gz []byte
}

const gzShardBudget = 4 << 20

func newGzCache() *gzCache {
	c := &gzCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = map[string]*gzEntry{}
	}
	return c
}

// entry returns the shared parts of page version (key, etag).
func (c *gzCache) entry(key, etag string) *gzEntry {
	id := key + "\x00" + etag
	sh := &c.shards[maphash.String(c.seed, id)%uint64(len(c.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[id]; e != nil {
		return e
	}
	if sh.bytes > gzShardBudget {
		clear(sh.m)
		sh.bytes = 0
	}
	e := &gzEntry{}
	sh.m[id] = e
	sh.bytes += len(id) + 20<<10 // a deflated page's parts, roughly
	return e
}

// tabsVariant numbers the tab bars a page version has: one per group
// (wiki.Group.Rank) and watch state.
func tabsVariant(rank int, watched bool) int {
	if watched {
		return 2*rank + 1
	}
	return 2 * rank
}

// tabsFor returns the tabs of variant n (tabsVariant), rendering them on
// first use.
func (e *gzEntry) tabsFor(n int, render func() []byte) *gzTabs {
	if t := e.tabs[n].Load(); t != nil {
		return t
	}
	html := render()
	t := &gzTabs{html: html, gz: deflateFlushed(html)}
	e.tabs[n].Store(t)
	return t
}

// deflated deflates the static parts on first use.
func (e *gzEntry) deflated(sp *spliced) {
	e.once.Do(func() {
		for i, p := range [3][]byte{sp.parts[0], sp.parts[2], sp.parts[4]} {
			e.static[i] = deflateFlushed(p)
		}
		e.crc0 = crc32.ChecksumIEEE(sp.parts[0])
		e.crc4 = crc32.ChecksumIEEE(sp.parts[4])
		e.shift4 = newCRCShift(len(sp.parts[4]))
	})
}

// gzUser is a user bar deflated, cached per session.
type gzUser struct {
	gz []byte
}

// gzipPieces returns the pieces of the gzip-encoded view and their total
// length. Only lookups and a CRC combination happen per request: the page's
// parts are deflated once per page version, the tabs once per page version
// and group, the user bar once per session.
func gzipPieces(sp *spliced, user gzUser, dst [][]byte) ([][]byte, int) {
	e, tabs := sp.shared, sp.tabs
	e.deflated(sp)
	// The CRC runs over the short middle parts (user bar, the chrome between
	// it and the tabs, the tabs); the long parts' CRCs are precomputed.
	crc := e.crc0
	crc = crc32.Update(crc, crc32.IEEETable, sp.parts[1])
	crc = crc32.Update(crc, crc32.IEEETable, sp.parts[2])
	crc = crc32.Update(crc, crc32.IEEETable, sp.parts[3])
	crc = e.shift4.apply(crc) ^ e.crc4
	trailer := binary.LittleEndian.AppendUint32(make([]byte, 0, 8), crc)
	trailer = binary.LittleEndian.AppendUint32(trailer, uint32(sp.length))
	dst = append(dst[:0], gzipHeader, e.static[0], user.gz, e.static[1], tabs.gz, e.static[2], finalBlock, trailer)
	n := 0
	for _, p := range dst {
		n += len(p)
	}
	return dst, n
}
