-- Category sort keys: a category lists its members by (sort key, title),
-- its subcategories apart (wiki.SortKey, wiki.LinkSet.CategorySortKey).
-- Rows of kind 'category' hold the page's key in the category, a line
-- break and the page's title (wiki.StoredSortKey: the column's byte order
-- is (key, title) order, as MediaWiki's cl_sortkey), and whether the page
-- is a category itself; rows of other kinds keep '' and 0.
-- The rows already here get their pages' default keys from Go after this
-- script, in its transaction (db.go, backfills): SQLite's upper() knows
-- ASCII letters only, and a key must be the one wikid computes.
ALTER TABLE links ADD COLUMN sortkey TEXT NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN subcat INTEGER NOT NULL DEFAULT 0;
-- A page of a category's listing is one range of this index, read in
-- order from the cursor, however many members share a key: (subcat,
-- sortkey) picks the place and from_page joins the page. Only category
-- rows are in it.
CREATE INDEX links_category ON links(target_title, subcat, sortkey, from_page) WHERE kind = 'category';
