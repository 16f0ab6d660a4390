//! Moves typed for boards without e-boards: an arbiter hands an operator a token for some
//! boards of a round (`POST /api/rounds/{id}/operators`), and the operator's device sends each
//! move, takeback and result as it is made on the board in the hall. Devices on a venue's
//! Wi-Fi resend what they got no answer for, so every request names the ply it is meant for:
//! the same move again at its ply is answered as done and changes nothing, another move at a
//! ply already played is refused (409). A typed move is stored and announced exactly as a
//! board's move is, so spectators, the round's PGN, pushes and evaluation take it alike.

use super::check::{start_position, stored_move};
use super::error::ApiError;
use super::extract::{Admin, Entrant, JsonBody, Path};
use super::operator_token::{Grant, mint};
use super::reply::wait_reply;
use crate::serve::id::{GameId, RoundId, Seq};
use crate::serve::jobs::{EditAction, GameEdit, ToHall};
use crate::serve::live::Boards;
use crate::serve::lookup::Lookup;
use crate::serve::service::Tokens;
use crate::serve::views::{GameView, stored_result};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use relay_core::game::{GameResult, play_uci};
use relay_store::{Store, StoredGame, StoredMove};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move, Position};
use std::sync::Arc;

/// The most boards one operator token names.
const MAX_BOARDS: usize = 100;

/// The boards an operator is given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorBody {
    /// Board numbers of the round (1 to 9999), at most 100.
    boards: Vec<u32>,
}

/// An operator's token, for `Authorization: Bearer` on the move-entry routes.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OperatorToken {
    token: String,
    round_id: RoundId,
    boards: Vec<u32>,
}

pub async fn create_operator(
    _: Admin,
    State(store): State<Store>,
    State(tokens): State<Tokens>,
    Path(round): Path<RoundId>,
    JsonBody(b, _): JsonBody<OperatorBody>,
) -> Result<(StatusCode, Json<OperatorToken>), ApiError> {
    let mut boards = b.boards;
    boards.sort_unstable();
    boards.dedup();
    if boards.is_empty() || boards.len() > MAX_BOARDS {
        return Err(ApiError::bad(format!(
            "boards must name 1 to {MAX_BOARDS} boards"
        )));
    }
    if boards.iter().any(|&b| b == 0 || b > 9999) {
        return Err(ApiError::bad("a board number is 1 to 9999"));
    }
    store.round(round).await?;
    // `Admin` let the request through, so there is an admin token to sign with.
    let admin = tokens.admin().ok_or(ApiError::AdminOff)?;
    let grant = Grant { round, boards };
    let token = mint(admin, &grant);
    tracing::info!(%round, boards = ?grant.boards, "operator token handed out");
    Ok((
        StatusCode::CREATED,
        Json(OperatorToken {
            token,
            round_id: round,
            boards: grant.boards,
        }),
    ))
}

/// The game as its move-entry page starts from: live, whatever the round's delay (the
/// operator is in the hall), for the entrant of its board only.
pub async fn get_typed(
    who: Entrant,
    State(lookup): State<Lookup>,
    Path(id): Path<GameId>,
) -> Result<Json<GameView>, ApiError> {
    let g = lookup.store.game(id).await?;
    who.may_enter(g.round_id, g.pairing.board_no)?;
    Ok(Json(lookup.game_view_of(&g, None)))
}

/// A move typed on a board's move-entry page.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypedMoveBody {
    /// The move in SAN ("Nf3"; a check sign may be left out)…
    san: Option<String>,
    /// …or in UCI ("g1f3"); one of the two.
    uci: Option<String>,
    /// The ply it is meant for (1 is White's first move); without it, the next one. The same
    /// move sent again for its ply is answered as done; another move there is refused.
    ply: Option<u32>,
    /// The mover's clock after the move, in ms, if it was read off the clock.
    clk_ms: Option<u64>,
}

/// A typed move (or takeback) done, or found done already.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TypedDone {
    game_id: GameId,
    /// The ply it was for.
    ply: u32,
    /// The round's change number it was committed at; none when it was done already.
    seq: Option<Seq>,
    /// It had been done already (a resend): nothing changed.
    already: bool,
}

impl TypedDone {
    /// Done now, at change `seq`.
    fn stored(game_id: GameId, ply: u32, seq: Seq) -> TypedDone {
        TypedDone {
            game_id,
            ply,
            seq: Some(seq),
            already: false,
        }
    }

    /// Found done already (a resend): nothing changed.
    fn already(game_id: GameId, ply: u32) -> TypedDone {
        TypedDone {
            game_id,
            ply,
            seq: None,
            already: true,
        }
    }
}

/// The game an entrant may type for: on a board it was given, and no e-board playing it.
async fn typed_game(
    store: &Store,
    boards: &Boards,
    who: &Entrant,
    id: GameId,
) -> Result<StoredGame, ApiError> {
    let g = store.game(id).await?;
    who.may_enter(g.round_id, g.pairing.board_no)?;
    if let Some(serial) = boards.eboard_on(id) {
        return Err(ApiError::Conflict(format!(
            "e-board {serial} plays game {id}: its moves come from the board, not typed"
        )));
    }
    Ok(g)
}

/// The position before `ply` (1-based) of the stored game.
fn position_before(g: &StoredGame, ply: u32) -> Result<Chess, ApiError> {
    let start = start_position(g)?;
    let before = &g.moves[..(ply as usize - 1).min(g.moves.len())];
    let (played, damaged) = play_uci(&start, before.iter().map(|m| m.uci.as_str()));
    if let Some(i) = damaged {
        return Err(ApiError::Conflict(format!(
            "stored move {} is damaged",
            before[i].ply
        )));
    }
    let mut pos = start;
    for m in played {
        pos.play_unchecked(m);
    }
    Ok(pos)
}

/// The move `b` names in `pos`, or why it is none.
fn typed_move(b: &TypedMoveBody, pos: &Chess, ply: u32) -> Result<Move, ApiError> {
    match (&b.san, &b.uci) {
        (Some(san), None) => {
            let parsed: San = san
                .trim()
                .trim_end_matches(['+', '#', '!', '?'])
                .parse()
                .map_err(|_| ApiError::bad(format!("{san:?} is not a move in SAN")))?;
            parsed
                .to_move(pos)
                .map_err(|_| ApiError::bad(format!("{san} is not legal at ply {ply}")))
        }
        (None, Some(uci)) => {
            let parsed: UciMove = uci
                .trim()
                .parse()
                .map_err(|_| ApiError::bad(format!("{uci:?} is not a move in UCI")))?;
            parsed
                .to_move(pos)
                .map_err(|_| ApiError::bad(format!("{uci} is not legal at ply {ply}")))
        }
        _ => Err(ApiError::bad(
            "give the move as san or as uci, one of the two",
        )),
    }
}

/// Hands the hall a change of a typed game and waits until it is stored.
async fn send(
    hall: &ToHall,
    game_id: GameId,
    action: EditAction,
    moves: Vec<StoredMove>,
) -> Result<Seq, ApiError> {
    let rx = GameEdit::send(hall, game_id, action, moves, None).ok_or(ApiError::ShuttingDown)?;
    wait_reply(rx).await
}

pub async fn post_move(
    who: Entrant,
    State(store): State<Store>,
    State(boards): State<Arc<Boards>>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    JsonBody(b, _): JsonBody<TypedMoveBody>,
) -> Result<Json<TypedDone>, ApiError> {
    let g = typed_game(&store, &boards, &who, id).await?;
    let next = g.moves.len() as u32 + 1;
    let ply = b.ply.unwrap_or(next);
    if ply == 0 || ply > next {
        return Err(ApiError::Conflict(format!(
            "ply {ply} cannot be played yet: the game has {} moves, so the next is ply {next} (send the moves before it first)",
            g.moves.len()
        )));
    }
    let mut pos = position_before(&g, ply)?;
    let mv = typed_move(&b, &pos, ply)?;
    let uci = mv.to_uci(g.castling_mode()).to_string();
    // A resend of a move already stored is done; another move there is a clash.
    let done = |g: &StoredGame| -> Result<Option<TypedDone>, ApiError> {
        match g.moves.get(ply as usize - 1) {
            None => Ok(None),
            Some(m) if m.uci == uci => Ok(Some(TypedDone::already(id, ply))),
            Some(m) => Err(ApiError::Conflict(format!(
                "ply {ply} is {} already; take it back first to play another move there",
                m.san
            ))),
        }
    };
    if let Some(d) = done(&g)? {
        return Ok(Json(d));
    }
    let result = stored_result(&g.result);
    if result != GameResult::Ongoing {
        return Err(ApiError::Conflict(format!(
            "game {id} is over ({result}); take the result back first"
        )));
    }
    let mut m = stored_move(&mut pos, mv, ply, g.castling_mode(), None);
    m.clk_ms = b.clk_ms;
    match send(&hall, id, EditAction::Typed, vec![m]).await {
        Ok(seq) => {
            tracing::info!(game = %id, ply, by = who.actor(), "typed move stored");
            Ok(Json(TypedDone::stored(id, ply, seq)))
        }
        // Two sends of the same ply at once: the second finds the first's move.
        Err(ApiError::Conflict(why)) => {
            let g = store.game(id).await?;
            done(&g)?.map(Json).ok_or(ApiError::Conflict(why))
        }
        Err(e) => Err(e),
    }
}

/// A takeback: the ply to take back.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TakebackBody {
    /// The game's last move (a resend after the game has lost it already is done).
    ply: u32,
}

pub async fn take_back(
    who: Entrant,
    State(store): State<Store>,
    State(boards): State<Arc<Boards>>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    JsonBody(b, _): JsonBody<TakebackBody>,
) -> Result<Json<TypedDone>, ApiError> {
    let g = typed_game(&store, &boards, &who, id).await?;
    let last = g.moves.len() as u32;
    if b.ply == last + 1 {
        return Ok(Json(TypedDone::already(id, b.ply)));
    }
    if b.ply == 0 || b.ply != last {
        return Err(ApiError::Conflict(format!(
            "only the last move (ply {last}) can be taken back, not ply {}",
            b.ply
        )));
    }
    let keep = g.moves[..last as usize - 1].to_vec();
    let seq = send(&hall, id, EditAction::Truncate { from_ply: b.ply }, keep).await?;
    tracing::info!(game = %id, ply = b.ply, by = who.actor(), "typed move taken back");
    Ok(Json(TypedDone::stored(id, b.ply, seq)))
}
