//! A round's PGN sources (`serve::sources`): added, listed with what their polls found, and
//! stopped, by arbiters.

use super::error::ApiError;
use super::extract::{Admin, JsonBody, Path, SourceNo};
use crate::serve::id::RoundId;
use crate::serve::service::Shared;
use crate::serve::sources::{BoardRange, SourceState, start};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use relay_store::PgnSource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A source to poll.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceBody {
    /// An http:// or https:// URL serving PGN (at most 2000 characters).
    url: String,
    /// The boards it may fill: "1-20", "4,6,9-12"; all when left out.
    boards: Option<String>,
}

pub async fn add_source(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    Path(round): Path<RoundId>,
    JsonBody(b, _): JsonBody<SourceBody>,
) -> Result<(StatusCode, Json<SourceState>), ApiError> {
    let url = b.url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() > 2000 {
        return Err(ApiError::bad(
            "url must be an http:// or https:// address of a PGN file",
        ));
    }
    let boards = b.boards.unwrap_or_default();
    BoardRange::parse(&boards).map_err(ApiError::bad)?;
    shared.store.round(round).await?;
    let id = shared.store.add_source(round, url, boards.trim()).await?;
    let source = PgnSource {
        id,
        round_id: round,
        url: url.to_string(),
        boards: boards.trim().to_string(),
    };
    tracing::info!(id, %round, %url, boards = %source.boards, "PGN source added");
    start(shared.polling(), source);
    let state = shared
        .sources
        .of_round(round)
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| ApiError::Internal("the source was not started".into()))?;
    Ok((StatusCode::CREATED, Json(state)))
}

pub async fn list_sources(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    Path(round): Path<RoundId>,
) -> Result<Json<Vec<SourceState>>, ApiError> {
    shared.store.round(round).await?;
    Ok(Json(shared.sources.of_round(round)))
}

/// A source stopped.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Stopped {
    stopped: i64,
}

pub async fn remove_source(
    _: Admin,
    State(shared): State<Arc<Shared>>,
    Path((round, SourceNo(id))): Path<(RoundId, SourceNo)>,
) -> Result<Json<Stopped>, ApiError> {
    if !shared.store.remove_source(round, id).await? {
        return Err(ApiError::NotFound(format!(
            "round {round} has no source {id}"
        )));
    }
    shared.sources.stop(id);
    tracing::info!(id, %round, "PGN source stopped");
    Ok(Json(Stopped { stopped: id }))
}
