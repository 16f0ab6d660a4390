-- relay schema 8: the arbiter's record. What a board showed that is not a move but that the
-- arbiter acts on: an illegal move completed by a clock press (or a press without a move), and
-- a clock time changed by hand. `ply` is the move it came in place of (or before); `kind` is
-- 'illegal_move' or 'clock_adjustment'; an illegal move's `illegal` says which kind
-- (move_not_allowed, king_in_check, illegal_castling, pawn_not_promoted, press_without_move),
-- `uci` the squares as seen, `piece`/`captured` FEN letters. `ruling` is the arbiter's
-- answer ('dismissed' or 'result'), NULL while none was given.
CREATE TABLE incidents (
    id INTEGER PRIMARY KEY,
    game_id BIGINT NOT NULL REFERENCES games(id),
    kind TEXT NOT NULL,
    ply BIGINT NOT NULL,
    color TEXT NOT NULL,
    illegal TEXT,
    uci TEXT,
    piece TEXT,
    captured TEXT,
    clock_pressed BIGINT NOT NULL DEFAULT 0,
    delta_ms BIGINT,
    at_ms BIGINT NOT NULL,
    ruling TEXT,
    ruled_at_ms BIGINT
);
CREATE INDEX incidents_game ON incidents (game_id);
-- Whether spectators' outputs (the public game JSON, the spectators' PGN) show them too.
ALTER TABLE tournaments ADD COLUMN public_incidents BIGINT NOT NULL DEFAULT 0;
