-- Content models: the markup language of each revision ('markdown' or
-- 'wikitext', wiki.ContentModel), and on pages the latest revision's, so
-- that listings and page information tell it without reading revisions.
-- A constant default: PostgreSQL adds the columns without rewriting a row.
ALTER TABLE revisions ADD COLUMN model text COLLATE "C" NOT NULL DEFAULT 'markdown';
ALTER TABLE pages ADD COLUMN model text COLLATE "C" NOT NULL DEFAULT 'markdown';
