-- Watchlists: the titles each user follows, a page and its talk page as
-- two rows (wiki.Title.Pair). expires is Unix milliseconds, 0 for never;
-- an expired row is ignored by every read and removed by the user's next
-- change to the list. Titles need not name a page (a user may watch a
-- page to be created), and rows are not removed when a page is deleted,
-- as in MediaWiki.
CREATE TABLE watchlist (
	user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	title   text   COLLATE "C" NOT NULL,
	expires bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, title)
);
-- Who watches a title (page information's count, moves).
CREATE INDEX watchlist_title ON watchlist (title);
-- A watchlist's changes are read title by title, newest first, from
-- this index, so their cost follows the watched pages' changes, not the
-- whole wiki's.
CREATE INDEX changes_title ON changes (title, id);
-- Page creations, newest first: the "new pages only" filter reads them
-- without scanning the edits between them.
CREATE INDEX changes_new ON changes (id) WHERE kind = 'new';
-- Changes other than minor edits, for "hide minor edits" on a wiki whose
-- changes are nearly all minor (a bot's).
CREATE INDEX changes_major ON changes (id) WHERE NOT minor;
-- The "add pages I create or edit to my watchlist" preference, on by
-- default (MediaWiki's watchdefault and watchcreations).
ALTER TABLE users ADD COLUMN no_autowatch boolean NOT NULL DEFAULT false;
-- The hash (SHA-256, hex) of the token of the user's watchlist feed
-- (Special:Watchlist?feed=atom&wlowner=…&wltoken=…), '' for none.
ALTER TABLE users ADD COLUMN watchlist_token text NOT NULL DEFAULT '';
