-- FTS5 keeps a transaction's new entries in memory and writes them out as
-- a new segment when they pass its hash size (1 MiB by default) and at
-- commit; every segment is merged with others later. With 32 MiB, a bulk
-- import's batch becomes one segment instead of several, which halves the
-- merging. An edit's entry is a few kilobytes: the memory is used only by
-- transactions that write that much.
INSERT INTO search(search, rank) VALUES ('hashsize', 33554432);
