-- Each document's length in terms (title and text), as uvarints in the
-- order of docmap: the lists of a segment's text keys no longer repeat
-- it per entry (a fifth of the index). Empty for a segment written
-- before, whose lists all hold their lengths.
ALTER TABLE search_segments ADD COLUMN lens BLOB NOT NULL DEFAULT x'';
