//! The arbiter's record: reading a game's illegal moves and clock corrections, the round's
//! open ones, and the arbiter's ruling (the prescribed result given, or the illegal move
//! dismissed), each ruling in the audit trail.

use super::error::ApiError;
use super::extract::{Admin, JsonBody, Path};
use super::games::{EditDone, send_edit};
use super::record::{IllegalMoveView, Record, record_of};
use crate::serve::id::{GameId, RoundId};
use crate::serve::jobs::{EditAction, ToHall};
use crate::serve::views::GameStatus;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use relay_store::{Incident, Ruling, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The time control of the tournament a round belongs to (which Laws an illegal move falls
/// under).
async fn time_control_of(store: &Store, round: RoundId) -> Result<Option<String>, ApiError> {
    let r = store.round(round).await?;
    Ok(store.record_terms(r.tournament_id).await?.0)
}

pub async fn game_record(
    _: Admin,
    State(store): State<Store>,
    Path(id): Path<GameId>,
) -> Result<Json<Record>, ApiError> {
    let g = store.game(id).await?;
    let tc = time_control_of(&store, g.round_id).await?;
    Ok(Json(
        record_of(&store.reads(), &g, tc.as_deref(), None).await?,
    ))
}

/// The illegal moves of a round no arbiter has ruled on, oldest first.
pub async fn open_illegal_moves(
    _: Admin,
    State(store): State<Store>,
    Path(id): Path<RoundId>,
) -> Result<Json<Vec<IllegalMoveView>>, ApiError> {
    // (An unknown round is 404, not an empty list.)
    let tc = time_control_of(&store, id).await?;
    let open: Vec<Incident> = store.open_illegal_moves(id).await?;
    // Each game's record once, however many of its illegal moves are open.
    let mut games: Vec<GameId> = open.iter().map(|i| i.game_id).collect();
    games.sort_unstable();
    games.dedup();
    let mut out = Vec::new();
    for game in games {
        let g = store.game(game).await?;
        let record = record_of(&store.reads(), &g, tc.as_deref(), None).await?;
        out.extend(
            record
                .illegal_moves
                .into_iter()
                .filter(|i| i.ruling.is_none()),
        );
    }
    out.sort_by_key(|i| i.id);
    Ok(Json(out))
}

/// An arbiter's ruling on an illegal move.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RulingBody {
    /// Which illegal move of the game.
    incident: i64,
    /// `result`: give the result the Laws prescribe (a second illegal move), with
    /// `[Termination "rules infraction"]`; `dismissed`: not an illegal move after all (it
    /// stays on the record, marked, and is not counted).
    ruling: Ruling,
}

/// The ruling given: the illegal move as it is now, and the result's change when one was set.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Ruled {
    illegal_move: IllegalMoveView,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<EditDone>,
}

pub async fn rule(
    _: Admin,
    State(store): State<Store>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    h: HeaderMap,
    JsonBody(b, _): JsonBody<RulingBody>,
) -> Result<Json<Ruled>, ApiError> {
    let g = store.game(id).await?;
    let tc = time_control_of(&store, g.round_id).await?;
    let record = record_of(&store.reads(), &g, tc.as_deref(), None).await?;
    let Some(seen) = record.illegal_moves.iter().find(|i| i.id == b.incident) else {
        return Err(ApiError::NotFound(format!(
            "game {} has no illegal move {} on its record",
            g.id, b.incident
        )));
    };
    if let Some(ruling) = seen.ruling {
        return Err(ApiError::Conflict(format!(
            "illegal move {} was ruled on already ({ruling})",
            b.incident,
        )));
    }
    let result = match b.ruling {
        Ruling::Dismissed => None,
        Ruling::Result => {
            let Some(result) = seen.result else {
                return Err(ApiError::Conflict(format!(
                    "the Laws prescribe no result for a player's first illegal move: {}",
                    seen.prescribed
                )));
            };
            if g.result != "*" {
                return Err(ApiError::Conflict(format!(
                    "game {} has a result already ({}); set it with /result if it must change",
                    g.id, g.result
                )));
            }
            let action = EditAction::Result {
                result,
                termination: Some("rules infraction".into()),
                status: GameStatus::Confirmed,
            };
            Some(send_edit(&hall, &g, &h, action, g.moves.clone()).await?.0)
        }
    };
    store.rule_incident(b.incident, b.ruling, "arbiter").await?;
    let g = store.game(id).await?;
    let record = record_of(&store.reads(), &g, tc.as_deref(), None).await?;
    let illegal_move = record
        .illegal_moves
        .into_iter()
        .find(|i| i.id == b.incident)
        .ok_or_else(|| ApiError::NotFound(format!("illegal move {}", b.incident)))?;
    Ok(Json(Ruled {
        illegal_move,
        result,
    }))
}
