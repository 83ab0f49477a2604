-- Stored renders are compressed (codec.go). Existing rows keep their data as
-- is, codec 0; `wikid compact` compresses them, and the revision texts
-- stored before compression, in short transactions.
ALTER TABLE renders ADD COLUMN codec INTEGER NOT NULL DEFAULT 0; -- 0: as is, 1: a zstd frame
