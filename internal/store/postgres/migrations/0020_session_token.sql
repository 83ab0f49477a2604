-- A session started by logging in with an API token (api.php's
-- action=login) names the token, so that revoking the token ends it.
ALTER TABLE sessions ADD COLUMN token_id text COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX sessions_token ON sessions (token_id) WHERE token_id <> '';
