-- Times are Unix milliseconds (UTC). Titles are wiki.Title display forms,
-- compared as bytes (BINARY), which orders them by code point.

CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	name          TEXT    NOT NULL,
	name_key      TEXT    NOT NULL UNIQUE, -- Unicode case fold of name: names are unique case-insensitively
	password_hash TEXT    NOT NULL,
	grp           TEXT    NOT NULL,
	created       INTEGER NOT NULL
);

CREATE TABLE sessions (
	id      TEXT    PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	csrf    TEXT    NOT NULL,
	created INTEGER NOT NULL,
	expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_expires ON sessions(expires);
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE tokens (
	id      TEXT    PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name    TEXT    NOT NULL,
	created INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX tokens_user ON tokens(user_id);

CREATE TABLE pages (
	id         INTEGER PRIMARY KEY,
	title      TEXT    NOT NULL UNIQUE,
	ns         TEXT    NOT NULL,            -- wiki.Title.Namespace()
	latest_rev INTEGER NOT NULL DEFAULT 0,  -- kept while deleted, so undelete knows it
	redirect   TEXT    NOT NULL DEFAULT '', -- target when the latest revision is a redirect
	deleted    INTEGER NOT NULL DEFAULT 0,
	touched    INTEGER NOT NULL,
	size       INTEGER NOT NULL DEFAULT 0
);
-- Live pages: PageCount and RandomPage read this index only.
CREATE INDEX pages_live ON pages(ns, redirect, id) WHERE deleted = 0;

CREATE TABLE revisions (
	id        INTEGER PRIMARY KEY,
	page_id   INTEGER NOT NULL REFERENCES pages(id),
	parent_id INTEGER NOT NULL DEFAULT 0,
	user_id   INTEGER NOT NULL DEFAULT 0,
	user_name TEXT    NOT NULL,
	ts        INTEGER NOT NULL,
	summary   TEXT    NOT NULL,
	text      TEXT    NOT NULL,
	size      INTEGER NOT NULL,
	sha1      TEXT    NOT NULL,
	minor     INTEGER NOT NULL DEFAULT 0,
	deleted   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX revisions_page ON revisions(page_id, id);

-- What each page links to. Rows of deleted pages are kept (undelete needs
-- them) and filtered out by joining pages.
CREATE TABLE links (
	from_page    INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	kind         TEXT    NOT NULL, -- 'link' | 'category' | 'redirect'
	target_title TEXT    NOT NULL,
	PRIMARY KEY (from_page, kind, target_title)
) WITHOUT ROWID;
CREATE INDEX links_target ON links(target_title, kind, from_page);

-- Recent changes: a log, so no foreign keys; titles are as they were.
CREATE TABLE changes (
	id         INTEGER PRIMARY KEY,
	kind       TEXT    NOT NULL,
	title      TEXT    NOT NULL,
	new_title  TEXT    NOT NULL DEFAULT '',
	page_id    INTEGER NOT NULL,
	rev_id     INTEGER NOT NULL DEFAULT 0,
	old_rev_id INTEGER NOT NULL DEFAULT 0,
	user_id    INTEGER NOT NULL DEFAULT 0,
	user_name  TEXT    NOT NULL,
	ts         INTEGER NOT NULL,
	summary    TEXT    NOT NULL,
	size       INTEGER NOT NULL DEFAULT 0,
	old_size   INTEGER NOT NULL DEFAULT 0,
	minor      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX changes_user ON changes(user_name, id);

CREATE TABLE renders (
	rev_id  INTEGER NOT NULL REFERENCES revisions(id),
	version INTEGER NOT NULL,
	data    BLOB    NOT NULL,
	PRIMARY KEY (rev_id, version)
); -- not WITHOUT ROWID: rows are large blobs

-- Search index of live pages, rowid = pages.id. The trigram tokenizer works
-- for every script (no word segmentation needed for Korean, Chinese, Japanese)
-- and also serves LIKE for terms shorter than three characters.
CREATE VIRTUAL TABLE search USING fts5(title, text, tokenize = 'trigram');
