//! The PGN sources rounds poll (`relay serve`'s `sources`), kept so that a restart polls them
//! again (only what the arbiter said is kept; what a poll found lives in the service); and the
//! Lichess broadcast rounds `relay lichess setup` made for a round, which the pusher reads.

use crate::error::Result;
use crate::id::RoundId;
use crate::pool::{Store, now_ms, on_pool};

/// A URL a round takes games from, and the boards it may fill ("" for any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnSource {
    pub id: i64,
    pub round_id: RoundId,
    pub url: String,
    pub boards: String,
}

impl Store {
    /// Keeps a new source; its id.
    pub async fn add_source(&self, round: RoundId, url: &str, boards: &str) -> Result<i64> {
        let (id,): (i64,) = on_pool!(self, pool => sqlx::query_as(
            "INSERT INTO pgn_sources (round_id, url, boards, created_at_ms) VALUES ($1, $2, $3, $4) RETURNING id")
            .bind(round)
            .bind(url)
            .bind(boards)
            .bind(now_ms())
            .fetch_one(pool)
            .await?);
        Ok(id)
    }

    /// Every source of the rounds not final yet (`None`: of every round), oldest first.
    pub async fn sources(&self, round: Option<RoundId>) -> Result<Vec<PgnSource>> {
        type Row = (i64, i64, String, String);
        let rows: Vec<Row> = on_pool!(self, pool => match round {
            Some(r) => sqlx::query_as("SELECT id, round_id, url, boards FROM pgn_sources WHERE round_id = $1 ORDER BY id")
                .bind(r)
                .fetch_all(pool)
                .await?,
            None => sqlx::query_as("SELECT s.id, s.round_id, s.url, s.boards FROM pgn_sources s JOIN rounds r ON r.id = s.round_id WHERE r.final = 0 ORDER BY s.id")
                .fetch_all(pool)
                .await?,
        });
        Ok(rows
            .into_iter()
            .map(|(id, round_id, url, boards)| PgnSource {
                id,
                round_id: RoundId::from(round_id),
                url,
                boards,
            })
            .collect())
    }

    /// Forgets a source of `round`; whether there was one.
    pub async fn remove_source(&self, round: RoundId, id: i64) -> Result<bool> {
        let done = on_pool!(self, pool => sqlx::query("DELETE FROM pgn_sources WHERE id = $1 AND round_id = $2")
            .bind(id)
            .bind(round)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }
}

impl Store {
    /// Keeps the Lichess broadcast rounds made for `round` (of the tour `tour`), in board
    /// order: boards 1–100 to the first, 101–200 to the second, and so on.
    pub async fn set_lichess_rounds(
        &self,
        round: RoundId,
        tour: &str,
        ids: &[String],
    ) -> Result<()> {
        on_pool!(self, pool => {
            sqlx::query("DELETE FROM lichess_rounds WHERE round_id = $1")
                .bind(round)
                .execute(pool)
                .await?;
            for (slice, id) in ids.iter().enumerate() {
                sqlx::query("INSERT INTO lichess_rounds (round_id, slice, tour, lichess_round) VALUES ($1, $2, $3, $4)")
                    .bind(round)
                    .bind(slice as i64)
                    .bind(tour)
                    .bind(id)
                    .execute(pool)
                    .await?;
            }
        });
        Ok(())
    }

    /// The Lichess broadcast rounds `relay lichess setup` made for `round`, in board order.
    pub async fn lichess_rounds(&self, round: RoundId) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = on_pool!(self, pool => sqlx::query_as(
            "SELECT lichess_round FROM lichess_rounds WHERE round_id = $1 ORDER BY slice")
            .bind(round)
            .fetch_all(pool)
            .await?);
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }
}
