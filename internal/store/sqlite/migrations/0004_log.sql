-- The public log of administrative actions (Special:Log): deletions,
-- moves, protections, blocks, rights changes, account creations. Like
-- changes, a log: no foreign keys, names and titles as they were. Each
-- entry is written in the transaction of its action.
CREATE TABLE log (
	id        INTEGER PRIMARY KEY,
	type      TEXT    NOT NULL, -- wiki.LogType: delete | move | protect | block | rights | newusers
	action    TEXT    NOT NULL, -- wiki.LogAction, within the type: delete, restore, move, protect, block, …
	ts        INTEGER NOT NULL,
	user_id   INTEGER NOT NULL DEFAULT 0,
	user_name TEXT    NOT NULL,
	target    TEXT    NOT NULL, -- a title; "User:Name" for actions on accounts
	page_id   INTEGER NOT NULL DEFAULT 0,
	comment   TEXT    NOT NULL DEFAULT '',
	params    TEXT    NOT NULL DEFAULT '{}' -- JSON object of strings, owned by the type
);
CREATE INDEX log_type ON log(type, id);
CREATE INDEX log_user ON log(user_name, id);
CREATE INDEX log_target ON log(target, id);
-- A type with a performer or a target (Special:Log/block?user=X): without
-- these, the rows of the performer's or target's other types are read and
-- dropped one by one.
CREATE INDEX log_user_type ON log(user_name, type, id);
CREATE INDEX log_target_type ON log(target, type, id);

-- Deletions, restorations and moves made before the log existed.
INSERT INTO log (type, action, ts, user_id, user_name, target, page_id, comment, params)
SELECT CASE kind WHEN 'move' THEN 'move' ELSE 'delete' END,
       CASE kind WHEN 'undelete' THEN 'restore' ELSE kind END,
       ts, user_id, user_name, title, page_id, summary,
       CASE kind WHEN 'move' THEN json_object('to', new_title) ELSE '{}' END
FROM changes WHERE kind IN ('delete', 'undelete', 'move') ORDER BY id;
