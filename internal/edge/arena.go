package edge

import "sync/atomic"

// Large bodies for sendfile. A server that writes a cached body with
// write(2) or writev(2) copies it into the kernel on every hit; sendfile(2)
// from a memory file hands the kernel the file's pages instead. So the
// bodies of large variants are also kept in an arena: one memory file
// (memfd) per cache, written append-only at page-aligned offsets that are
// never reused. A variant's copy is made on its first request for it
// (Variant.AcquireFile), so bodies never served that way cost nothing.
//
// A Blob is reference-counted: the cache holds one reference until the
// entry leaves it (purge, eviction, replacement), and each send in flight
// holds one. The last Release punches the region out of the file, which
// returns its pages to the system; pages the kernel still holds for data in
// flight stay valid until that data is sent, and since no offset is ever
// written twice, no client can receive bytes of another body.
//
// The heap copy (Variant.Body) stays: handlers, splices and 304s use it.
// The arena's bytes are counted in Stats.ArenaBytes, not in MaxBytes.

// DefaultArenaMin is the smallest body kept in the arena. Below it, one
// writev of head and body costs less than a second system call.
const DefaultArenaMin = 32 << 10

// Blob is a variant's body in the arena. Send it with sendfile(2) from
// FD at Offset, Len bytes, between AcquireFile and Release.
type Blob struct {
	a    *arena
	off  int64
	n    int64
	refs atomic.Int64
}

// FD is the arena's file descriptor. It stays open while the cache lives.
func (b *Blob) FD() int { return b.a.fd }

// Offset is where the body starts in the file.
func (b *Blob) Offset() int64 { return b.off }

// Len is the body's length.
func (b *Blob) Len() int64 { return b.n }

func (b *Blob) acquire() bool {
	for {
		r := b.refs.Load()
		if r <= 0 {
			return false
		}
		if b.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// Release gives back a reference taken by AcquireFile.
func (b *Blob) Release() {
	if b.refs.Add(-1) == 0 {
		b.a.free(b.off, b.n)
	}
}

// AcquireFile returns the variant's body in the arena, copying it there on
// first use, with a reference the caller must Release once the body is
// sent. It returns nil when the body is below the arena's threshold, the
// arena is unavailable, or the entry has left the cache: write Body then.
func (v *Variant) AcquireFile() *Blob {
	a := v.e.arena
	if a == nil || int64(len(v.Body)) < a.min || v.noBlob.Load() {
		return nil
	}
	for {
		if b := v.blob.Load(); b != nil {
			if b.acquire() {
				return b
			}
			return nil // released by the entry's removal
		}
		if v.e.gone.Load() {
			return nil
		}
		off, err := a.put(v.Body)
		if err != nil {
			v.noBlob.Store(true)
			return nil
		}
		b := &Blob{a: a, off: off, n: int64(len(v.Body))}
		b.refs.Store(1) // the cache's
		if !v.blob.CompareAndSwap(nil, b) {
			b.Release() // another request stored one first
			continue
		}
		// The entry may have been removed after the check above and
		// before the store; its removal then found no blob to release.
		if v.e.gone.Load() {
			if old := v.blob.Swap(nil); old != nil {
				old.Release()
			}
			return nil
		}
	}
}

// release drops the cache's reference to the entry's arena copies. Called
// once, when the entry leaves the cache.
func (e *entry) release() {
	if e.gone.Swap(true) {
		return
	}
	for _, v := range e.variants {
		if v == nil {
			continue
		}
		if b := v.blob.Swap(nil); b != nil {
			b.Release()
		}
	}
}

// arena is the append-only memory file. Offsets come from one counter,
// taken only when a body is first copied in.
type arena struct {
	fd    int
	min   int64
	next  atomic.Int64 // next free offset, page-aligned
	bytes atomic.Int64 // bytes held (page-rounded), for Stats
}

const arenaPage = 4096

func pageRound(n int64) int64 { return (n + arenaPage - 1) &^ (arenaPage - 1) }
