-- The search index now holds the text readers see (the rendered page as
-- plain text) instead of the markup. Queue the search job of every live
-- page, so that its entry is rebuilt: the engine's "search" kind, payload
-- {"title": …}, deduplicated per title like the jobs edits queue. Until its
-- job runs, a page is found through its old entry.
INSERT INTO jobs (kind, payload, dedupe_key, run_at, created, updated)
SELECT 'search', json_object('title', title), 'search:' || title,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000,
	CAST(strftime('%s', 'now') AS INTEGER) * 1000
FROM pages WHERE deleted = 0
ON CONFLICT (dedupe_key) WHERE state = 'queued' AND dedupe_key <> '' DO NOTHING;
