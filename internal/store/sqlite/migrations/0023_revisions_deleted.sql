-- Whether a revision is deleted, by its ID: lists of changes leave out
-- the edits whose revision is (store.ChangeFilters), and read it here,
-- not in the revision's row, where it follows the text (for a large text,
-- after every overflow page of it).
CREATE INDEX IF NOT EXISTS revisions_deleted ON revisions(id, deleted);
