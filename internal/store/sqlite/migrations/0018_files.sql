-- Uploaded files, in the database so that a SQLite wiki stays one file
-- to back up. Bytes are content-addressed blobs, keyed by their SHA-256
-- (lower-case hex): two uploads of the same bytes share one blob. Blobs
-- are never changed once written.
CREATE TABLE blobs (
	sha256  TEXT    PRIMARY KEY,
	size    INTEGER NOT NULL,
	created INTEGER NOT NULL
) WITHOUT ROWID;

-- A blob's bytes in chunks of store.ChunkSize (1 MiB), numbered from 0:
-- a write holds one chunk in memory, a range read fetches the chunks it
-- covers. Not WITHOUT ROWID: rows are large blobs, which a rowid table
-- keeps in overflow pages off its b-tree.
CREATE TABLE blob_chunks (
	sha256 TEXT    NOT NULL REFERENCES blobs(sha256),
	n      INTEGER NOT NULL,
	data   BLOB    NOT NULL,
	PRIMARY KEY (sha256, n)
);

-- The versions of each file, one per upload: the File: page that shows
-- them and the blob of the bytes. A deleted page keeps its versions,
-- hidden (1) as its revisions are: they stay hidden when the page is
-- created again, and only an undelete shows them again.
CREATE TABLE file_versions (
	id        INTEGER PRIMARY KEY,
	page_id   INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	sha256    TEXT    NOT NULL REFERENCES blobs(sha256),
	size      INTEGER NOT NULL,
	mime      TEXT    NOT NULL,
	width     INTEGER NOT NULL DEFAULT 0,
	height    INTEGER NOT NULL DEFAULT 0,
	user_id   INTEGER NOT NULL DEFAULT 0,
	user_name TEXT    NOT NULL,
	comment   TEXT    NOT NULL DEFAULT '',
	ts        INTEGER NOT NULL,
	hidden    INTEGER NOT NULL DEFAULT 0
);
-- A file's versions, newest first, and its current one: the newest not
-- hidden, found walking back from the end of the page's range (hidden
-- versions are few, a deletion's), without reading the table.
CREATE INDEX file_versions_page ON file_versions(page_id, id, hidden);
-- A media URL's check: the newest visible version of a page with given
-- bytes, else its newest hidden one: the first entry of a range.
CREATE INDEX file_versions_sha ON file_versions(sha256, page_id, hidden, id DESC);

-- Thumbnails made of a blob (source) at a requested width; their bytes
-- are a blob too. The first one stored for a source and width stays.
CREATE TABLE thumbnails (
	source TEXT    NOT NULL REFERENCES blobs(sha256),
	width  INTEGER NOT NULL,
	sha256 TEXT    NOT NULL REFERENCES blobs(sha256),
	mime   TEXT    NOT NULL,
	height INTEGER NOT NULL,
	PRIMARY KEY (source, width)
) WITHOUT ROWID;
