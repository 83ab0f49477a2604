-- The purge log: what each process purged from its caches, read by the
-- other processes on this database (a `wikid jobs run` beside `wikid
-- serve`) to purge theirs. AUTOINCREMENT: IDs are never reused, so a gap
-- after a reader's last ID means it missed events that were trimmed.
CREATE TABLE purges (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	origin TEXT NOT NULL,
	at INTEGER NOT NULL,        -- unix ms
	stale INTEGER NOT NULL DEFAULT 0,
	titles TEXT NOT NULL,       -- newline-separated
	pages TEXT NOT NULL,        -- comma-separated page IDs
	users TEXT NOT NULL,        -- comma-separated user IDs
	sessions TEXT NOT NULL      -- comma-separated session IDs (token hashes)
);
