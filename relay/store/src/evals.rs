//! Engine evaluations: one per position, whatever game or round reached it, so each position is
//! evaluated once for everyone. Written by the service when a worker hands one back; read to
//! put evaluations in views.

use crate::error::Result;
use crate::pool::{Store, now_ms, on_pool};
use std::collections::HashMap;

/// An engine's score of a position from White's point of view: exactly one of a
/// centipawn figure or a mate, so a verdict with both or neither cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns; positive: White is better.
    Cp(i32),
    /// Moves to mate; negative when Black mates.
    Mate(i32),
}

impl Score {
    /// The score the two columns (or JSON fields) give: `None` unless exactly one is there.
    pub fn from_parts(cp: Option<i32>, mate: Option<i32>) -> Option<Score> {
        match (cp, mate) {
            (Some(cp), None) => Some(Score::Cp(cp)),
            (None, Some(m)) => Some(Score::Mate(m)),
            _ => None,
        }
    }

    /// The centipawns, when it is not a mate.
    pub fn cp(self) -> Option<i32> {
        match self {
            Score::Cp(cp) => Some(cp),
            Score::Mate(_) => None,
        }
    }

    /// The moves to mate, when it is one.
    pub fn mate(self) -> Option<i32> {
        match self {
            Score::Mate(m) => Some(m),
            Score::Cp(_) => None,
        }
    }
}

/// An engine's verdict on one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEval {
    /// The FEN's first four fields (see [`position_key`]).
    pub position: String,
    pub score: Score,
    pub depth: u32,
    /// The best line, UCI moves from the position.
    pub line: Vec<String>,
    pub engine: String,
}

/// The part of a FEN an engine's verdict depends on: placement, side to move, castling and en
/// passant, without the move counters (the same position reached at another move number is
/// the same position to the engine).
pub fn position_key(fen: &str) -> String {
    fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

/// How many positions one read asks for (SQLite allows 32,766 parameters; PostgreSQL 65,535).
const READ_CHUNK: usize = 500;

impl Store {
    /// Keeps an evaluation; a deeper one already kept stays.
    pub async fn save_eval(&self, e: &StoredEval) -> Result<()> {
        let line = e.line.join(" ");
        on_pool!(self, pool => {
            sqlx::query("INSERT INTO evals (position, cp, mate, depth, line, engine, at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (position) DO UPDATE SET cp = excluded.cp, mate = excluded.mate, depth = excluded.depth, line = excluded.line, engine = excluded.engine, at_ms = excluded.at_ms WHERE excluded.depth > evals.depth")
                .bind(&e.position)
                .bind(e.score.cp().map(i64::from))
                .bind(e.score.mate().map(i64::from))
                .bind(i64::from(e.depth))
                .bind(line)
                .bind(&e.engine)
                .bind(now_ms())
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Whether any evaluation is kept at all (one row read at most).
    pub async fn any_evals(&self) -> Result<bool> {
        let row: Option<(String,)> = on_pool!(self, pool => sqlx::query_as("SELECT position FROM evals LIMIT 1")
            .fetch_optional(pool).await?);
        Ok(row.is_some())
    }

    /// The evaluations kept of these positions (keys as [`position_key`] makes them), by key.
    pub async fn evals_of(&self, positions: &[String]) -> Result<HashMap<String, StoredEval>> {
        type Row = (String, Option<i64>, Option<i64>, i64, String, String);
        let mut out = HashMap::new();
        let mut wanted: Vec<&String> = positions.iter().collect();
        wanted.sort_unstable();
        wanted.dedup();
        for chunk in wanted.chunks(READ_CHUNK) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "SELECT position, cp, mate, depth, line, engine FROM evals WHERE position IN ({})",
                marks.join(", ")
            );
            let rows: Vec<Row> = on_pool!(self, pool => {
                // Only numbered placeholders are put into the text; the positions are bound.
                let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()));
                for p in chunk {
                    q = q.bind(*p);
                }
                q.fetch_all(pool).await?
            });
            for (position, cp, mate, depth, line, engine) in rows {
                let narrow = |v: Option<i64>| v.and_then(|v| i32::try_from(v).ok());
                // A row with both or neither (written by hand) is no verdict: left out.
                let Some(score) = Score::from_parts(narrow(cp), narrow(mate)) else {
                    continue;
                };
                let e = StoredEval {
                    position: position.clone(),
                    score,
                    depth: u32::try_from(depth).unwrap_or(0),
                    line: line.split_whitespace().map(str::to_string).collect(),
                    engine,
                };
                out.insert(position, e);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::position_key;

    #[test]
    fn the_move_counters_are_not_part_of_a_position() {
        assert_eq!(
            position_key("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"),
            position_key("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 4 9"),
        );
        assert_ne!(
            position_key("8/8/8/8/8/8/8/K6k w - - 0 1"),
            position_key("8/8/8/8/8/8/8/K6k b - - 0 1"),
        );
    }
}
