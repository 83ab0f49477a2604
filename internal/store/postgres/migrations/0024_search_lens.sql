-- SQLite keeps each search segment's document lengths once (0024 there);
-- PostgreSQL searches with its own text search, which has no segments.
-- The number keeps both engines' schema versions one list.
SELECT 1;
