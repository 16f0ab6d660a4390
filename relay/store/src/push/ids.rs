//! The cloud's map of each venue's ids onto its own (`mirror_ids`): the local tournament,
//! round or game a venue's one fills, with the game's edit count as of the last push applied
//! (what tells an arbiter's edit here from the venue's). The macros read and write it inside
//! a transaction, for both backends' types.

use crate::error::Result;
use crate::id::GameId;
use crate::pool::{Store, on_pool};
use std::collections::HashMap;

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
pub(super) use mapped;

/// Maps a venue's tournament, round or game `$remote` to the local `$local` (a mapping made
/// again replaces the old one).
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
pub(super) use map_id;

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
pub(super) use shared;

impl Store {
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
}
