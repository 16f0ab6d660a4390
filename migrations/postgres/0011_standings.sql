-- relay schema 11: the tournament around the games. How a tournament is ranked (its tie-break
-- codes in order as TRF-2026 record 202 writes them, its scoring, which edition of FIDE's
-- tie-break rules, round robin or Swiss, where players' photos come from, whether pages hide
-- results until asked), as one JSON value; NULL is relay's defaults for the kind of event.
ALTER TABLE tournaments ADD COLUMN ranking TEXT;
