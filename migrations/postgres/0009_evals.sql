-- relay schema 9: engine evaluations, one row per position, shared by every game and round that
-- reaches it (an opening's positions are evaluated once for the whole event). `position` is the
-- FEN's first four fields (placement, side to move, castling, en passant): the move counters do
-- not change what an engine sees. `cp` (centipawns) or `mate` (moves; negative: Black mates) is
-- from White's point of view; `line` is the engine's best line in UCI, space-separated. A
-- deeper evaluation replaces a shallower one.
CREATE TABLE evals (
    position TEXT PRIMARY KEY,
    cp BIGINT,
    mate BIGINT,
    depth BIGINT NOT NULL,
    line TEXT NOT NULL,
    engine TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
-- The origins (scheme://host[:port], one a line) whose pages may show the tournament's embedded
-- boards in a frame (`Content-Security-Policy: frame-ancestors`).
ALTER TABLE tournaments ADD COLUMN embed_origins TEXT;
