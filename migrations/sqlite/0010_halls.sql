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
