//! The cloud applies a venue's batch, in one transaction: a batch numbered above the last
//! one applied from that venue, or nothing (a request held up in the network cannot take a
//! game back); each tournament into the local one it fills (its own, or with an event key,
//! the event's that other halls fill too), rounds matched by number, each game diffed into
//! its own changes or held back (an arbiter changed it here, or another hall holds its
//! board); then the games renumbered there follow here where they can.

use super::clashes::{clash_message, clashes_in, follow_renumbers};
use super::game::{apply_game, conflict_message, differs, game_in};
use super::ids::{map_id, mapped, shared};
use super::wire::{Applied, PushBatch, PushConflict};
use crate::batch::{Touched, notify};
use crate::cluster::ROUNDS_CHANNEL;
use crate::error::{Result, StoreError};
use crate::model::TournamentInfo;
use crate::pool::{Store, now_ms, on_pool};

/// A tournament's fields as stored: name, site, start and end date, time control, delay.
type TournamentRow = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
);

/// Transaction lock number under which halls decide, one at a time, which tournament a keyed
/// tournament of theirs fills.
const EVENT_LOCK: i64 = 0x7265_6c61_795f_6576;

/// The local tournament a venue's tournament `$t` fills. Without an event key, one of its
/// own, as ever. With one, the tournament here with that key, which other halls may fill
/// too; a venue whose tournament here was its own names it with the key. A venue whose
/// tournament moves to another one here (its key was set after its first pushes) forgets its
/// rounds and games there, and is asked to send everything again (`resend`, kept in
/// `mirror_sources` until a batch says it was done).
macro_rules! tournament_of {
    ($tx:expr, $pg:expr, $b:expr, $t:expr, $out:expr) => {{
        let (b, t): (&PushBatch, &TournamentInfo) = ($b, $t);
        macro_rules! read {
            () => {{
                let mapped = mapped!($tx, &b.origin, "tournament", t.id).map(|(id, _)| id);
                let keyed: Option<i64> = match &t.event_key {
                    Some(k) => sqlx::query_as::<_, (i64,)>("SELECT id FROM tournaments WHERE event_key = $1")
                        .bind(k)
                        .fetch_optional(&mut *$tx)
                        .await?
                        .map(|(id,)| id),
                    None => None,
                };
                (mapped, keyed)
            }};
        }
        let (mut mapped, mut keyed) = read!();
        // Where a keyed tournament goes is decided one hall at a time: two halls moving from
        // one event to a new one at once could each see the other still in the old one, and
        // both name it (a unique violation, seen in CI). On PostgreSQL the undecided read again
        // under a transaction lock; on SQLite writers are one at a time already.
        if $pg && t.event_key.is_some() && !matches!((mapped, keyed), (Some(m), Some(k)) if m == k) {
            sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(EVENT_LOCK).execute(&mut *$tx).await?;
            (mapped, keyed) = read!();
        }
        match (mapped, keyed) {
            (Some(m), Some(k)) if m == k => m,
            (Some(m), None) if t.event_key.is_none() => m,
            (Some(m), None) if !shared!($tx, &b.origin, "tournament", m) => {
                sqlx::query("UPDATE tournaments SET event_key = $1 WHERE id = $2")
                    .bind(&t.event_key).bind(m).execute(&mut *$tx).await?;
                $out.meta_changed = true;
                m
            }
            (mapped, keyed) => {
                let id = match keyed {
                    Some(k) => k,
                    None => {
                        // Two halls naming a new event at once: one makes it, the other
                        // (on PostgreSQL, waiting on its key until the first commits) takes it.
                        let made: Option<(i64,)> = sqlx::query_as(
                            "INSERT INTO tournaments (name, site, start_date, end_date, time_control, delay_secs, created_at, event_key)
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                             ON CONFLICT (event_key) WHERE event_key IS NOT NULL DO NOTHING RETURNING id")
                            .bind(&t.name).bind(&t.site).bind(&t.start_date).bind(&t.end_date).bind(&t.time_control)
                            .bind(i64::from(t.delay_secs)).bind(now_ms()).bind(&t.event_key).fetch_optional(&mut *$tx).await?;
                        match made {
                            Some((id,)) => id,
                            None => {
                                let (id,): (i64,) = sqlx::query_as("SELECT id FROM tournaments WHERE event_key = $1")
                                    .bind(&t.event_key).fetch_one(&mut *$tx).await?;
                                id
                            }
                        }
                    }
                };
                if let Some(old) = mapped {
                    sqlx::query(
                        "DELETE FROM mirror_ids WHERE origin = $1 AND (
                           (kind = 'round' AND local_id IN (SELECT id FROM rounds WHERE tournament_id = $2))
                           OR (kind = 'game' AND local_id IN (SELECT g.id FROM games g JOIN rounds r ON r.id = g.round_id WHERE r.tournament_id = $2)))")
                        .bind(&b.origin).bind(old).execute(&mut *$tx).await?;
                    sqlx::query("DELETE FROM mirror_clashes WHERE origin = $1 AND round_id IN (SELECT id FROM rounds WHERE tournament_id = $2)")
                        .bind(&b.origin).bind(old).execute(&mut *$tx).await?;
                    // Asked until the venue says it did: a lost answer must not lose it.
                    sqlx::query("UPDATE mirror_sources SET resend = 1 WHERE origin = $1")
                        .bind(&b.origin).execute(&mut *$tx).await?;
                }
                map_id!($tx, &b.origin, "tournament", t.id, id);
                $out.meta_changed = true;
                id
            }
        }
    }};
}

impl Store {
    /// Applies a venue's batch in one transaction (see the module's documentation).
    pub async fn apply_push(&self, b: &PushBatch) -> Result<Applied> {
        let mut out = Applied::default();
        let now = now_ms();
        let pg = matches!(self, Store::Postgres(_));
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            sqlx::query("INSERT INTO mirror_sources (origin, name, batch, applied_at) VALUES ($1, $2, 0, $3) ON CONFLICT (origin) DO NOTHING")
                .bind(&b.origin).bind(&b.name).bind(now).execute(&mut *tx).await?;
            // Also the row lock that makes two requests of one venue wait for each other.
            let newer = sqlx::query("UPDATE mirror_sources SET batch = $1, name = $2, applied_at = $3 WHERE origin = $4 AND batch < $1")
                .bind(b.batch).bind(&b.name).bind(now).bind(&b.origin)
                .execute(&mut *tx).await?.rows_affected();
            if newer == 0 {
                let (last,): (i64,) = sqlx::query_as("SELECT batch FROM mirror_sources WHERE origin = $1")
                    .bind(&b.origin).fetch_one(&mut *tx).await?;
                out.reply.stale = true;
                out.reply.last_batch = last;
                return Ok(out);
            }
            out.reply.last_batch = b.batch;
            if b.resent {
                sqlx::query("UPDATE mirror_sources SET resend = 0 WHERE origin = $1 AND resend <> 0")
                    .bind(&b.origin).execute(&mut *tx).await?;
            }
            for t in &b.tournaments {
                let local_t = tournament_of!(tx, pg, b, t, out);
                out.ids.insert(("tournament", t.id.get()), local_t);
                // An event's tournament (a key, or another venue fills it too: several halls,
                // one event) has the event's settings, which an arbiter here may have prepared:
                // a venue only fills in what is missing and never lowers the delay. A venue of
                // a tournament of its own is followed as before.
                let event = t.event_key.is_some() || shared!(tx, &b.origin, "tournament", local_t);
                let stored: Option<TournamentRow> = sqlx::query_as(
                    "SELECT name, site, start_date, end_date, time_control, delay_secs FROM tournaments WHERE id = $1")
                    .bind(local_t).fetch_optional(&mut *tx).await?;
                let mut want = (t.name.clone(), t.site.clone(), t.start_date.clone(), t.end_date.clone(), t.time_control.clone(), i64::from(t.delay_secs));
                if event && let Some(s) = &stored {
                    want = (s.0.clone(), s.1.clone().or(want.1), s.2.clone().or(want.2), s.3.clone().or(want.3), s.4.clone().or(want.4), s.5.max(want.5));
                }
                if stored.as_ref() != Some(&want) {
                    sqlx::query("UPDATE tournaments SET name = $1, site = $2, start_date = $3, end_date = $4, time_control = $5, delay_secs = $6 WHERE id = $7")
                        .bind(&want.0).bind(&want.1).bind(&want.2).bind(&want.3).bind(&want.4)
                        .bind(want.5).bind(local_t).execute(&mut *tx).await?;
                    out.meta_changed = true;
                }
                for r in &t.rounds {
                    let delay = r.delay_secs.map(i64::from);
                    let local_r = match mapped!(tx, &b.origin, "round", r.id) {
                        Some((id, _)) => id,
                        None => {
                            // A round an arbiter here made already (pairings loaded ahead), or
                            // another hall of the event pushed, is taken: rounds match by number.
                            let there: Option<(i64,)> = sqlx::query_as("SELECT id FROM rounds WHERE tournament_id = $1 AND number = $2")
                                .bind(local_t).bind(&r.number).fetch_optional(&mut *tx).await?;
                            let id = match there {
                                Some((id,)) => id,
                                None => {
                                    // Another hall may be making it at this moment: then its.
                                    sqlx::query("INSERT INTO rounds (tournament_id, number, date, delay_secs, final, auto) VALUES ($1, $2, $3, $4, $5, $6)
                                                 ON CONFLICT (tournament_id, number) DO NOTHING")
                                        .bind(local_t).bind(&r.number).bind(&r.date).bind(delay).bind(i64::from(r.is_final)).bind(i64::from(r.auto))
                                        .execute(&mut *tx).await?;
                                    let (id,): (i64,) = sqlx::query_as("SELECT id FROM rounds WHERE tournament_id = $1 AND number = $2")
                                        .bind(local_t).bind(&r.number).fetch_one(&mut *tx).await?;
                                    id
                                }
                            };
                            map_id!(tx, &b.origin, "round", r.id, id);
                            out.meta_changed = true;
                            id
                        }
                    };
                    let stored: Option<(String, Option<String>, Option<i64>, i64)> = sqlx::query_as(
                        "SELECT number, date, delay_secs, final FROM rounds WHERE id = $1")
                        .bind(local_r).fetch_optional(&mut *tx).await?;
                    let mut want = (r.number.clone(), r.date.clone(), delay, i64::from(r.is_final));
                    // An event's round keeps its number (halls matched by it) and is final
                    // when an arbiter here says so or every hall filling it does, not when
                    // the first hall finishes.
                    if event && let Some(s) = &stored {
                        sqlx::query("UPDATE mirror_ids SET remote_final = $1 WHERE origin = $2 AND kind = 'round' AND remote_id = $3 AND remote_final <> $1")
                            .bind(i64::from(r.is_final)).bind(&b.origin).bind(r.id).execute(&mut *tx).await?;
                        let (all,): (Option<i64>,) = sqlx::query_as("SELECT MIN(remote_final) FROM mirror_ids WHERE kind = 'round' AND local_id = $1")
                            .bind(local_r).fetch_one(&mut *tx).await?;
                        let delay = match (s.2, want.2) { (Some(a), Some(b)) => Some(a.max(b)), (a, b) => a.or(b) };
                        want = (s.0.clone(), s.1.clone().or(want.1), delay, s.3.max(all.unwrap_or(0)));
                    }
                    if stored.as_ref() != Some(&want) {
                        sqlx::query("UPDATE rounds SET number = $1, date = $2, delay_secs = $3, final = $4 WHERE id = $5")
                            .bind(&want.0).bind(&want.1).bind(want.2).bind(want.3).bind(local_r)
                            .execute(&mut *tx).await?;
                        out.meta_changed = true;
                    }
                    out.ids.insert(("round", r.id.get()), local_r);
                }
            }
            let mut game_rounds = std::collections::BTreeSet::new();
            for g in &b.games {
                let Some(round) = out.ids.get(&("round", g.round_id.get())).copied() else {
                    return Err(StoreError::Conflict(format!(
                        "game {} is in round {}, which the batch does not carry", g.id, g.round_id
                    )));
                };
                let (local, baseline) = match mapped!(tx, &b.origin, "game", g.id) {
                    Some((id, edits)) => (id, Some(edits)),
                    None => {
                        let board = i64::from(g.pairing.board_no);
                        sqlx::query("INSERT INTO games (round_id, board_no) VALUES ($1, $2) ON CONFLICT (round_id, board_no) DO NOTHING")
                            .bind(round).bind(board).execute(&mut *tx).await?;
                        let (id,): (i64,) = sqlx::query_as("SELECT id FROM games WHERE round_id = $1 AND board_no = $2")
                            .bind(round).bind(board).fetch_one(&mut *tx).await?;
                        // A game made here (pairings loaded ahead) is taken; one another hall
                        // fills (or this hall, under another of its games) is that game's: this
                        // one is held back, never written over it.
                        let holder: Option<(String,)> = sqlx::query_as(
                            "SELECT s.name FROM mirror_ids m JOIN mirror_sources s ON s.origin = m.origin
                             WHERE m.kind = 'game' AND m.local_id = $1 AND NOT (m.origin = $2 AND m.remote_id = $3) LIMIT 1")
                            .bind(id).bind(&b.origin).bind(g.id).fetch_optional(&mut *tx).await?;
                        if let Some((holder,)) = holder {
                            let round_no = b.tournaments.iter().flat_map(|t| &t.rounds).find(|r| r.id == g.round_id).map(|r| r.number.clone()).unwrap_or_default();
                            let message = clash_message(g.pairing.board_no, &round_no, &holder);
                            let held = serde_json::to_string(g).unwrap_or_default();
                            let known: Option<(i64,)> = sqlx::query_as("SELECT remote_id FROM mirror_clashes WHERE origin = $1 AND remote_id = $2")
                                .bind(&b.origin).bind(g.id).fetch_optional(&mut *tx).await?;
                            out.new_clashes += usize::from(known.is_none());
                            sqlx::query(
                                "INSERT INTO mirror_clashes (origin, remote_id, round_id, board_no, held, message, at) VALUES ($1, $2, $3, $4, $5, $6, $7)
                                 ON CONFLICT (origin, remote_id) DO UPDATE SET round_id = excluded.round_id, board_no = excluded.board_no, held = excluded.held, message = excluded.message")
                                .bind(&b.origin).bind(g.id).bind(round).bind(board).bind(&held).bind(&message).bind(now)
                                .execute(&mut *tx).await?;
                            continue;
                        }
                        map_id!(tx, &b.origin, "game", g.id, id);
                        // A clash the venue settled itself (the game came on a free board).
                        sqlx::query("DELETE FROM mirror_clashes WHERE origin = $1 AND remote_id = $2")
                            .bind(&b.origin).bind(g.id).execute(&mut *tx).await?;
                        (id, None)
                    }
                };
                out.ids.insert(("game", g.id.get()), local);
                let old = game_in!(tx, local);
                if differs(&old, g) {
                    if baseline.is_some_and(|e| e != old.edits) {
                        let round_no = b.tournaments.iter().flat_map(|t| &t.rounds).find(|r| r.id == g.round_id).map(|r| r.number.clone()).unwrap_or_default();
                        let message = conflict_message(g.pairing.board_no, &round_no, local);
                        let held = serde_json::to_string(g).unwrap_or_default();
                        sqlx::query("UPDATE mirror_ids SET held = $1, conflict = $2 WHERE origin = $3 AND kind = 'game' AND remote_id = $4")
                            .bind(&held).bind(&message).bind(&b.origin).bind(g.id).execute(&mut *tx).await?;
                        continue;
                    }
                    out.reply.changes += apply_game!(tx, touched, local, &old, g);
                }
                sqlx::query("UPDATE mirror_ids SET local_edits = (SELECT edits FROM games WHERE id = $1), held = NULL, conflict = NULL, remote_board = $4
                             WHERE origin = $2 AND kind = 'game' AND remote_id = $3")
                    .bind(local).bind(&b.origin).bind(g.id).bind(i64::from(g.pairing.board_no)).execute(&mut *tx).await?;
                game_rounds.insert(round);
            }
            // Games a venue renumbered go to their new boards here, where those are free: in
            // the rounds of this batch's games, and where this venue's games wait (their board
            // may have been freed since; a venue asks at least every 10 s, games or not).
            let waiting: Vec<(i64,)> = sqlx::query_as(
                "SELECT DISTINCT g.round_id FROM mirror_ids m JOIN games g ON g.id = m.local_id
                 WHERE m.origin = $1 AND m.kind = 'game' AND m.follows = 1 AND m.remote_board IS NOT NULL AND m.remote_board <> g.board_no")
                .bind(&b.origin).fetch_all(&mut *tx).await?;
            game_rounds.extend(waiting.into_iter().map(|(r,)| r));
            for round in game_rounds {
                follow_renumbers!(tx, touched, round);
            }
            // Every game still held back from this venue, so its console shows the
            // conflicts as they stand (one settled here disappears there).
            let held: Vec<(i64, i64, i64, String)> = sqlx::query_as(
                "SELECT m.remote_id, m.local_id, g.board_no, m.conflict FROM mirror_ids m JOIN games g ON g.id = m.local_id
                 WHERE m.origin = $1 AND m.kind = 'game' AND m.conflict IS NOT NULL ORDER BY m.local_id")
                .bind(&b.origin).fetch_all(&mut *tx).await?;
            out.reply.conflicts = held.into_iter().map(|(game_id, cloud_game_id, board, message)| PushConflict {
                game_id, cloud_game_id, board_no: u32::try_from(board).unwrap_or(0), message, clash: false,
            }).collect();
            out.reply.conflicts.extend(clashes_in!(&mut *tx, Some(&b.origin)).into_iter().map(|(_, c)| c));
            let (resend,): (i64,) = sqlx::query_as("SELECT resend FROM mirror_sources WHERE origin = $1")
                .bind(&b.origin).fetch_one(&mut *tx).await?;
            out.reply.resend = resend != 0;
            notify!(self, tx, touched);
            if out.meta_changed && matches!(self, Store::Postgres(_)) {
                sqlx::query("SELECT pg_notify($1, '')").bind(ROUNDS_CHANNEL).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            out.rounds = touched.rounds().collect();
        });
        Ok(out)
    }
}
