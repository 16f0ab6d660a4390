-- relay schema 12: PGN sources a round polls (another relay's round, DGT LiveChess Cloud, a
-- Lichess round, a file on a web server): the games of the boards without e-boards. `boards`
-- is the arbiter's range ("1-20"), empty for every board; a source stopped is deleted.
CREATE TABLE pgn_sources (id INTEGER PRIMARY KEY AUTOINCREMENT, round_id BIGINT NOT NULL REFERENCES rounds (id),
    url TEXT NOT NULL, boards TEXT NOT NULL DEFAULT '', created_at_ms BIGINT NOT NULL);
