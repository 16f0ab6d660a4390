//! The routes evaluation workers on other machines call (`relay eval-worker`): ask for a
//! position, hand back the verdict. Both need the evaluation token; a relay without a desk
//! (started without `--eval-token` or `--eval-workers`) refuses them.

use super::error::ApiError;
use super::extract::{EvalWorker, JsonBody, Query};
use crate::serve::analysis::desk::{Analysis, Answer, Refused};
use crate::serve::service::Shared;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use relay_store::Score;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// How long a worker's request for a position waits for one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextQuery {
    /// Seconds (default 20, at most 60).
    wait_secs: Option<u64>,
}

/// A position for a worker.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EvalTask {
    /// The worker's claim on the position: it has `lease_ms` to answer, then the position
    /// goes to another worker (a late answer is still taken).
    pub lease: u64,
    pub lease_ms: i64,
    pub fen: String,
    /// How long the engine is to think: `--eval-movetime-ms` while the workers keep up, less
    /// (down to a sixth, 50 ms at least) while positions wait.
    pub movetime_ms: u64,
}

/// A worker's verdict on a position it was given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerBody {
    /// The position as it was given.
    fen: String,
    /// Centipawns from White's side (positive: White is better); or `mate`.
    cp: Option<i32>,
    /// Moves to mate from White's side (negative: Black mates).
    mate: Option<i32>,
    depth: u32,
    /// The best line, UCI moves from the position (kept as far as they are legal).
    #[serde(default)]
    line: Vec<String>,
    /// The engine's name as it gives it (`Stockfish 15.1`).
    engine: String,
}

/// Whether the verdict was kept (`false`: a deeper one was known already).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Taken {
    pub taken: bool,
}

fn desk(shared: &Shared) -> Result<Arc<Analysis>, ApiError> {
    shared.analysis.get().cloned().ok_or(ApiError::EvalOff)
}

pub async fn next_position(
    _: EvalWorker,
    State(shared): State<Arc<Shared>>,
    Query(q): Query<NextQuery>,
) -> Result<Response, ApiError> {
    let analysis = desk(&shared)?;
    let wait = Duration::from_secs(q.wait_secs.unwrap_or(20).min(60));
    let mut closing = shared.closing();
    let task = tokio::select! {
        t = analysis.next(wait) => t,
        _ = closing.changed() => return Err(ApiError::ShuttingDown),
    };
    Ok(match task {
        Some(t) => Json(EvalTask {
            lease: t.lease,
            lease_ms: analysis.terms.lease_ms(),
            movetime_ms: analysis.terms.movetime_for(t.behind),
            fen: t.fen,
        })
        .into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

pub async fn answer_position(
    _: EvalWorker,
    State(shared): State<Arc<Shared>>,
    JsonBody(b, _): JsonBody<AnswerBody>,
) -> Result<Json<Taken>, ApiError> {
    let analysis = desk(&shared)?;
    let Some(score) = Score::from_parts(b.cp, b.mate) else {
        return Err(ApiError::bad("give one of cp and mate"));
    };
    let answer = Answer {
        fen: b.fen,
        score,
        depth: b.depth,
        line: b.line,
        engine: b.engine,
    };
    match analysis.answer(answer).await {
        Ok(taken) => Ok(Json(Taken { taken })),
        Err(Refused::Bad(m)) => Err(ApiError::Bad(m)),
        Err(Refused::Unplayed) => Err(ApiError::Conflict(Refused::Unplayed.to_string())),
        Err(Refused::Store(e)) => Err(e.into()),
    }
}
