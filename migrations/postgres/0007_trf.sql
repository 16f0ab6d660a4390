-- relay schema 7: tournaments run from a pairing program's file (FIDE's TRF). The tournament's
-- federation, arbiters (chief first, one a line), planned number of rounds and kind (092).
ALTER TABLE tournaments ADD COLUMN federation TEXT;
ALTER TABLE tournaments ADD COLUMN arbiters TEXT;
ALTER TABLE tournaments ADD COLUMN rounds_planned BIGINT;
ALTER TABLE tournaments ADD COLUMN kind TEXT;
-- Its players by start rank, as the file names them; `team` is a team's number.
CREATE TABLE players (tournament_id BIGINT NOT NULL REFERENCES tournaments(id), start_rank BIGINT NOT NULL,
    name TEXT NOT NULL, sex TEXT, title TEXT, rating BIGINT, federation TEXT, fide_id BIGINT, birth TEXT,
    team BIGINT, PRIMARY KEY (tournament_id, start_rank));
-- Its teams (team events), with their players' start ranks in board order (space-separated).
CREATE TABLE teams (tournament_id BIGINT NOT NULL REFERENCES tournaments(id), number BIGINT NOT NULL,
    name TEXT NOT NULL, nickname TEXT, players TEXT NOT NULL, PRIMARY KEY (tournament_id, number));
-- A round's byes: who, the TRF code (H, F, U, Z, +, -) and the points it gave, in halves.
CREATE TABLE byes (round_id BIGINT NOT NULL REFERENCES rounds(id), start_rank BIGINT NOT NULL,
    code TEXT NOT NULL, half_points BIGINT NOT NULL, PRIMARY KEY (round_id, start_rank));
-- Which players of the tournament a game is between (their start ranks), their teams' names,
-- and the match it belongs to in a team round.
ALTER TABLE games ADD COLUMN white_rank BIGINT;
ALTER TABLE games ADD COLUMN black_rank BIGINT;
ALTER TABLE games ADD COLUMN white_team TEXT;
ALTER TABLE games ADD COLUMN black_team TEXT;
ALTER TABLE games ADD COLUMN match_no BIGINT;
