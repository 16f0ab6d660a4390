-- relay schema 3: how many times arbiters have edited each game. An edit is made against the
-- count it read; when another arbiter (on this relay or another on the same database) edited
-- the game meanwhile, the count differs and the edit is refused as a conflict, never applied
-- over the other's.
ALTER TABLE games ADD COLUMN edits BIGINT NOT NULL DEFAULT 0;
-- Each e-board's live state as the relay reading it last announced it (JSON), so relays that
-- read no boards (behind the same proxy) show arbiters every e-board and who reads it.
CREATE TABLE eboard_live (serial TEXT PRIMARY KEY, view TEXT NOT NULL, updated_at BIGINT NOT NULL);
