-- The UTS #39 skeleton of each user name (wiki.UserNameSkeleton): names
-- that look alike share one, so refusing a look-alike of an existing
-- account is one indexed lookup. Not unique: accounts that were created
-- before the check existed may share a skeleton and are kept. SQL cannot
-- compute it; Open fills the rows left empty here.
ALTER TABLE users ADD COLUMN skeleton TEXT NOT NULL DEFAULT '';
CREATE INDEX users_skeleton ON users (skeleton);
