-- SQLite indexes changes by title prefix (0022 there): its planner keeps no
-- statistics and read a whole namespace's changes for a page of them.
-- PostgreSQL's planner chooses between changes_title and the primary key
-- by its statistics. The number keeps both engines' schema versions one
-- list.
SELECT 1;
