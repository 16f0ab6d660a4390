-- relay schema 2 (PostgreSQL): what the live service needs on top of schema 1.
-- When each change happened, so the delayed public view can cut the stream at "now - delay".
ALTER TABLE changes ADD COLUMN at BIGINT NOT NULL DEFAULT 0;
-- When the result was set (the delayed view shows it only after the delay), and how the
-- e-board lay (a resumed game needs it to read squares the right way round).
ALTER TABLE games ADD COLUMN result_at BIGINT;
ALTER TABLE games ADD COLUMN orientation TEXT;
-- Rounds created by the service itself (no configuration) are marked, so an operator can tell.
ALTER TABLE rounds ADD COLUMN auto BIGINT NOT NULL DEFAULT 0;
CREATE INDEX moves_game_accepted ON moves (game_id, accepted_at);
CREATE INDEX raw_log_serial_time ON raw_log (serial, received_at);
