//! Group commit: many changes in one transaction, so that the rate of durable commits (one
//! fsync each) no longer bounds how many boards the relay can follow. Each change still raises
//! its round's change number and is recorded in `changes`; the numbers come back only after
//! the one commit, so the caller still publishes nothing a crash could take back.
//!
//! The single-change methods (`record_move`, `truncate_moves`, `set_result`,
//! `set_move_clock`) are a batch of one, so each SQL text is written once.

use crate::change::{ChangeRecord, MoveClockRecord, MoveRecord, ResultRecord, TruncateRecord};
use crate::error::{Result, StoreError};
use crate::id::{GameId, Seq};
use crate::incidents::Incident;
use crate::model::{RawEntry, StoredMove};
use crate::pool::{Store, now_ms, on_pool};
use relay_core::incident::IllegalKind;

/// One change to a game, as part of a [`Store::commit`].
#[derive(Clone, Debug)]
pub enum Op {
    /// The move at `m.ply`; a ply already stored is refused (the whole batch fails with
    /// [`StoreError::Conflict`] and nothing of it is written).
    Move { game: GameId, m: StoredMove },
    /// The clock of a move, known once the lever press that ended it is seen; nothing (and
    /// no change number) when the move is no longer there.
    MoveClock {
        game: GameId,
        ply: u32,
        clk_ms: Option<u64>,
        emt_ms: Option<u64>,
    },
    /// Removes the moves from `from_ply` on, keeping the reason in the audit trail.
    Truncate {
        game: GameId,
        from_ply: u32,
        actor: String,
        reason: String,
    },
    /// An arbiter's edit of `game` made on its `edits`-th version: counts the edit, and
    /// refuses the whole batch ([`StoreError::Conflict`]) when another edit came first. No
    /// change number of its own.
    Guard { game: GameId, edits: i64 },
    /// Puts an illegal move or a clock correction on the game's record. Not a change of the
    /// round (spectators' feeds never carry it): its slot in the returned numbers holds the
    /// incident's id instead.
    Incident { game: GameId, incident: Incident },
    /// Sets a game's result and status.
    Result {
        game: GameId,
        result: String,
        termination: Option<String>,
        status: String,
        actor: String,
    },
}

impl Op {
    pub fn game(&self) -> GameId {
        match self {
            Op::Move { game, .. }
            | Op::MoveClock { game, .. }
            | Op::Truncate { game, .. }
            | Op::Guard { game, .. }
            | Op::Incident { game, .. }
            | Op::Result { game, .. } => *game,
        }
    }

    /// The change as recorded in `changes` (a guard records none).
    pub fn record(&self) -> ChangeRecord {
        match self {
            Op::Guard { .. } | Op::Incident { .. } => ChangeRecord::Game,
            Op::Move { m, .. } => ChangeRecord::Move(MoveRecord::from(m)),
            Op::MoveClock {
                ply,
                clk_ms,
                emt_ms,
                ..
            } => ChangeRecord::MoveClock(MoveClockRecord {
                ply: *ply,
                clk_ms: *clk_ms,
                emt_ms: *emt_ms,
            }),
            Op::Truncate { from_ply, .. } => ChangeRecord::Truncate(TruncateRecord {
                from_ply: *from_ply,
            }),
            Op::Result {
                result,
                termination,
                status,
                ..
            } => ChangeRecord::Result(ResultRecord {
                result: result.clone(),
                termination: termination.clone(),
                status: status.clone(),
            }),
        }
    }
}

/// What both commit paths (sqlx's and `crate::direct`) say and record alike.
pub(crate) mod same {
    use crate::error::StoreError;
    use crate::id::GameId;

    /// The refusal of a move whose ply the game has already.
    pub fn ply_taken(game: GameId, ply: u32) -> StoreError {
        StoreError::Conflict(format!("game {game} already has ply {ply}"))
    }

    pub fn no_game(game: GameId) -> StoreError {
        StoreError::NotFound {
            what: "game",
            id: game.to_string(),
        }
    }

    /// The refusal of an arbiter's edit of `game` made on its `edits`-th version, the game
    /// being at edit `now` (`None`: no such game).
    pub fn edited_meanwhile(game: GameId, edits: i64, now: Option<i64>) -> StoreError {
        match now {
            None => no_game(game),
            Some(now) => StoreError::Conflict(format!(
                "game {game} was edited meanwhile by another arbiter (it is at edit {now}, this change was made on edit {edits}); read the game again and redo the change if it is still needed"
            )),
        }
    }

    /// The audit trail's record of a truncation.
    pub fn truncate_detail(from_ply: u32, reason: &str) -> String {
        serde_json::json!({"from_ply": from_ply, "reason": reason}).to_string()
    }
}

/// The SQL of a group commit, written once for sqlx's path (both backends) and SQLite's direct
/// one (`crate::direct`); placeholders are `$n`, which both backends read.
pub(crate) mod sql {
    /// A game's pairing on its board, made or replaced (its moves and result untouched):
    /// the players, their start ranks and teams, and, when `$18` is 1, the team match (a
    /// pairing program's file sets it; the API's pairings leave it as it is).
    pub const PAIRING: &str = "INSERT INTO games (round_id, board_no, white, white_title, white_elo, white_fide_id, white_fed,
                                      black, black_title, black_elo, black_fide_id, black_fed,
                                      white_rank, black_rank, white_team, black_team, match_no)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         ON CONFLICT (round_id, board_no) DO UPDATE SET
           white = excluded.white, white_title = excluded.white_title, white_elo = excluded.white_elo,
           white_fide_id = excluded.white_fide_id, white_fed = excluded.white_fed,
           black = excluded.black, black_title = excluded.black_title, black_elo = excluded.black_elo,
           black_fide_id = excluded.black_fide_id, black_fed = excluded.black_fed,
           white_rank = excluded.white_rank, black_rank = excluded.black_rank,
           white_team = excluded.white_team, black_team = excluded.black_team,
           match_no = CASE WHEN $18 = 1 THEN excluded.match_no ELSE games.match_no END
         RETURNING id";
    /// One reading of the black box (the direct path; sqlx's builds a many-row INSERT).
    pub const RAW: &str =
        "INSERT INTO raw_log (port, serial, received_at, bytes) VALUES ($1, $2, $3, $4)";
    /// A move; the row comes back only when the move was inserted, with its game's status:
    /// the game turns live with its first move, and the UPDATE that says so ([`GAME_LIVE`])
    /// runs only then (one statement a move fewer).
    pub const MOVE: &str =
        "INSERT INTO moves (game_id, ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (game_id, ply) DO NOTHING
         RETURNING (SELECT status FROM games WHERE id = $1)";
    pub const GAME_LIVE: &str =
        "UPDATE games SET status = 'live' WHERE id = $1 AND status = 'pending'";
    pub const MOVE_CLOCK: &str =
        "UPDATE moves SET clk_ms = $1, emt_ms = $2 WHERE game_id = $3 AND ply = $4";
    pub const TRUNCATE: &str = "DELETE FROM moves WHERE game_id = $1 AND ply >= $2";
    pub const AUDIT: &str =
        "INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)";
    pub const RESULT: &str =
        "UPDATE games SET result = $1, termination = $2, status = $3, result_at = $4 WHERE id = $5";
    /// Raises the round's change number for a change to game `$1`.
    pub const BUMP: &str = "UPDATE rounds SET seq = seq + 1 WHERE id = (SELECT round_id FROM games WHERE id = $1) RETURNING id, seq";
    pub const CHANGE: &str = "INSERT INTO changes (round_id, seq, game_id, kind, payload, at) VALUES ($1, $2, $3, $4, $5, $6)";
    /// Counts an arbiter's edit of game `$1` made on its `$2`-th version.
    pub const GUARD: &str = "UPDATE games SET edits = edits + 1 WHERE id = $1 AND edits = $2";
    pub const EDITS: &str = "SELECT edits FROM games WHERE id = $1";
}

/// The rounds a transaction changed, each with its newest change number.
#[derive(Default)]
pub(crate) struct Touched(std::collections::BTreeMap<i64, i64>);

impl Touched {
    pub(crate) fn note(&mut self, round: i64, seq: i64) {
        let e = self.0.entry(round).or_insert(seq);
        *e = (*e).max(seq);
    }
    pub(crate) fn rounds(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.0.iter().map(|(r, s)| (*r, *s))
    }
}

/// Raises the round's change number for a change to `game` and records the change, inside the
/// transaction `tx` (a macro so that it is written once for both backends' types). The round's
/// newest number is noted in `$touched` for `notify!`.
macro_rules! bump {
    ($tx:expr, $touched:expr, $game:expr, $kind:expr, $payload:expr) => {{
        let row: Option<(i64, i64)> = sqlx::query_as($crate::batch::sql::BUMP)
            .bind($game)
            .fetch_optional(&mut *$tx)
            .await?;
        let (round, seq) =
            row.ok_or_else(|| $crate::batch::same::no_game($crate::id::GameId::from($game)))?;
        sqlx::query($crate::batch::sql::CHANGE)
            .bind(round)
            .bind(seq)
            .bind($game)
            .bind($kind)
            .bind($payload)
            .bind($crate::pool::now_ms())
            .execute(&mut *$tx)
            .await?;
        $touched.note(round, seq);
        seq
    }};
}
pub(crate) use bump;

/// Tells every other relay on the same PostgreSQL which rounds the transaction `tx` changed,
/// up to which change number: one notification per round, sent by the server at the commit
/// (never if it rolls back). Only the numbers travel; listeners read the changes from the
/// log. SQLite has one relay per file and nobody to tell.
macro_rules! notify {
    ($store:expr, $tx:expr, $touched:expr) => {{
        if matches!($store, $crate::pool::Store::Postgres(_)) {
            for (round, seq) in $touched.rounds() {
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind($crate::cluster::CHANGES_CHANNEL)
                    .bind(format!("{round}:{seq}"))
                    .execute(&mut *$tx)
                    .await?;
            }
        }
    }};
}
pub(crate) use notify;

/// Counts an arbiter's edit of `game`, made on its `edits`-th version, inside the transaction
/// `tx`; a conflict (returned from the caller) when another edit came first.
macro_rules! guard {
    ($tx:expr, $game:expr, $edits:expr) => {{
        let (game, edits): ($crate::id::GameId, i64) = ($game.into(), $edits);
        let n = sqlx::query($crate::batch::sql::GUARD)
            .bind(game)
            .bind(edits)
            .execute(&mut *$tx)
            .await?
            .rows_affected();
        if n == 0 {
            let now: Option<(i64,)> = sqlx::query_as($crate::batch::sql::EDITS)
                .bind(game)
                .fetch_optional(&mut *$tx)
                .await?;
            return Err($crate::batch::same::edited_meanwhile(
                game,
                edits,
                now.map(|(n,)| n),
            ));
        }
    }};
}
pub(crate) use guard;

/// Readings logged per INSERT (4 values each: far below either backend's limit on values per
/// statement).
const RAWS_PER_STATEMENT: usize = 200;

impl Store {
    /// Logs `raws` (the black box) and applies `ops` in order, all in one transaction. Returns
    /// each op's change number (`None` for a move clock whose move is gone; an incident's id
    /// for [`Op::Incident`]), after the commit.
    /// On any error nothing of the batch is written.
    pub async fn commit(&self, raws: &[RawEntry], ops: &[Op]) -> Result<Vec<Option<i64>>> {
        let mut seqs = Vec::with_capacity(ops.len());
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            // Many rows a statement: with SQLite every statement is a round trip to its
            // worker thread, and 1000 boards send about 2000 readings a second.
            for chunk in raws.chunks(RAWS_PER_STATEMENT) {
                let mut q = sqlx::QueryBuilder::new("INSERT INTO raw_log (port, serial, received_at, bytes) ");
                q.push_values(chunk, |mut row, e| {
                    row.push_bind(&e.port).push_bind(&e.serial).push_bind(e.received_at_ms).push_bind(&e.bytes);
                });
                q.build().execute(&mut *tx).await?;
            }
            for op in ops {
                let game = op.game();
                let record = op.record();
                let payload = record.payload();
                let applied = match op {
                    Op::Move { m, .. } => {
                        let inserted: std::result::Result<Option<(Option<String>,)>, sqlx::Error> = sqlx::query_as(sql::MOVE)
                        .bind(game).bind(i64::from(m.ply)).bind(&m.san).bind(&m.uci)
                        .bind(m.clk_ms.map(|v| v as i64)).bind(m.emt_ms.map(|v| v as i64))
                        .bind(m.accepted_at_ms).bind(&m.fen_after)
                        .fetch_optional(&mut *tx)
                        .await;
                        match inserted {
                            Ok(None) => {
                                return Err(same::ply_taken(game, m.ply));
                            }
                            Ok(Some((status,))) => {
                                if status.as_deref() == Some("pending") {
                                    sqlx::query(sql::GAME_LIVE)
                                        .bind(game).execute(&mut *tx).await?;
                                }
                            }
                            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                                return Err(same::no_game(game));
                            }
                            Err(e) => return Err(e.into()),
                        }
                        true
                    }
                    Op::MoveClock { ply, clk_ms, emt_ms, .. } => {
                        sqlx::query(sql::MOVE_CLOCK)
                            .bind(clk_ms.map(|v| v as i64)).bind(emt_ms.map(|v| v as i64)).bind(game).bind(i64::from(*ply))
                            .execute(&mut *tx).await?.rows_affected() > 0
                    }
                    Op::Truncate { from_ply, actor, reason, .. } => {
                        let detail = same::truncate_detail(*from_ply, reason);
                        sqlx::query(sql::TRUNCATE)
                            .bind(game).bind(i64::from(*from_ply)).execute(&mut *tx).await?;
                        sqlx::query(sql::AUDIT)
                            .bind(now_ms()).bind(actor).bind("truncate").bind(game).bind(&detail)
                            .execute(&mut *tx).await?;
                        true
                    }
                    Op::Guard { edits, .. } => {
                        guard!(tx, game, *edits);
                        false
                    }
                    Op::Incident { incident: i, .. } => {
                        let inserted: std::result::Result<(i64,), sqlx::Error> = sqlx::query_as(crate::incidents::INSERT)
                            .bind(game).bind(i.kind.as_str()).bind(i64::from(i.ply)).bind(i.color.as_str())
                            .bind(i.illegal.map(IllegalKind::name)).bind(&i.uci).bind(&i.piece).bind(&i.captured)
                            .bind(i64::from(i.clock_pressed)).bind(i.delta_ms).bind(i.at_ms)
                            .fetch_one(&mut *tx).await;
                        let id = match inserted {
                            Ok((id,)) => id,
                            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                                return Err(same::no_game(game));
                            }
                            Err(e) => return Err(e.into()),
                        };
                        seqs.push(Some(id));
                        continue;
                    }
                    Op::Result { result, termination, status, actor, .. } => {
                        let n = sqlx::query(sql::RESULT)
                            .bind(result).bind(termination).bind(status).bind(now_ms()).bind(game)
                            .execute(&mut *tx).await?.rows_affected();
                        if n == 0 {
                            return Err(same::no_game(game));
                        }
                        sqlx::query(sql::AUDIT)
                            .bind(now_ms()).bind(actor).bind("result").bind(game).bind(&payload)
                            .execute(&mut *tx).await?;
                        true
                    }
                };
                if applied {
                    let seq = bump!(tx, touched, game, record.kind(), &payload);
                    seqs.push(Some(seq));
                } else {
                    seqs.push(None);
                }
            }
            notify!(self, tx, touched);
            tx.commit().await?;
        });
        Ok(seqs)
    }

    /// One op committed on its own; its change number (`None`: a move clock whose move is
    /// gone).
    pub async fn commit_one(&self, op: Op) -> Result<Option<i64>> {
        let seqs = self.commit(&[], std::slice::from_ref(&op)).await?;
        Ok(seqs.into_iter().next().flatten())
    }

    /// Records the move at `m.ply` of a game, durably, and returns the round's new change
    /// number. A ply recorded twice (a replay after a crash) is refused, not duplicated.
    pub async fn record_move(&self, game: GameId, m: &StoredMove) -> Result<Seq> {
        let op = Op::Move { game, m: m.clone() };
        self.commit_one(op)
            .await?
            .map(Seq::from)
            .ok_or_else(|| StoreError::Conflict(format!("game {game}: move not recorded")))
    }

    /// Removes the moves from `from_ply` on (a correction or takeback), keeping the reason in
    /// the audit trail. Returns the new change number.
    pub async fn truncate_moves(
        &self,
        game: GameId,
        from_ply: u32,
        actor: &str,
        reason: &str,
    ) -> Result<Seq> {
        let op = Op::Truncate {
            game,
            from_ply,
            actor: actor.into(),
            reason: reason.into(),
        };
        self.commit_one(op)
            .await?
            .map(Seq::from)
            .ok_or_else(|| StoreError::Conflict(format!("game {game}: not truncated")))
    }

    /// Sets a game's result (and status: finished, or confirmed by an arbiter).
    pub async fn set_result(
        &self,
        game: GameId,
        result: &str,
        termination: Option<&str>,
        status: &str,
        actor: &str,
    ) -> Result<Seq> {
        let op = Op::Result {
            game,
            result: result.into(),
            termination: termination.map(str::to_string),
            status: status.into(),
            actor: actor.into(),
        };
        self.commit_one(op)
            .await?
            .map(Seq::from)
            .ok_or_else(|| StoreError::Conflict(format!("game {game}: result not set")))
    }
}
