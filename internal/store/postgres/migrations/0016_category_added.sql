-- When each page was added to each of its categories, for the listing of
-- a category's newest members (Store.CategoryAdditions, the category
-- feed). The links rows themselves are rewritten whole on every save, so
-- the time lives beside them: a row is added when a category row first
-- appears for its page and kept while the page stays in the category
-- (queueLinkRows, links.go); it is removed when the page leaves it, so
-- that coming back is a new addition. Readers join links, so a row is
-- shown only while its membership exists.
CREATE TABLE category_added (
	category text COLLATE "C" NOT NULL, -- the category's title, as links.target_title
	page_id  bigint NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	added    bigint NOT NULL, -- Unix milliseconds
	PRIMARY KEY (category, page_id)
);
-- A category's newest members: one range, read backwards.
CREATE INDEX category_added_time ON category_added (category, added, page_id);
-- A page's rows, for the clean-up after its links are written.
CREATE INDEX category_added_page ON category_added (page_id);
-- The members already here: the time of their page's first revision,
-- the earliest they can have been added (nothing older is known).
INSERT INTO category_added (category, page_id, added)
	SELECT l.target_title, l.from_page, coalesce((SELECT min(r.ts) FROM revisions r WHERE r.page_id = l.from_page), p.touched)
	FROM links l JOIN pages p ON p.id = l.from_page
	WHERE l.kind = 'category'
	ON CONFLICT DO NOTHING;
