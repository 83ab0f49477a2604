-- Recent changes of a namespace, newest first: the changes under one title
-- prefix ("Talk:", as titles were written, aliases included) in ID order,
-- so that a page of them reads its own rows. The other index that could
-- serve, changes_title, holds the namespace's changes by title: SQLite,
-- which keeps no statistics here, read the whole namespace through it and
-- sorted it (100,000 changes for one page of 50). Titles without a colon
-- are under ''. RecentChanges writes the expression exactly as here.
CREATE INDEX changes_prefix ON changes(substr(title, 1, instr(title, ':')), id);
