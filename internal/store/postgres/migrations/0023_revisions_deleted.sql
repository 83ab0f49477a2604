-- SQLite indexes whether each revision is deleted (0023 there), which lists
-- of changes read for each edit. PostgreSQL reads it from the revision's
-- row, without its text (kept apart, TOAST). The number keeps both
-- engines' schema versions one list.
SELECT 1;
