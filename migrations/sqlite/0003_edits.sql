-- relay schema 3: how many times arbiters have edited each game. An edit is made against the
-- count it read; when another arbiter (on this relay or another on the same database) edited
-- the game meanwhile, the count differs and the edit is refused as a conflict, never applied
-- over the other's.
ALTER TABLE games ADD COLUMN edits BIGINT NOT NULL DEFAULT 0;
