//! The two logs the store keeps beside the games: the black box of every raw board message
//! (what `relay replay --db` reads back), and the audit trail of who changed what, and why.

use crate::error::Result;
use crate::id::GameId;
use crate::model::{AuditEntry, AuditRecord, RawEntry};
use crate::pool::{Store, now_ms, on_pool};

impl Store {
    /// Appends raw board messages (the black box), in one transaction.
    pub async fn log_raw(&self, entries: &[RawEntry]) -> Result<()> {
        self.commit(entries, &[]).await.map(|_| ())
    }

    /// Raw messages of a port in time order. Not indexed (schema 6): it reads the whole black
    /// box, which is for tests and one-off inspection; `relay replay` reads by serial number.
    pub async fn raw_log(&self, port: &str) -> Result<Vec<RawEntry>> {
        on_pool!(self, pool => {
            let rows: Vec<(String, Option<String>, i64, Vec<u8>)> = sqlx::query_as(
                "SELECT port, serial, received_at, bytes FROM raw_log WHERE port = $1 ORDER BY received_at, id",
            )
            .bind(port).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(port, serial, received_at_ms, bytes)| RawEntry { port, serial, received_at_ms, bytes }).collect())
        })
    }

    /// Raw messages of one e-board in receive order (`relay replay --db`).
    pub async fn raw_log_of(&self, serial: &str) -> Result<Vec<RawEntry>> {
        on_pool!(self, pool => {
            let rows: Vec<(String, Option<String>, i64, Vec<u8>)> = sqlx::query_as(
                "SELECT port, serial, received_at, bytes FROM raw_log WHERE serial = $1 ORDER BY received_at, id",
            )
            .bind(serial).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(port, serial, received_at_ms, bytes)| RawEntry { port, serial, received_at_ms, bytes }).collect())
        })
    }

    /// The whole audit trail (tournaments, rounds, pairings, e-boards and games), newest
    /// first: at most `limit` entries with an id below `before`.
    pub async fn audit_all(&self, before: Option<i64>, limit: u32) -> Result<Vec<AuditRecord>> {
        on_pool!(self, pool => {
            let rows: Vec<(i64, i64, String, String, Option<i64>, String)> = sqlx::query_as(
                "SELECT id, at, actor, action, game_id, detail FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2",
            )
            .bind(before.unwrap_or(i64::MAX)).bind(i64::from(limit)).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(id, at_ms, actor, action, game_id, detail)| AuditRecord {
                id, game_id, entry: AuditEntry { at_ms, actor, action, detail },
            }).collect())
        })
    }

    /// The audit trail of a game, oldest first.
    pub async fn audit_trail(&self, game: GameId) -> Result<Vec<AuditEntry>> {
        on_pool!(self, pool => {
            let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
                "SELECT at, actor, action, detail FROM audit WHERE game_id = $1 ORDER BY id",
            )
            .bind(game).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(at_ms, actor, action, detail)| AuditEntry { at_ms, actor, action, detail }).collect())
        })
    }

    /// Writes an arbiter's action that changes no game (a pairing list, an assignment) to the
    /// audit trail.
    pub async fn audit(
        &self,
        actor: &str,
        action: &str,
        game: Option<GameId>,
        detail: &str,
    ) -> Result<()> {
        on_pool!(self, pool => { sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
            .bind(now_ms()).bind(actor).bind(action).bind(game).bind(detail).execute(pool).await?; });
        Ok(())
    }
}
