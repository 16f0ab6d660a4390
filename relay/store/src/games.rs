//! Reading games back: one game or a whole round's with their moves, and the round's change
//! log, from which spectators' views and other relays catch up by change number.

use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId, Seq};
use crate::model::{self, Change, StoredGame};
use crate::pool::{Store, on_pool};

impl Store {
    /// A game with its pairing and moves.
    pub async fn game(&self, id: GameId) -> Result<StoredGame> {
        on_pool!(self, pool => {
            let row: Option<model::GameRow> = sqlx::query_as(model::GAME_SELECT_BY_ID).bind(id).fetch_optional(pool).await?;
            let row = row.ok_or(StoreError::NotFound { what: "game", id: id.to_string() })?;
            let moves: Vec<model::MoveRow> = sqlx::query_as(
                "SELECT ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after FROM moves WHERE game_id = $1 ORDER BY ply",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            Ok(model::game_from_rows(row, moves))
        })
    }

    /// Games by id, with their moves, in the order asked (missing ones left out): two queries
    /// for each 500, where [`Store::game`] is two for each game.
    pub async fn games(&self, ids: &[GameId]) -> Result<Vec<StoredGame>> {
        let mut found: std::collections::HashMap<GameId, StoredGame> =
            std::collections::HashMap::new();
        for chunk in ids.chunks(500) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let list = marks.join(", ");
            let by_id = model::GAME_SELECT_BY_ID.replace("id = $1", &format!("id IN ({list})"));
            let moves_sql = format!(
                "SELECT game_id, ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after FROM moves WHERE game_id IN ({list}) ORDER BY game_id, ply"
            );
            let (rows, moves): (Vec<model::GameRow>, Vec<model::RoundMoveRow>) = on_pool!(self, pool => {
                // Only numbered placeholders are put into the text; the ids are bound.
                let mut q = sqlx::query_as(sqlx::AssertSqlSafe(by_id.clone()));
                for id in chunk {
                    q = q.bind(*id);
                }
                let rows = q.fetch_all(pool).await?;
                let mut q = sqlx::query_as(sqlx::AssertSqlSafe(moves_sql.clone()));
                for id in chunk {
                    q = q.bind(*id);
                }
                let moves = q.fetch_all(pool).await?;
                (rows, moves)
            });
            found.extend(with_moves(rows, moves).into_iter().map(|g| (g.id, g)));
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    /// The games of a round in board order (two queries, whatever the number of games).
    pub async fn round_games(&self, round: RoundId) -> Result<Vec<StoredGame>> {
        on_pool!(self, pool => {
            let rows: Vec<model::GameRow> = sqlx::query_as(model::GAME_SELECT_BY_ROUND).bind(round).fetch_all(pool).await?;
            let moves: Vec<model::RoundMoveRow> = sqlx::query_as(
                "SELECT m.game_id, m.ply, m.san, m.uci, m.clk_ms, m.emt_ms, m.accepted_at, m.fen_after
                 FROM moves m JOIN games g ON g.id = m.game_id WHERE g.round_id = $1 ORDER BY m.game_id, m.ply",
            )
            .bind(round)
            .fetch_all(pool)
            .await?;
            Ok(with_moves(rows, moves))
        })
    }

    /// A round's games without their moves: pairings, results and when they were set, for
    /// what needs no move (the standings read every round of a tournament with this, where
    /// the moves would be most of the work).
    pub async fn round_results(&self, round: RoundId) -> Result<Vec<StoredGame>> {
        on_pool!(self, pool => {
            let rows: Vec<model::GameRow> = sqlx::query_as(model::GAME_SELECT_BY_ROUND).bind(round).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|r| model::game_from_rows(r, Vec::new())).collect())
        })
    }

    /// What changed in a round after change number `after`, oldest first, at most `limit`.
    pub async fn changes_since(
        &self,
        round: RoundId,
        after: Seq,
        limit: u32,
    ) -> Result<Vec<Change>> {
        on_pool!(self, pool => {
            let rows: Vec<(Seq, Option<GameId>, String, String, i64)> = sqlx::query_as(
                "SELECT seq, game_id, kind, payload, at FROM changes WHERE round_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            )
            .bind(round).bind(after).bind(i64::from(limit)).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(seq, game_id, kind, payload, at_ms)| Change { seq, game_id, kind, payload, at_ms }).collect())
        })
    }

    /// The round's change number as it stood at `at_ms` (for a delayed view).
    pub async fn seq_at(&self, round: RoundId, at_ms: i64) -> Result<Seq> {
        let (seq,): (Option<i64>,) = on_pool!(self, pool => sqlx::query_as(
            "SELECT MAX(seq) FROM changes WHERE round_id = $1 AND at <= $2")
            .bind(round).bind(at_ms).fetch_one(pool).await?);
        Ok(seq.map_or(Seq::default(), Seq::from))
    }
}

/// Games from their rows and their moves' rows (in ply order), in the order of the rows.
fn with_moves(rows: Vec<model::GameRow>, moves: Vec<model::RoundMoveRow>) -> Vec<StoredGame> {
    let mut by_game: std::collections::HashMap<GameId, Vec<model::MoveRow>> =
        std::collections::HashMap::new();
    for (g, m) in moves.into_iter().map(model::RoundMoveRow::split) {
        by_game.entry(g).or_default().push(m);
    }
    rows.into_iter()
        .map(|r| {
            let m = by_game.remove(&r.id).unwrap_or_default();
            model::game_from_rows(r, m)
        })
        .collect()
}
