-- relay schema 10: several halls, one event. A tournament's event key names the event across
-- relays: venues pushing tournaments with the same key fill one tournament on the cloud relay.
ALTER TABLE tournaments ADD COLUMN event_key TEXT;
CREATE UNIQUE INDEX tournaments_event_key ON tournaments (event_key) WHERE event_key IS NOT NULL;
-- A venue's game that came for a board another venue's game holds already in that round: kept
-- whole (the venue's version, JSON) and shown as a conflict on both sides until an arbiter here
-- places it on another board, or the venue sends it with a free board number.
CREATE TABLE mirror_clashes (origin TEXT NOT NULL, remote_id BIGINT NOT NULL, round_id BIGINT NOT NULL,
    board_no BIGINT NOT NULL, held TEXT NOT NULL, message TEXT NOT NULL, at BIGINT NOT NULL,
    PRIMARY KEY (origin, remote_id));
-- A venue whose tournament moved to another one here is asked to send everything again until it
-- says it did (a lost answer must not lose the request).
ALTER TABLE mirror_sources ADD COLUMN resend BIGINT NOT NULL DEFAULT 0;
-- For a round: whether the venue's round is final (one that several halls fill is final here
-- when every one of them says so).
ALTER TABLE mirror_ids ADD COLUMN remote_final BIGINT NOT NULL DEFAULT 0;
-- For a game: its board number at the venue as last received, and whether the game here follows
-- that number (an arbiter here placing it on another board ends it): a venue's renumbering
-- moves the game here too, when the board is free.
ALTER TABLE mirror_ids ADD COLUMN remote_board BIGINT;
ALTER TABLE mirror_ids ADD COLUMN follows BIGINT NOT NULL DEFAULT 1;
