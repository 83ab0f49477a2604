-- Search by Wikid's own index (package search) instead of FTS5: segments
-- of postings built in Go, stored as blocks of about 16 KB. An index
-- write is then a few rows per thousand pages, where FTS5 cost the writer
-- more than everything else a bulk import writes.
DROP TABLE search;
DROP TABLE search_title;

-- A segment: immutable once written. Its documents are numbered 1..docs
-- in the order of docmap, the page IDs (uvarints, each the difference to
-- the one before). A merge writes its segment's blocks first, under a
-- segment row in state 1 (being written: no query reads it), then makes
-- it live (state 0) and drops the merged ones in one transaction.
-- AUTOINCREMENT: an ID is never used twice, so that a process may keep
-- what it read of a segment (its blocks, its docmap) as long as it likes.
CREATE TABLE search_segments (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	state     INTEGER NOT NULL DEFAULT 0,
	docs      INTEGER NOT NULL,
	tokens    INTEGER NOT NULL,
	max_page  INTEGER NOT NULL, -- the largest page ID in it
	docmap    BLOB    NOT NULL,
	created   INTEGER NOT NULL
);
CREATE TABLE search_blocks (
	seg   INTEGER NOT NULL,
	first TEXT    NOT NULL, -- the block's first key
	data  BLOB    NOT NULL
);
CREATE UNIQUE INDEX search_blocks_key ON search_blocks(seg, first);

-- The segment holding the page's current entry (0: none). The entries of
-- other segments are stale: queries skip them, merges drop them.
ALTER TABLE pages ADD COLUMN search_seg INTEGER NOT NULL DEFAULT 0;
CREATE INDEX pages_search_seg ON pages(search_seg) WHERE search_seg <> 0;

-- Rebuild every live page's entry through its search job (as 0009 did).
UPDATE pages SET search_rev = 0;
INSERT INTO jobs (kind, payload, dedupe_key, run_at, created, updated)
SELECT 'search', json_object('title', title), 'search:' || title,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000
FROM pages WHERE deleted = 0
ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> '' DO NOTHING;
