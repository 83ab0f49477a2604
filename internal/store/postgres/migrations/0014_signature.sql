-- A user's custom signature: the markup ~~~ and ~~~~ expand to when they
-- save (wiki.Prefs.Signature); '' is the default signature.
ALTER TABLE users ADD COLUMN signature text NOT NULL DEFAULT '';
