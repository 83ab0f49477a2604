-- SQLite's search index became Wikid's own (segments of postings, 0021
-- there); PostgreSQL keeps its tsvector index. The number keeps both
-- engines' schema versions one list.
SELECT 1;
