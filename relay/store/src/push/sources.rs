//! The venues as the cloud sees them, for its `/health` and console: each one's last batch
//! and when it came, whether its link is up, the games it fills, and the games held back
//! from it (changed here by an arbiter, or clashing with another hall's).

use super::clashes::clashes_in;
use super::wire::PushConflict;
use crate::error::Result;
use crate::pool::{Store, now_ms, on_pool};
use schemars::JsonSchema;
use serde::Serialize;

/// A venue whose last request (a heartbeat comes every 10 s) is older than this shows as
/// silent: its link is down or the relay stopped.
pub const LINK_SILENT_MS: i64 = 30_000;

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

impl Store {
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
