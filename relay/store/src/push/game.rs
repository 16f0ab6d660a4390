//! One venue game against the cloud's: what the venue's version says that the local one does
//! not, stored as the writer stores a board's news (new moves, clocks filled in, a
//! truncation, a result), each a change of its own; and a version held back because an
//! arbiter here changed the game since, until an arbiter takes it ([`Store::take_held`]).
//! The macros run inside the caller's transaction and name what they use by full path, so
//! that a caller needs only the macro.

use crate::batch::{Touched, notify};
use crate::error::{Result, StoreError};
use crate::model::StoredGame;
use crate::pool::{Store, now_ms, on_pool};

/// Moves written per INSERT (8 values each, 6 for their changes: far below either
/// backend's limit on values per statement).
pub(super) const MOVES_PER_STATEMENT: usize = 500;

/// A game as stored, read inside the transaction.
macro_rules! game_in {
    ($tx:expr, $id:expr) => {{
        let row: Option<$crate::model::GameRow> = sqlx::query_as($crate::model::GAME_SELECT_BY_ID)
            .bind($id)
            .fetch_optional(&mut *$tx)
            .await?;
        let row = row.ok_or($crate::error::StoreError::NotFound {
            what: "game",
            id: $id.to_string(),
        })?;
        let moves: Vec<$crate::model::MoveRow> = sqlx::query_as(
            "SELECT ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after FROM moves WHERE game_id = $1 ORDER BY ply",
        )
        .bind($id)
        .fetch_all(&mut *$tx)
        .await?;
        $crate::model::game_from_rows(row, moves)
    }};
}
pub(super) use game_in;

/// Stores what differs between the local game `$old` and the venue's `$new`, each
/// difference a change of its own; evaluates to the number of changes.
macro_rules! apply_game {
    ($tx:expr, $touched:expr, $id:expr, $old:expr, $new:expr) => {{
        let (id, old, new): (i64, &$crate::model::StoredGame, &$crate::model::StoredGame) = ($id, $old, $new);
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
            $crate::batch::bump!($tx, $touched, id, "game", &payload);
            n += 1;
        }
        if old.start_fen != new.start_fen || old.chess960 != new.chess960 {
            sqlx::query("UPDATE games SET start_fen = $1, chess960 = $2 WHERE id = $3")
                .bind(&new.start_fen).bind(i64::from(new.chess960)).bind(id)
                .execute(&mut *$tx).await?;
            let payload = serde_json::json!({"start_fen": new.start_fen, "chess960": new.chess960}).to_string();
            $crate::batch::bump!($tx, $touched, id, "game", &payload);
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
            let payload = $crate::change::ChangeRecord::Truncate($crate::change::TruncateRecord { from_ply }).payload();
            $crate::batch::bump!($tx, $touched, id, "truncate", &payload);
            n += 1;
        }
        for (a, b) in old.moves.iter().zip(&new.moves).take(common) {
            if a.clk_ms != b.clk_ms || a.emt_ms != b.emt_ms {
                sqlx::query("UPDATE moves SET clk_ms = $1, emt_ms = $2 WHERE game_id = $3 AND ply = $4")
                    .bind(b.clk_ms.map(|v| v as i64)).bind(b.emt_ms.map(|v| v as i64)).bind(id).bind(i64::from(b.ply))
                    .execute(&mut *$tx).await?;
                let payload = $crate::change::ChangeRecord::MoveClock($crate::change::MoveClockRecord { ply: b.ply, clk_ms: b.clk_ms, emt_ms: b.emt_ms }).payload();
                $crate::batch::bump!($tx, $touched, id, "move_clock", &payload);
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
            let (round, last) = row.ok_or($crate::error::StoreError::NotFound { what: "game", id: id.to_string() })?;
            let first = last - fresh.len() as i64 + 1;
            let at = $crate::pool::now_ms();
            for (k, part) in fresh.chunks($crate::push::game::MOVES_PER_STATEMENT).enumerate() {
                let mut q = sqlx::QueryBuilder::new(
                    "INSERT INTO moves (game_id, ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after) ",
                );
                q.push_values(part, |mut row, m| {
                    row.push_bind(id).push_bind(i64::from(m.ply)).push_bind(&m.san).push_bind(&m.uci)
                        .push_bind(m.clk_ms.map(|v| v as i64)).push_bind(m.emt_ms.map(|v| v as i64))
                        .push_bind(m.accepted_at_ms).push_bind(&m.fen_after);
                });
                q.build().execute(&mut *$tx).await?;
                let base = first + (k * $crate::push::game::MOVES_PER_STATEMENT) as i64;
                let mut q = sqlx::QueryBuilder::new(
                    "INSERT INTO changes (round_id, seq, game_id, kind, payload, at) ",
                );
                q.push_values(part.iter().enumerate(), |mut row, (j, m)| {
                    row.push_bind(round).push_bind(base + j as i64).push_bind(id).push_bind("move")
                        .push_bind($crate::change::ChangeRecord::Move($crate::change::MoveRecord::from(m)).payload()).push_bind(at);
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
            let payload = $crate::change::ChangeRecord::Result($crate::change::ResultRecord {
                result: new.result.clone(),
                termination: new.termination.clone(),
                status: new.status.clone(),
            })
            .payload();
            $crate::batch::bump!($tx, $touched, id, "result", &payload);
            n += 1;
        }
        n
    }};
}
pub(super) use apply_game;

/// Whether the venue's game says anything the local one does not (what spectators see).
pub(super) fn differs(old: &StoredGame, new: &StoredGame) -> bool {
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

/// Why a venue's game is held back: an arbiter here changed it after the venue's last
/// version.
pub(super) fn conflict_message(board_no: u32, round: &str, cloud_game: i64) -> String {
    format!(
        "board {board_no} of round {round}: an arbiter on this relay changed the game after the venue's last version; the venue's newer version is held back, not written over it (take it with POST /api/games/{cloud_game}/take-venue, or correct the game at the venue too)"
    )
}

impl Store {
    /// An arbiter here takes the venue's version held back for `game` (see
    /// [`PushConflict`]): it replaces this relay's, and the game follows the venue again.
    /// Returns the rounds changed.
    ///
    /// [`PushConflict`]: crate::PushConflict
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
}
