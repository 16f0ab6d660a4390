//! The venue's side: its outbox is its own change log, so nothing is written on the path of a
//! move. Per target it keeps its name for itself, the batch numbers it has used, and how far
//! each round's changes were delivered (`upstream_sent`), moved on only by the target's
//! answer, so that what was committed is sent again after a restart of either side.

use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId, Seq};
use crate::pool::{Store, now_ms, on_pool};
use std::collections::HashMap;

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
}
