//! The audit trail, for arbiters: every action, newest first, and one game's.

use super::error::ApiError;
use super::extract::{Admin, Path, Query};
use crate::serve::id::GameId;
use axum::Json;
use axum::extract::State;
use relay_store::{AuditEntry, AuditRecord, Store};
use schemars::JsonSchema;
use serde::Deserialize;

/// A page of the trail: entries before an entry's id, at most `limit` (1 to 1000, 200 when
/// left out).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    before: Option<i64>,
    limit: Option<u32>,
}

pub async fn audit_all(
    _: Admin,
    State(store): State<Store>,
    Query(q): Query<AuditQuery>,
) -> Result<Json<Vec<AuditRecord>>, ApiError> {
    let limit = q.limit.unwrap_or(200);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad("limit must be between 1 and 1000"));
    }
    Ok(Json(store.audit_all(q.before, limit).await?))
}

pub async fn audit(
    _: Admin,
    State(store): State<Store>,
    Path(id): Path<GameId>,
) -> Result<Json<Vec<AuditEntry>>, ApiError> {
    store.game(id).await?;
    Ok(Json(store.audit_trail(id).await?))
}
