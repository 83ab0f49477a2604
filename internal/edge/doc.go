// Package edge is Wikid's in-process HTTP response cache: it sits in front of the
// handlers and answers anonymous GET and HEAD requests from complete stored
// responses. It knows nothing about pages or SQL.
//
// A stored entry holds the status, a safe subset of the handler's headers and the
// body, plus gzip and brotli variants compressed once at store time. Each variant
// carries a pre-built header block, so a hit assigns a handful of precomputed
// []string values into w.Header() and writes one byte slice.
//
// Handlers opt in per response by calling Mark before writing the header; a
// response is stored only when it is marked, has a storable status, sets no
// cookie and is not private. Entries carry tags (a page title, for instance) and
// Purge removes every entry with a tag synchronously.
//
// # Partitioning
//
// The cache is split into shards by a hash of the key. Each shard has its own
// lock, byte budget (MaxBytes/Shards), S3-FIFO queues, tag index and table of
// in-flight fills. No lock is ever held across more than one shard: hits take a
// shard's read lock only (S3-FIFO records a hit with an atomic counter, never by
// moving the entry), eviction runs inside the inserting shard's critical
// section, and Purge and Stats visit shards one at a time. This is the lesson of
// ATS's cache_dir_sync, where one global lock made 0.1% of hits take a second.
//
// # Purge ordering
//
// Purge first records, in a fixed array of per-tag-hash generation counters, that
// the tags were purged at sequence n; then it visits every shard, removing tagged
// entries and detaching in-flight fills so that later requests start fresh ones.
// A fill remembers the sequence at which it started and refuses to store when any
// of its tags (or its key) was purged after that: a render racing with a purge
// can never leave a stale entry behind. A collision in the counter array only
// causes a spurious refusal to store, never a stale hit.
package edge
