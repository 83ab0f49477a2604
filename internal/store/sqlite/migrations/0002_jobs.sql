-- The durable job queue (an outbox): changes insert their jobs in their own
-- transaction. While a job runs, run_at holds its lease expiry, so that one
-- index range (state queued or running, run_at <= now) finds every job that
-- is due: queued ones whose time has come and running ones whose worker died.
CREATE TABLE jobs (
	id           INTEGER PRIMARY KEY,
	kind         TEXT    NOT NULL,
	payload      TEXT    NOT NULL DEFAULT '{}', -- JSON, owned by the kind's handler
	dedupe_key   TEXT    NOT NULL DEFAULT '',
	state        TEXT    NOT NULL DEFAULT 'queued', -- queued | running | done | dead
	attempts     INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL DEFAULT 5,
	run_at       INTEGER NOT NULL,
	leased_until INTEGER NOT NULL DEFAULT 0,
	owner        TEXT    NOT NULL DEFAULT '',
	last_error   TEXT    NOT NULL DEFAULT '',
	created      INTEGER NOT NULL,
	updated      INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs(run_at, id) WHERE state IN ('queued', 'running');
-- At most one queued job per key: later enqueues merge into it.
CREATE UNIQUE INDEX jobs_key ON jobs(dedupe_key) WHERE state = 'queued' AND dedupe_key <> '';
-- Counts per state (stats, metrics) and pruning of done jobs.
CREATE INDEX jobs_state ON jobs(state, updated);

CREATE INDEX changes_ts ON changes(ts);
