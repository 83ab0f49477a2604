-- A user's custom signature: the markup ~~~ and ~~~~ expand to when they
-- save (wiki.Prefs.Signature); '' is the default signature.
ALTER TABLE users ADD COLUMN signature TEXT NOT NULL DEFAULT '';
