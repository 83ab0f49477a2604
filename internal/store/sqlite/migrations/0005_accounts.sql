-- Accounts: preferences, token expiry and last use, blocks, password resets.

ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';     -- IANA name, '' for UTC
ALTER TABLE users ADD COLUMN date_format TEXT NOT NULL DEFAULT '';   -- wiki.DateFormats name
ALTER TABLE users ADD COLUMN minor_default INTEGER NOT NULL DEFAULT 0;

ALTER TABLE tokens ADD COLUMN expires INTEGER NOT NULL DEFAULT 0;   -- 0: never
ALTER TABLE tokens ADD COLUMN last_used INTEGER NOT NULL DEFAULT 0; -- written at most once a minute

-- At most one block per user; an expired row is ignored by every read and
-- replaced by the next block.
CREATE TABLE blocks (
	id      INTEGER PRIMARY KEY,
	user_id INTEGER NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
	by_id   INTEGER NOT NULL DEFAULT 0,
	by_name TEXT    NOT NULL,
	reason  TEXT    NOT NULL DEFAULT '',
	created INTEGER NOT NULL,
	expires INTEGER NOT NULL DEFAULT 0 -- 0: infinite
);

-- One-time password reset links; id is the SHA-256 of the link's secret.
CREATE TABLE password_resets (
	id      TEXT    PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	created INTEGER NOT NULL,
	expires INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX password_resets_user ON password_resets(user_id);
