//! E-boards: the list as read (the public's without what a delay would hide), an e-board put
//! on a board of a round, a game taken up from the position on an e-board, a disconnected
//! one forgotten.

use super::error::ApiError;
use super::extract::{Admin, JsonBody, Path, Reader, json_of};
use super::reply::wait_reply;
use crate::serve::id::{BoardNo, GameId, RoundId, Serial};
use crate::serve::jobs::{HallCommand, Job, ToHall, ToWriter};
use crate::serve::live::{Boards, NotForgotten};
use crate::serve::lookup::Lookup;
use crate::serve::views::EboardView;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use relay_store::{Side, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub async fn list_eboards(
    State(lookup): State<Lookup>,
    reader: Reader,
) -> Result<Json<Vec<EboardView>>, ApiError> {
    let mut list = lookup.boards().eboards();
    if !reader.arbiter {
        // The board as read and a proposed result are live news: spectators of a delayed
        // round do not get them early.
        let mut delays = HashMap::new();
        for e in &mut list {
            let Some(round) = e.round_id else { continue };
            // Without the database the delay is unknown: the e-boards' state is still
            // shown (operators need it most then), without what a delay would hide.
            let delay = match delays.get(&round) {
                Some(d) => *d,
                None => {
                    // Remembered across requests (as a socket opening reads it); a failure
                    // only for this one.
                    let d = lookup.spectator_delay(round).await.unwrap_or(i64::MAX);
                    delays.insert(round, d);
                    d
                }
            };
            if delay > 0 {
                e.board_fen = String::new();
                e.proposal = None;
            }
        }
    }
    Ok(Json(list))
}

/// The e-board to put on a board.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignBody {
    /// 1 to 32 letters or digits.
    serial: String,
}

/// Where an e-board was put.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Assigned {
    round_id: RoundId,
    board_no: BoardNo,
    serial: String,
    /// The game it plays.
    game_id: GameId,
}

pub async fn assign_eboard(
    _: Admin,
    State(store): State<Store>,
    State(writer): State<ToWriter>,
    Path((id, board_no)): Path<(RoundId, BoardNo)>,
    JsonBody(b, _): JsonBody<AssignBody>,
) -> Result<Json<Assigned>, ApiError> {
    if b.serial.is_empty()
        || b.serial.len() > 32
        || !b.serial.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(ApiError::bad("serial must be 1 to 32 letters or digits"));
    }
    store.round(id).await?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !writer.send(Job::Assign {
        round_id: id,
        board_no: board_no.get(),
        serial: b.serial.clone(),
        reply: tx,
    }) {
        return Err(ApiError::ShuttingDown);
    }
    let game = wait_reply(rx).await?;
    Ok(Json(Assigned {
        round_id: id,
        board_no,
        serial: b.serial,
        game_id: game,
    }))
}

/// Whose move it is in the position on the e-board.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnBody {
    turn: Side,
}

/// The game goes on from the e-board's position.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Continued {
    serial: Serial,
    continued: bool,
}

fn unknown(serial: &Serial) -> ApiError {
    ApiError::NotFound(format!("e-board {:?} not found", serial.as_str()))
}

/// The body is read after the e-board is found: an unknown e-board is 404 whatever it says.
pub async fn continue_from_board(
    _: Admin,
    State(boards): State<Arc<Boards>>,
    State(hall): State<ToHall>,
    Path(serial): Path<Serial>,
    body: Bytes,
) -> Result<Json<Continued>, ApiError> {
    if boards.eboard(serial.as_str()).is_none() {
        return Err(unknown(&serial));
    }
    let b: TurnBody = json_of(&body)?;
    let white_to_move = b.turn.is_white();
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !hall.send(HallCommand::ContinueFromBoard {
        serial: serial.to_string(),
        white_to_move,
        reply: tx,
    }) {
        return Err(ApiError::ShuttingDown);
    }
    match tokio::time::timeout(Duration::from_secs(5), rx).await {
        Ok(Ok(Ok(_))) => Ok(Json(Continued {
            serial,
            continued: true,
        })),
        Ok(Ok(Err(e))) => Err(e.into()),
        _ => Err(ApiError::Unavailable("the hall did not answer".into())),
    }
}

/// An e-board forgotten.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forgotten {
    forgotten: Serial,
}

pub async fn forget_eboard(
    _: Admin,
    State(boards): State<Arc<Boards>>,
    Path(serial): Path<Serial>,
) -> Result<Json<Forgotten>, ApiError> {
    match boards.forget_eboard(serial.as_str()) {
        Err(NotForgotten::Unknown) => Err(unknown(&serial)),
        Err(NotForgotten::Connected) => {
            Err(ApiError::Conflict(format!("e-board {serial} is connected")))
        }
        Ok(()) => Ok(Json(Forgotten { forgotten: serial })),
    }
}
