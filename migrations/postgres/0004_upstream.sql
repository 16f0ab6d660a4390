-- relay schema 4: pushing to another relay (venue -> cloud).
-- On the venue: each push target, with the venue's own name for itself (origin, made once)
-- and the number of the last batch it sent (a batch numbered below one already applied is
-- ignored by the cloud, so a request delayed in the network cannot take a game back).
CREATE TABLE upstream_targets (target TEXT PRIMARY KEY, origin TEXT NOT NULL, batch BIGINT NOT NULL DEFAULT 0);
-- How far each round's changes have been delivered to each target: the outbox is the change
-- log itself, read from here on.
CREATE TABLE upstream_sent (target TEXT NOT NULL, round_id BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (target, round_id));
-- On the cloud: each venue that pushes here and the last batch applied from it.
CREATE TABLE mirror_sources (origin TEXT PRIMARY KEY, name TEXT NOT NULL, batch BIGINT NOT NULL, applied_at BIGINT NOT NULL);
-- The venue's tournaments, rounds and games as this relay's own ids. For a game: the venue's
-- and this relay's arbiter-edit counts as of the last push applied, and, while an arbiter here
-- has changed the game since and the venue's version differs, the venue's version held back.
CREATE TABLE mirror_ids (origin TEXT NOT NULL, kind TEXT NOT NULL, remote_id BIGINT NOT NULL, local_id BIGINT NOT NULL,
    local_edits BIGINT NOT NULL DEFAULT 0, held TEXT, conflict TEXT, PRIMARY KEY (origin, kind, remote_id));
CREATE INDEX mirror_ids_local ON mirror_ids (kind, local_id);
