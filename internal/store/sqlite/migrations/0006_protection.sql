-- Page protection: who may edit (or create) and move a title, until when.
-- Keyed by title, not page: a protection outlives its page's deletion
-- (it then protects the title's creation) and moves with the page. An
-- expired row stops applying by itself (readers compare expiry with now)
-- and is replaced or removed by the next change of the title's protection.
CREATE TABLE protection (
	title      TEXT    PRIMARY KEY,
	edit_level TEXT    NOT NULL DEFAULT '', -- wiki.ProtectionLevel: '' | users | admins
	move_level TEXT    NOT NULL DEFAULT '',
	expiry     INTEGER NOT NULL DEFAULT 0,  -- ms since the epoch; 0: never
	user_id    INTEGER NOT NULL DEFAULT 0,
	user_name  TEXT    NOT NULL,
	reason     TEXT    NOT NULL DEFAULT '',
	ts         INTEGER NOT NULL
) WITHOUT ROWID;
