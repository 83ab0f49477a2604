-- Change tags: how an edit was made ("undo", "rollback"), comma-separated
-- (wiki.JoinTags), '' for most edits. The revision keeps them for the
-- page's history, the change for RecentChanges and contributions.
ALTER TABLE revisions ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN tags TEXT NOT NULL DEFAULT '';
