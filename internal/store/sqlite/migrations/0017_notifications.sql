-- Notifications: a user is told when someone else edits their talk page
-- or mentions them in a signed comment (engine's notify job), or thanks
-- them for an edit. The unique
-- key makes the job, which may run twice, store each once.
CREATE TABLE notifications (
	id      INTEGER PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	kind    TEXT NOT NULL,
	title   TEXT NOT NULL,
	rev_id  INTEGER NOT NULL DEFAULT 0,
	agent   TEXT NOT NULL,
	ts      INTEGER NOT NULL,
	seen    INTEGER NOT NULL DEFAULT 0,
	UNIQUE (user_id, kind, title, rev_id, agent)
);
-- A user's list, newest first.
CREATE INDEX notifications_user ON notifications(user_id, id);
