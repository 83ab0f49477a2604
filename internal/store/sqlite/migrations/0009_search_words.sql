-- Search by words instead of trigrams. The text of the index is the output
-- of the Go analyzer (store.IndexText: folded words, Korean, Chinese and
-- Japanese as bigrams) separated by spaces, so unicode61 only splits on
-- them. The index is contentless: snippets are made from the revision
-- text, not from a second copy of it. rowid = pages.id. Three-character
-- prefixes have an index of their own (store.MinPrefix): without it, a
-- query such as "dri*" merges the lists of every word starting so.
DROP TABLE search;
CREATE VIRTUAL TABLE search USING fts5(title, body,
	content = '', contentless_delete = 1, prefix = '3',
	tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'");
-- Titles alone, for the title matches ranked first: their lists are short,
-- where those of the main index are as long as the wiki for common words.
CREATE VIRTUAL TABLE search_title USING fts5(title,
	content = '', contentless_delete = 1,
	tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'");

-- The revision a page's search entry was made from (0: none), so that an
-- index job that finds it current does nothing, and the page's title as
-- the analyzer folds it (store.Fold), for title completion and "go to the
-- page" ignoring case and accents. Both are written with the search entry.
ALTER TABLE pages ADD COLUMN search_rev INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN title_fold TEXT NOT NULL DEFAULT '';
CREATE INDEX pages_title_fold ON pages(title_fold) WHERE deleted = 0;

-- Rebuild every live page's entry through its search job (see 0003).
INSERT INTO jobs (kind, payload, dedupe_key, run_at, created, updated)
SELECT 'search', json_object('title', title), 'search:' || title,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000
FROM pages WHERE deleted = 0
ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> '' DO NOTHING;
