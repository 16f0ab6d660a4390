-- relay schema 12: PGN sources a round polls (another relay's round, DGT LiveChess Cloud, a
-- Lichess round, a file on a web server): the games of the boards without e-boards. `boards`
-- is the arbiter's range ("1-20"), empty for every board; a source stopped is deleted.
CREATE TABLE pgn_sources (id BIGSERIAL PRIMARY KEY, round_id BIGINT NOT NULL REFERENCES rounds (id),
    url TEXT NOT NULL, boards TEXT NOT NULL DEFAULT '', created_at_ms BIGINT NOT NULL);
-- The Lichess broadcast rounds `relay lichess setup` made for a round: boards 1-100 go to slice
-- 0, 101-200 to slice 1, and so on; the pusher reads them when no --lichess-round is given.
CREATE TABLE lichess_rounds (round_id BIGINT NOT NULL REFERENCES rounds (id), slice BIGINT NOT NULL,
    tour TEXT NOT NULL, lichess_round TEXT NOT NULL, PRIMARY KEY (round_id, slice));
