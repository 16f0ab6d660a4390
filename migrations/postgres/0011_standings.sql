-- relay schema 11: the tournament around the games. How a tournament is ranked (its tie-break
-- codes in order as TRF-2026 record 202 writes them, its scoring, which edition of FIDE's
-- tie-break rules, round robin or Swiss, where players' photos come from, whether pages hide
-- results until asked), as one JSON value; NULL is relay's defaults for the kind of event.
ALTER TABLE tournaments ADD COLUMN ranking TEXT;
-- A pairing program's records of rounds its players' cells cannot say (TRF-2026 240, 320,
-- 330: team byes, the teams' pairing-allocated byes, forfeited matches), as the file wrote
-- them, one a line; each import replaces them (the file holds the whole event).
ALTER TABLE tournaments ADD COLUMN round_records TEXT;
