//! Pushing to another relay: a venue relay sends what it committed to a cloud relay, which
//! keeps it as its own tournaments, rounds and games.
//!
//! The venue's outbox is its change log: for each target it keeps how far each round's
//! changes were delivered (`upstream_sent`), so what was committed is sent after a restart of
//! either side, and nothing is written on the path of a move. A batch carries the *whole*
//! state of every game changed since (and every tournament with its rounds): applying it
//! twice changes nothing, and a backlog of any length collapses to one state per game. Each
//! batch has a number; the cloud applies a batch only when its number is above the last one
//! it applied from that venue, so a request held up in the network cannot take a game back.
//!
//! The cloud stores the difference between what it has and the venue's state, as the
//! writer does for boards (new moves, clocks filled in, a truncation, a result), each a
//! change of its own, in one transaction. A game an arbiter changed here after the venue's
//! last version is not overwritten: the venue's version is held back as a conflict until an
//! arbiter here takes it ([`Store::take_held`]).

use crate::batch::{Touched, bump, notify};
use crate::change::{ChangeRecord, MoveClockRecord, MoveRecord, ResultRecord, TruncateRecord};
use crate::cluster::ROUNDS_CHANNEL;
use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId, Seq};
use crate::model::{self, StoredGame, TournamentInfo};
use crate::pool::{Store, now_ms, on_pool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a venue sends in one request.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PushBatch {
    /// The venue's name for itself, made once and kept in its store.
    pub origin: String,
    /// A name for people (the host it runs on).
    pub name: String,
    /// Numbers grow with every request a venue sends.
    pub batch: i64,
    /// Every tournament with its rounds (change numbers are the venue's and are ignored).
    pub tournaments: Vec<TournamentInfo>,
    /// The whole state of each game changed since the last delivered batch.
    pub games: Vec<StoredGame>,
    /// The venue's e-boards as its console shows them, when they changed (JSON views).
    #[serde(default)]
    pub eboards: Option<Vec<serde_json::Value>>,
    /// The venue forgot what it had delivered, as the cloud asked (`PushReply::resend`),
    /// and sends everything again.
    #[serde(default)]
    pub resent: bool,
}

/// What the cloud answers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PushReply {
    /// The batch was older than one already applied: nothing was done.
    pub stale: bool,
    /// The newest batch number applied from this venue.
    #[serde(default)]
    pub last_batch: i64,
    /// Changes stored (moves, clocks, truncations, results, pairings).
    pub changes: usize,
    /// Every game whose venue version is held back (not only this batch's).
    pub conflicts: Vec<PushConflict>,
    /// The venue's tournament joined an event this relay held under another tournament:
    /// the venue should send every game again (it was forgotten where it was).
    #[serde(default)]
    pub resend: bool,
}

/// A game changed on the cloud by an arbiter after the venue's last version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PushConflict {
    /// The venue's id of the game.
    pub game_id: i64,
    /// The cloud's id of the game.
    pub cloud_game_id: i64,
    pub board_no: u32,
    pub message: String,
    /// The game came for a board another game holds in that round here (several halls, one
    /// event): it is not stored until an arbiter here places it on another board; or its
    /// venue renumbered it onto such a board, and it stays on its old board here until that
    /// board is free or an arbiter places it (the message says which board). `board_no` is
    /// the board claimed; `cloud_game_id` the game holding it (0: none any more).
    #[serde(default)]
    pub clash: bool,
}

/// A batch as applied: the reply, and what the cloud relay must tell its own clients.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    pub reply: PushReply,
    /// Rounds changed, each with its newest change number.
    pub rounds: Vec<(i64, i64)>,
    /// Tournaments or rounds were made or edited.
    pub meta_changed: bool,
    /// The venue's ids as this relay's: (kind, venue id) → id.
    pub ids: HashMap<(&'static str, i64), i64>,
    /// Games of this batch that clash with another hall's and did not before.
    pub new_clashes: usize,
}

/// A venue seen by the cloud: the last batch applied and the games held back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MirrorSource {
    pub origin: String,
    pub name: String,
    pub batch: i64,
    pub applied_at_ms: i64,
    /// `up`: heard from within the last 30 s (a venue sends at least every 10 s);
    /// `silent`: its link is down, or it stopped.
    pub link: &'static str,
    /// This relay's games of open rounds (not final) the venue fills (the console shows
    /// each board's hall).
    pub games: Vec<i64>,
    pub conflicts: Vec<PushConflict>,
}

/// Moves written per INSERT (8 values each, 6 for their changes: far below either
/// backend's limit on values per statement).
const MOVES_PER_STATEMENT: usize = 500;

/// A tournament's fields as stored: name, site, start and end date, time control, delay.
type TournamentRow = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
);

/// The venue's id for itself: 32 hex digits from the process's random hash keys and the time.
fn new_origin(target: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::new();
    for i in 0..2u8 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write(target.as_bytes());
        h.write_u8(i);
        h.write_i64(now_ms());
        h.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// The local id of a venue's tournament, round or game, with the game's edit count as of the
/// last push applied.
macro_rules! mapped {
    ($tx:expr, $origin:expr, $kind:expr, $remote:expr) => {{
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT local_id, local_edits FROM mirror_ids WHERE origin = $1 AND kind = $2 AND remote_id = $3",
        )
        .bind($origin)
        .bind($kind)
        .bind($remote)
        .fetch_optional(&mut *$tx)
        .await?;
        row
    }};
}

macro_rules! map_id {
    ($tx:expr, $origin:expr, $kind:expr, $remote:expr, $local:expr) => {{
        sqlx::query(
            "INSERT INTO mirror_ids (origin, kind, remote_id, local_id) VALUES ($1, $2, $3, $4)
             ON CONFLICT (origin, kind, remote_id) DO UPDATE SET local_id = excluded.local_id",
        )
        .bind($origin)
        .bind($kind)
        .bind($remote)
        .bind($local)
        .execute(&mut *$tx)
        .await?;
    }};
}

/// Whether a venue other than `$origin` fills the local tournament, round or game `$local`.
macro_rules! shared {
    ($tx:expr, $origin:expr, $kind:expr, $local:expr) => {{
        let row: Option<(i64,)> = sqlx::query_as(
            "SELECT local_id FROM mirror_ids WHERE kind = $1 AND local_id = $2 AND origin <> $3 LIMIT 1",
        )
        .bind($kind)
        .bind($local)
        .bind($origin)
        .fetch_optional(&mut *$tx)
        .await?;
        row.is_some()
    }};
}

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

/// A game as stored, read inside the transaction.
macro_rules! game_in {
    ($tx:expr, $id:expr) => {{
        let row: Option<model::GameRow> = sqlx::query_as(model::GAME_SELECT_BY_ID)
            .bind($id)
            .fetch_optional(&mut *$tx)
            .await?;
        let row = row.ok_or(StoreError::NotFound {
            what: "game",
            id: $id.to_string(),
        })?;
        let moves: Vec<model::MoveRow> = sqlx::query_as(
            "SELECT ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after FROM moves WHERE game_id = $1 ORDER BY ply",
        )
        .bind($id)
        .fetch_all(&mut *$tx)
        .await?;
        model::game_from_rows(row, moves)
    }};
}

/// Stores what differs between the local game `$old` and the venue's `$new`, each
/// difference a change of its own; evaluates to the number of changes.
macro_rules! apply_game {
    ($tx:expr, $touched:expr, $id:expr, $old:expr, $new:expr) => {{
        let (id, old, new): (i64, &StoredGame, &StoredGame) = ($id, $old, $new);
        let mut n = 0usize;
        if old.pairing.white != new.pairing.white || old.pairing.black != new.pairing.black {
            let (w, b) = (&new.pairing.white, &new.pairing.black);
            sqlx::query(
                "UPDATE games SET white = $1, white_title = $2, white_elo = $3, white_fide_id = $4, white_fed = $5,
                 black = $6, black_title = $7, black_elo = $8, black_fide_id = $9, black_fed = $10,
                 white_rank = $11, black_rank = $12, white_team = $13, black_team = $14 WHERE id = $15",
            )
            .bind(&w.name).bind(&w.title).bind(w.rating.map(i64::from)).bind(w.fide_id.map(|v| v as i64)).bind(&w.federation)
            .bind(&b.name).bind(&b.title).bind(b.rating.map(i64::from)).bind(b.fide_id.map(|v| v as i64)).bind(&b.federation)
            .bind(w.start_rank.map(i64::from)).bind(b.start_rank.map(i64::from)).bind(&w.team).bind(&b.team)
            .bind(id)
            .execute(&mut *$tx)
            .await?;
            let payload = serde_json::json!({"board_no": old.pairing.board_no}).to_string();
            bump!($tx, $touched, id, "game", &payload);
            n += 1;
        }
        if old.start_fen != new.start_fen || old.chess960 != new.chess960 {
            sqlx::query("UPDATE games SET start_fen = $1, chess960 = $2 WHERE id = $3")
                .bind(&new.start_fen).bind(i64::from(new.chess960)).bind(id)
                .execute(&mut *$tx).await?;
            let payload = serde_json::json!({"start_fen": new.start_fen, "chess960": new.chess960}).to_string();
            bump!($tx, $touched, id, "game", &payload);
            n += 1;
        }
        if old.orientation != new.orientation {
            sqlx::query("UPDATE games SET orientation = $1 WHERE id = $2")
                .bind(&new.orientation).bind(id).execute(&mut *$tx).await?;
        }
        let common = old
            .moves
            .iter()
            .zip(&new.moves)
            .take_while(|(a, b)| a.ply == b.ply && a.uci == b.uci)
            .count();
        if common < old.moves.len() {
            let from_ply = old.moves[common].ply;
            sqlx::query("DELETE FROM moves WHERE game_id = $1 AND ply >= $2")
                .bind(id).bind(i64::from(from_ply)).execute(&mut *$tx).await?;
            let payload = ChangeRecord::Truncate(TruncateRecord { from_ply }).payload();
            bump!($tx, $touched, id, "truncate", &payload);
            n += 1;
        }
        for (a, b) in old.moves.iter().zip(&new.moves).take(common) {
            if a.clk_ms != b.clk_ms || a.emt_ms != b.emt_ms {
                sqlx::query("UPDATE moves SET clk_ms = $1, emt_ms = $2 WHERE game_id = $3 AND ply = $4")
                    .bind(b.clk_ms.map(|v| v as i64)).bind(b.emt_ms.map(|v| v as i64)).bind(id).bind(i64::from(b.ply))
                    .execute(&mut *$tx).await?;
                let payload = ChangeRecord::MoveClock(MoveClockRecord { ply: b.ply, clk_ms: b.clk_ms, emt_ms: b.emt_ms }).payload();
                bump!($tx, $touched, id, "move_clock", &payload);
                n += 1;
            }
        }
        let fresh = &new.moves[common..];
        if !fresh.is_empty() {
            // All of a game's new moves in three statements, however many (a backlog after
            // an outage brings hundreds): their change numbers are taken at once under the
            // round's row lock, then moves and changes go in as multi-row inserts.
            let row: Option<(i64, i64)> = sqlx::query_as(
                "UPDATE rounds SET seq = seq + $1 WHERE id = (SELECT round_id FROM games WHERE id = $2) RETURNING id, seq",
            )
            .bind(fresh.len() as i64)
            .bind(id)
            .fetch_optional(&mut *$tx)
            .await?;
            let (round, last) = row.ok_or(StoreError::NotFound { what: "game", id: id.to_string() })?;
            let first = last - fresh.len() as i64 + 1;
            let at = now_ms();
            for (k, part) in fresh.chunks(MOVES_PER_STATEMENT).enumerate() {
                let mut q = sqlx::QueryBuilder::new(
                    "INSERT INTO moves (game_id, ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after) ",
                );
                q.push_values(part, |mut row, m| {
                    row.push_bind(id).push_bind(i64::from(m.ply)).push_bind(&m.san).push_bind(&m.uci)
                        .push_bind(m.clk_ms.map(|v| v as i64)).push_bind(m.emt_ms.map(|v| v as i64))
                        .push_bind(m.accepted_at_ms).push_bind(&m.fen_after);
                });
                q.build().execute(&mut *$tx).await?;
                let base = first + (k * MOVES_PER_STATEMENT) as i64;
                let mut q = sqlx::QueryBuilder::new(
                    "INSERT INTO changes (round_id, seq, game_id, kind, payload, at) ",
                );
                q.push_values(part.iter().enumerate(), |mut row, (j, m)| {
                    row.push_bind(round).push_bind(base + j as i64).push_bind(id).push_bind("move")
                        .push_bind(ChangeRecord::Move(MoveRecord::from(m)).payload()).push_bind(at);
                });
                q.build().execute(&mut *$tx).await?;
            }
            $touched.note(round, last);
            n += fresh.len();
        }
        let playing = |s: &str| s == "pending" || s == "live";
        let result_news = old.result != new.result
            || old.termination != new.termination
            || (old.status != new.status && !(playing(&old.status) && playing(&new.status)));
        if result_news || old.status != new.status || old.result_at_ms != new.result_at_ms {
            sqlx::query("UPDATE games SET result = $1, termination = $2, status = $3, result_at = $4 WHERE id = $5")
                .bind(&new.result).bind(&new.termination).bind(&new.status).bind(new.result_at_ms).bind(id)
                .execute(&mut *$tx).await?;
        }
        if result_news {
            let payload = ChangeRecord::Result(ResultRecord {
                result: new.result.clone(),
                termination: new.termination.clone(),
                status: new.status.clone(),
            })
            .payload();
            bump!($tx, $touched, id, "result", &payload);
            n += 1;
        }
        n
    }};
}

/// A venue renumbers its boards (an arbiter there swaps two, or moves one to a free number):
/// each game of round `$round` that follows its venue's number (`mirror_ids.follows`, ended
/// by an arbiter here placing it) and is not on it goes there, when the board is free or its
/// game moves away too (a swap, whichever order the venue's games came in). One whose board
/// another game keeps stays where it is, listed as a clash ([`clashes_in!`]) until that
/// board is free or an arbiter here places it ([`Store::settle_clash`]).
macro_rules! follow_renumbers {
    ($tx:expr, $touched:expr, $round:expr) => {{
        let round: i64 = $round;
        const WANTED: &str = "SELECT g.id, m.remote_board, m.origin FROM games g JOIN mirror_ids m ON m.kind = 'game' AND m.local_id = g.id
             WHERE g.round_id = $1 AND m.follows = 1 AND m.remote_board IS NOT NULL AND m.remote_board <> g.board_no
             ORDER BY g.id";
        let mut wanted: Vec<(i64, i64, String)> = sqlx::query_as(WANTED).bind(round).fetch_all(&mut *$tx).await?;
        if !wanted.is_empty() {
            // The round's row lock, then a second read: another hall's batch may be moving
            // the same games (a pass moves every hall's of the round) on PostgreSQL.
            sqlx::query("UPDATE rounds SET seq = seq WHERE id = $1").bind(round).execute(&mut *$tx).await?;
            wanted = sqlx::query_as(WANTED).bind(round).fetch_all(&mut *$tx).await?;
        }
        if !wanted.is_empty() {
            let boards: Vec<(i64, i64, Option<String>)> = sqlx::query_as(
                "SELECT g.board_no, g.id, m.origin FROM games g LEFT JOIN mirror_ids m ON m.kind = 'game' AND m.local_id = g.id
                 WHERE g.round_id = $1")
                .bind(round).fetch_all(&mut *$tx).await?;
            let holder: HashMap<i64, (i64, Option<String>)> = boards.into_iter().map(|(b, g, o)| (b, (g, o))).collect();
            let moves = renumber_plan(&wanted, &holder);
            // Each moving game through a number no board has ((round, board) is unique at
            // every step), then onto its own.
            for (game, _) in &moves {
                sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(-game).bind(game).execute(&mut *$tx).await?;
            }
            for (game, to) in &moves {
                sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(to).bind(game).execute(&mut *$tx).await?;
                let payload = serde_json::json!({"board_no": to}).to_string();
                bump!($tx, $touched, *game, "game", &payload);
            }
        }
    }};
}

/// Which of the `wanted` moves (game, board wanted, its venue) can be made together: those
/// whose board is free, or held by a game that moves too. Of several games wanting one board,
/// one of the holder's venue goes first (the holder's partner in a swap or turn), else the
/// first by id; the others wait. Rivals are dropped only once every move whose board is held
/// by a game staying is out, so a hall's own swap is not lost to another hall's waiting game.
fn renumber_plan(
    wanted: &[(i64, i64, String)],
    holder: &HashMap<i64, (i64, Option<String>)>,
) -> Vec<(i64, i64)> {
    let mut moving: Vec<&(i64, i64, String)> = wanted.iter().collect();
    loop {
        let games: Vec<i64> = moving.iter().map(|m| m.0).collect();
        let before = moving.len();
        moving.retain(|m| holder.get(&m.1).is_none_or(|h| games.contains(&h.0)));
        if moving.len() != before {
            continue;
        }
        // One game per board.
        let mut chosen: Vec<&(i64, i64, String)> = Vec::new();
        for m in &moving {
            let Some(k) = chosen.iter().position(|c| c.1 == m.1) else {
                chosen.push(m);
                continue;
            };
            let partner = |c: &(i64, i64, String)| {
                holder.get(&c.1).and_then(|h| h.1.as_deref()) == Some(c.2.as_str())
            };
            if partner(m) && !partner(chosen[k]) {
                chosen[k] = m;
            }
        }
        if chosen.len() == moving.len() {
            return moving.iter().map(|m| (m.0, m.1)).collect();
        }
        moving = chosen;
    }
}

/// A venue whose last request (a heartbeat comes every 10 s) is older than this shows as
/// silent: its link is down or the relay stopped.
pub const LINK_SILENT_MS: i64 = 30_000;

fn clash_message(board_no: u32, round: &str, holder: &str) -> String {
    format!(
        "board {board_no} of round {round}: the game of hall {holder} holds this board on the cloud relay; this hall's game is held back, not written over it, until an arbiter there places it on another board (or this hall gives it a free board number, --first-board)"
    )
}

/// A clash as the venue and console show it: the venue's game, the game holding the board
/// here (0: none any more), the board claimed.
fn clash(game_id: i64, holder: Option<i64>, board: i64, message: String) -> PushConflict {
    PushConflict {
        game_id,
        cloud_game_id: holder.unwrap_or(0),
        board_no: u32::try_from(board).unwrap_or(0),
        message,
        clash: true,
    }
}

/// Every clash, or one venue's: (origin, the conflict as the venue and console show it, with
/// `cloud_game_id` the game holding the board). A clash whose game has a place here since
/// (a push that raced an arbiter's settling may leave its row behind) is not one.
macro_rules! clashes_in {
    ($ex:expr, $origin:expr) => {{
        let origin: Option<&str> = $origin;
        let rows: Vec<(String, i64, i64, String, Option<i64>)> = sqlx::query_as(
            "SELECT c.origin, c.remote_id, c.board_no, c.message,
               (SELECT g.id FROM games g WHERE g.round_id = c.round_id AND g.board_no = c.board_no)
             FROM mirror_clashes c
             WHERE NOT EXISTS (SELECT 1 FROM mirror_ids m WHERE m.origin = c.origin AND m.kind = 'game' AND m.remote_id = c.remote_id)
             ORDER BY c.round_id, c.board_no",
        )
        .fetch_all($ex)
        .await?;
        rows.into_iter()
            .filter(|r| origin.is_none_or(|o| o == r.0))
            .map(|(origin, game_id, board, message, holder)| (origin, clash(game_id, holder, board, message)))
            .chain(renumbers_held!($ex, origin))
            .collect::<Vec<(String, PushConflict)>>()
    }};
}

/// The query behind [`renumbers_held!`] (`concat!` adds one venue's filter to it).
macro_rules! renumbers_held_sql {
    () => {
        "SELECT m.origin, m.remote_id, m.remote_board, g.board_no, r.number, h.id,
                 (SELECT s.name FROM mirror_ids hm JOIN mirror_sources s ON s.origin = hm.origin WHERE hm.kind = 'game' AND hm.local_id = h.id LIMIT 1)
               FROM mirror_ids m JOIN games g ON g.id = m.local_id JOIN rounds r ON r.id = g.round_id
               LEFT JOIN games h ON h.round_id = g.round_id AND h.board_no = m.remote_board
               WHERE m.kind = 'game' AND m.follows = 1 AND m.remote_board IS NOT NULL AND m.remote_board <> g.board_no"
    };
}

/// The order of [`renumbers_held!`]'s list (a console compares lists as they come).
macro_rules! renumbers_held_order {
    () => {
        " ORDER BY g.round_id, m.remote_board, m.origin, m.remote_id"
    };
}

/// The games a venue renumbered that stay on their old board here, as clashes (see
/// [`follow_renumbers!`]): (origin, the conflict, `board_no` the venue's new number).
macro_rules! renumbers_held {
    ($ex:expr, $origin:expr) => {{
        let origin: Option<&str> = $origin;
        type Row = (String, i64, i64, i64, String, Option<i64>, Option<String>);
        let rows: Vec<Row> = match origin {
            Some(o) => sqlx::query_as(concat!(renumbers_held_sql!(), " AND m.origin = $1", renumbers_held_order!())).bind(o).fetch_all($ex).await?,
            None => sqlx::query_as(concat!(renumbers_held_sql!(), renumbers_held_order!())).fetch_all($ex).await?,
        };
        rows.into_iter().map(|(origin, game_id, want, now, round, holder, holder_name)| {
            let holder_text = match (holder, holder_name) {
                (None, _) => "no game (it moves with the hall's next request)".to_string(),
                (Some(_), Some(name)) => format!("the game of hall {name}"),
                (Some(_), None) => "a game of this relay's own".to_string(),
            };
            let message = format!(
                "board {want} of round {round}: this hall renumbered its game to it, but on the cloud relay {holder_text} holds it; the game stays on board {now} there until that board is free or an arbiter there places it"
            );
            (origin, clash(game_id, holder, want, message))
        }).collect::<Vec<(String, PushConflict)>>()
    }};
}

pub mod halls;

/// Whether the venue's game says anything the local one does not (what spectators see).
fn differs(old: &StoredGame, new: &StoredGame) -> bool {
    let moves = |g: &StoredGame| {
        g.moves
            .iter()
            .map(|m| (m.ply, m.uci.clone(), m.clk_ms, m.emt_ms))
            .collect::<Vec<_>>()
    };
    old.pairing.white != new.pairing.white
        || old.pairing.black != new.pairing.black
        || old.start_fen != new.start_fen
        || old.chess960 != new.chess960
        || old.result != new.result
        || old.termination != new.termination
        || old.status != new.status
        || moves(old) != moves(new)
}

fn conflict_message(board_no: u32, round: &str, cloud_game: i64) -> String {
    format!(
        "board {board_no} of round {round}: an arbiter on this relay changed the game after the venue's last version; the venue's newer version is held back, not written over it (take it with POST /api/games/{cloud_game}/take-venue, or correct the game at the venue too)"
    )
}

impl Store {
    /// The venue's name for itself towards `target`: made on first use, the same for every
    /// target.
    pub async fn upstream_origin(&self, target: &str) -> Result<String> {
        let fresh = new_origin(target);
        on_pool!(self, pool => {
            // One name for every target: a venue whose --push-to changes (https, a proxy) is
            // the same venue to the cloud, not a new one whose games clash with its own
            // (its batch numbers there go on from the cloud's, as after a restore: `stale`).
            sqlx::query("INSERT INTO upstream_targets (target, origin, batch)
                         VALUES ($1, COALESCE((SELECT MIN(origin) FROM upstream_targets), $2), 0) ON CONFLICT (target) DO NOTHING")
                .bind(target).bind(&fresh).execute(pool).await?;
            let (origin,): (String,) = sqlx::query_as("SELECT origin FROM upstream_targets WHERE target = $1")
                .bind(target).fetch_one(pool).await?;
            Ok(origin)
        })
    }

    /// Reserves `n` batch numbers for `target` and returns the last of them (kept, so
    /// numbers grow across restarts, with one write per `n` requests).
    pub async fn upstream_reserve_batches(&self, target: &str, n: i64) -> Result<i64> {
        on_pool!(self, pool => {
            let row: Option<(i64,)> = sqlx::query_as("UPDATE upstream_targets SET batch = batch + $1 WHERE target = $2 RETURNING batch")
                .bind(n).bind(target).fetch_optional(pool).await?;
            row.map(|(b,)| b).ok_or(StoreError::NotFound { what: "push target", id: target.to_string() })
        })
    }

    /// Numbers batches for `target` on from `last` (the cloud has applied it already).
    pub async fn upstream_skip_batches(&self, target: &str, last: i64) -> Result<()> {
        on_pool!(self, pool => {
            sqlx::query("UPDATE upstream_targets SET batch = $1 WHERE target = $2 AND batch < $1")
                .bind(last).bind(target).execute(pool).await?;
        });
        Ok(())
    }

    /// How far each round's changes were delivered to `target`.
    pub async fn upstream_sent(&self, target: &str) -> Result<HashMap<RoundId, Seq>> {
        on_pool!(self, pool => {
            let rows: Vec<(RoundId, Seq)> = sqlx::query_as("SELECT round_id, seq FROM upstream_sent WHERE target = $1")
                .bind(target).fetch_all(pool).await?;
            Ok(rows.into_iter().collect())
        })
    }

    /// Notes rounds' changes as delivered to `target` up to the given numbers (never back).
    pub async fn upstream_delivered(&self, target: &str, upto: &[(RoundId, Seq)]) -> Result<()> {
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            for (round, seq) in upto {
                sqlx::query("INSERT INTO upstream_sent (target, round_id, seq) VALUES ($1, $2, $3)
                             ON CONFLICT (target, round_id) DO UPDATE SET seq = excluded.seq WHERE upstream_sent.seq < excluded.seq")
                    .bind(target).bind(round).bind(seq).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Forgets how far rounds were delivered to `target`: everything goes again (the
    /// target asked for it, `PushReply::resend`).
    pub async fn upstream_forget(&self, target: &str) -> Result<()> {
        on_pool!(self, pool => {
            sqlx::query("DELETE FROM upstream_sent WHERE target = $1").bind(target).execute(pool).await?;
        });
        Ok(())
    }

    /// The games of a round's changes after `after`, in change order: (seq, game), at most
    /// `limit`.
    pub async fn change_games_since(
        &self,
        round: RoundId,
        after: Seq,
        limit: u32,
    ) -> Result<Vec<(Seq, Option<GameId>)>> {
        Ok(on_pool!(self, pool => sqlx::query_as(
            "SELECT seq, game_id FROM changes WHERE round_id = $1 AND seq > $2 ORDER BY seq LIMIT $3")
            .bind(round).bind(after).bind(i64::from(limit)).fetch_all(pool).await?))
    }

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

    /// An arbiter here takes the venue's version held back for `game` (see
    /// [`PushConflict`]): it replaces this relay's, and the game follows the venue again.
    /// Returns the rounds changed.
    pub async fn take_held(&self, game: i64) -> Result<Vec<(i64, i64)>> {
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            let row: Option<(String, i64, Option<String>)> = sqlx::query_as(
                "SELECT origin, remote_id, held FROM mirror_ids WHERE kind = 'game' AND local_id = $1")
                .bind(game).fetch_optional(&mut *tx).await?;
            let Some((origin, remote, Some(held))) = row else {
                return Err(StoreError::NotFound { what: "venue version held back for game", id: game.to_string() });
            };
            let new: StoredGame = serde_json::from_str(&held)
                .map_err(|e| StoreError::Conflict(format!("the venue's version of game {game} does not read: {e}")))?;
            let old = game_in!(tx, game);
            apply_game!(tx, touched, game, &old, &new);
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                .bind(now_ms()).bind("arbiter").bind("take-venue").bind(game).bind(&held)
                .execute(&mut *tx).await?;
            sqlx::query("UPDATE mirror_ids SET local_edits = (SELECT edits FROM games WHERE id = $1), held = NULL, conflict = NULL
                         WHERE origin = $2 AND kind = 'game' AND remote_id = $3")
                .bind(game).bind(&origin).bind(remote).execute(&mut *tx).await?;
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(touched.rounds().collect())
        })
    }

    /// A venue's ids as this relay's: (kind, venue id) → id.
    pub async fn mirror_ids(&self, origin: &str) -> Result<HashMap<(String, i64), i64>> {
        on_pool!(self, pool => {
            let rows: Vec<(String, i64, i64)> = sqlx::query_as("SELECT kind, remote_id, local_id FROM mirror_ids WHERE origin = $1")
                .bind(origin).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(k, r, l)| ((k, r), l)).collect())
        })
    }

    /// The board numbers here of these games (a venue's e-board names its own board, which
    /// an arbiter here may have moved to another, settling a clash).
    pub async fn board_numbers(&self, games: &[GameId]) -> Result<HashMap<GameId, u32>> {
        if games.is_empty() {
            return Ok(HashMap::new());
        }
        let rows: Vec<(GameId, i64)> = on_pool!(self, pool => {
            let mut q = sqlx::QueryBuilder::new("SELECT id, board_no FROM games WHERE id IN (");
            let mut list = q.separated(", ");
            for g in games {
                list.push_bind(*g);
            }
            q.push(")");
            q.build_query_as().fetch_all(pool).await?
        });
        Ok(rows
            .into_iter()
            .map(|(g, b)| (g, u32::try_from(b).unwrap_or(0)))
            .collect())
    }

    /// Every venue that pushed here: its link as last heard, the games it fills, and the
    /// games held back from it (changed here by an arbiter, or clashing with another hall's).
    pub async fn mirror_sources(&self) -> Result<Vec<MirrorSource>> {
        let now = now_ms();
        on_pool!(self, pool => {
            let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(
                "SELECT origin, name, batch, applied_at FROM mirror_sources ORDER BY applied_at DESC")
                .fetch_all(pool).await?;
            let held: Vec<(String, i64, i64, i64, String)> = sqlx::query_as(
                "SELECT m.origin, m.remote_id, m.local_id, g.board_no, m.conflict FROM mirror_ids m JOIN games g ON g.id = m.local_id
                 WHERE m.kind = 'game' AND m.conflict IS NOT NULL ORDER BY m.local_id")
                .fetch_all(pool).await?;
            let clashes = clashes_in!(pool, None);
            // Games of open rounds only: the list would grow with every round of an event.
            let games: Vec<(String, i64)> = sqlx::query_as(
                "SELECT m.origin, m.local_id FROM mirror_ids m JOIN games g ON g.id = m.local_id JOIN rounds r ON r.id = g.round_id
                 WHERE m.kind = 'game' AND r.final = 0 ORDER BY m.local_id")
                .fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(origin, name, batch, applied_at_ms)| {
                let conflicts = held.iter().filter(|h| h.0 == origin).map(|h| PushConflict {
                    game_id: h.1, cloud_game_id: h.2, board_no: u32::try_from(h.3).unwrap_or(0), message: h.4.clone(), clash: false,
                }).chain(clashes.iter().filter(|c| c.0 == origin).map(|c| c.1.clone())).collect();
                let games = games.iter().filter(|g| g.0 == origin).map(|g| g.1).collect();
                let link = if now - applied_at_ms <= LINK_SILENT_MS { "up" } else { "silent" };
                MirrorSource { origin, name, batch, applied_at_ms, link, games, conflicts }
            }).collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_moves_what_can_move_together() {
        // Boards 1, 2, 3 hold hall A's games 10, 20, 30; board 4 is free; board 7 holds hall
        // B's game 70.
        let a = |g| (g, Some("a".to_string()));
        let holder: HashMap<i64, (i64, Option<String>)> = [
            (1, a(10)),
            (2, a(20)),
            (3, a(30)),
            (7, (70, Some("b".into()))),
        ]
        .into();
        let plan = |w: &[(i64, i64, &str)]| {
            let w: Vec<(i64, i64, String)> =
                w.iter().map(|&(g, to, o)| (g, to, o.into())).collect();
            renumber_plan(&w, &holder)
        };
        // A swap, a three-way turn, a move to a free board.
        assert_eq!(plan(&[(10, 2, "a"), (20, 1, "a")]), [(10, 2), (20, 1)]);
        assert_eq!(
            plan(&[(10, 2, "a"), (20, 3, "a"), (30, 1, "a")]),
            [(10, 2), (20, 3), (30, 1)]
        );
        assert_eq!(plan(&[(30, 4, "a")]), [(30, 4)]);
        // A chain onto a game that stays waits as a whole: 10 onto 20's board, 20 onto 30's.
        assert_eq!(plan(&[(10, 2, "a"), (20, 3, "a")]), []);
        // …and a chain ending on a free board moves as a whole.
        assert_eq!(
            plan(&[(10, 2, "a"), (20, 3, "a"), (30, 4, "a")]),
            [(10, 2), (20, 3), (30, 4)]
        );
        // Two games for one free board: the first goes, the other waits.
        assert_eq!(plan(&[(10, 4, "a"), (20, 4, "a")]), [(10, 4)]);
        // Hall B's game 5 waits for board 2 when hall A swaps 1 and 2: the swap is made (its
        // partner is of the holder's hall), and hall B's game still waits.
        assert_eq!(
            plan(&[(5, 2, "b"), (10, 2, "a"), (20, 1, "a")]),
            [(10, 2), (20, 1)]
        );
        // A game that stays (hall B's on 7) blocks whoever wants its board.
        assert_eq!(plan(&[(10, 7, "a")]), []);
    }
}
