//! Games: one game as of the delay (live for arbiters), and arbiters' corrections (a result
//! set or confirmed, moves removed or replaced, the whole game from a PGN). The hall makes
//! every correction, so a game an e-board plays is never changed behind its recorder's back.

use super::check::{MAX_PLIES, check_text, start_position, stored_move};
use super::error::ApiError;
use super::extract::{Admin, Entrant, JsonBody, Path, Reader};
use super::reply::wait_reply;
use crate::serve::id::{GameId, Seq};
use crate::serve::jobs::{EditAction, GameEdit, ToHall};
use crate::serve::live::Boards;
use crate::serve::lookup::Lookup;
use crate::serve::views::{GameStatus, GameView, stored_result};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use relay_core::pgn::read_game;
use relay_core::recorder::ProposalReason;
use relay_store::TournamentId;
use relay_store::{Store, StoredGame, StoredMove};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shakmaty::san::San;
use std::sync::Arc;

/// A game as `GET /api/games/{id}` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GameAnswer {
    #[serde(flatten)]
    view: GameView,
    /// The game's tournament (its standings, its spoiler-free default).
    tournament_id: TournamentId,
    /// Arbiters only: the game's edit count, which an edit names in `If-Match`.
    #[serde(skip_serializing_if = "Option::is_none")]
    edits: Option<i64>,
    /// Arbiters (and spectators where the tournament shows the record): the illegal moves (and presses without a move) the board showed, with
    /// what the Laws prescribe for each.
    #[serde(skip_serializing_if = "Option::is_none")]
    illegal_moves: Option<Vec<super::record::IllegalMoveView>>,
    /// As `illegal_moves`: clock times changed by hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    clock_adjustments: Option<Vec<super::record::ClockAdjustmentView>>,
    /// As `illegal_moves`: the game was joined in its middle (recorded from its start FEN).
    #[serde(skip_serializing_if = "Option::is_none")]
    joined_late: Option<bool>,
    /// As `illegal_moves`: stretches of moves read back from the board's own memory
    /// (played while nothing read the board).
    #[serde(skip_serializing_if = "Option::is_none")]
    recovered: Option<Vec<super::record::RecoveredView>>,
}

pub async fn get_game(
    State(lookup): State<Lookup>,
    Path(id): Path<GameId>,
    reader: Reader,
) -> Result<Json<GameAnswer>, ApiError> {
    let g = lookup.store.game(id).await?;
    let r = lookup.store.round(g.round_id).await?;
    let (cut, _) = lookup.cutoff(&r, reader.arbiter).await?;
    // Arbiters see the game's record; spectators too when the tournament says so, as of
    // the delay.
    let (tc, public) = lookup.store.record_terms(r.tournament_id).await?;
    let record = if reader.arbiter || public {
        Some(super::record::record_of(&lookup.store, &g, tc.as_deref(), cut).await?)
    } else {
        None
    };
    let mut view = lookup.game_view_of(&g, cut);
    lookup.with_evals(std::slice::from_mut(&mut view)).await;
    Ok(Json(GameAnswer {
        view,
        tournament_id: r.tournament_id,
        edits: reader.arbiter.then_some(g.edits),
        illegal_moves: record.as_ref().map(|r| r.illegal_moves.clone()),
        joined_late: record.as_ref().map(|r| r.joined_late),
        recovered: record.as_ref().map(|r| r.recovered.clone()),
        clock_adjustments: record.map(|r| r.clock_adjustments),
    }))
}

/// The version of the game an arbiter's edit is made on: `If-Match: "N"` when the client
/// names the `edits` count it read (refused at once when the game has moved on), else the
/// version read for this request. Either way the store refuses the edit if another arbiter's
/// (on this relay or another on the same database) is committed first: 409, never a silent
/// overwrite.
fn made_on(h: &HeaderMap, g: &StoredGame) -> Result<i64, ApiError> {
    let Some(v) = h.get(header::IF_MATCH) else {
        return Ok(g.edits);
    };
    let n: i64 = v
        .to_str()
        .ok()
        .map(|t| t.trim().trim_start_matches("W/").trim_matches('"'))
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| {
            ApiError::bad("If-Match must be the game's edit count as a quoted number (\"3\")")
        })?;
    if n != g.edits {
        return Err(ApiError::Conflict(format!(
            "game {} was edited by another arbiter since you read it (it is at edit {}, you read edit {n}); read it again and redo the change if it is still needed",
            g.id, g.edits
        )));
    }
    Ok(n)
}

/// An edit done: the game and the round's change number it was committed at.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EditDone {
    game_id: GameId,
    seq: Seq,
}

pub(super) async fn send_edit(
    hall: &ToHall,
    g: &StoredGame,
    h: &HeaderMap,
    action: EditAction,
    moves: Vec<StoredMove>,
) -> Result<Json<EditDone>, ApiError> {
    let edits = made_on(h, g)?;
    let game_id = g.id;
    let rx =
        GameEdit::send(hall, game_id, action, moves, Some(edits)).ok_or(ApiError::ShuttingDown)?;
    let seq = wait_reply(rx).await?;
    Ok(Json(EditDone { game_id, seq }))
}

/// A result to set.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultBody {
    /// `1-0`, `0-1`, `1/2-1/2`, or `*` to take a result back.
    result: String,
    /// How it ended, at most 100 characters ("time forfeit").
    termination: Option<String>,
}

/// An arbiter's result is confirmed; an operator's (typed on a board's move-entry page, for a
/// board it was given) is the game's result until an arbiter confirms it.
pub async fn set_result(
    who: Entrant,
    State(store): State<Store>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    h: HeaderMap,
    JsonBody(b, _): JsonBody<ResultBody>,
) -> Result<Json<EditDone>, ApiError> {
    let result: relay_core::game::GameResult = b
        .result
        .parse()
        .map_err(|e: relay_core::game::BadResult| ApiError::bad(e.to_string()))?;
    check_text("termination", b.termination.as_deref(), 100)?;
    let g = store.game(id).await?;
    who.may_enter(g.round_id, g.pairing.board_no)?;
    let status = match (result, &who) {
        (relay_core::game::GameResult::Ongoing, _) => GameStatus::Live,
        (_, Entrant::Arbiter) => GameStatus::Confirmed,
        (_, Entrant::Operator(_)) => GameStatus::Finished,
    };
    let action = EditAction::Result {
        result,
        termination: b.termination,
        status,
    };
    send_edit(&hall, &g, &h, action, g.moves.clone()).await
}

pub async fn confirm_result(
    _: Admin,
    State(store): State<Store>,
    State(boards): State<Arc<Boards>>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    h: HeaderMap,
) -> Result<Json<EditDone>, ApiError> {
    let g = store.game(id).await?;
    let proposal = boards
        .eboard_on(id)
        .and_then(|sn| boards.eboard(&sn))
        .and_then(|e| e.proposal);
    let (result, termination) = match (proposal, g.result.as_str()) {
        (Some(p), _) => {
            let term =
                (p.reason == ProposalReason::TimeForfeit).then(|| "time forfeit".to_string());
            (p.result, term.or(g.termination.clone()))
        }
        (None, "*") => {
            return Err(ApiError::Conflict(
                "nothing to confirm: no result and no proposal".into(),
            ));
        }
        (None, r) => (stored_result(r), g.termination.clone()),
    };
    let action = EditAction::Result {
        result,
        termination,
        status: GameStatus::Confirmed,
    };
    send_edit(&hall, &g, &h, action, g.moves.clone()).await
}

/// A ply: 1 is White's first move.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlyBody {
    ply: u32,
}

pub async fn truncate(
    _: Admin,
    State(store): State<Store>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    h: HeaderMap,
    JsonBody(b, _): JsonBody<PlyBody>,
) -> Result<Json<EditDone>, ApiError> {
    let g = store.game(id).await?;
    if b.ply == 0 || b.ply as usize > g.moves.len() {
        return Err(ApiError::bad(format!(
            "ply must be between 1 and {} (the game's last move)",
            g.moves.len()
        )));
    }
    let keep = g.moves[..b.ply as usize - 1].to_vec();
    send_edit(
        &hall,
        &g,
        &h,
        EditAction::Truncate { from_ply: b.ply },
        keep,
    )
    .await
}

/// The move to play at a ply instead of the one there.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    /// 1 to one past the game's last move.
    ply: u32,
    /// In SAN ("Nf3"; a check sign may be left out).
    san: String,
}

pub async fn replace_move(
    _: Admin,
    State(store): State<Store>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    h: HeaderMap,
    JsonBody(b, _): JsonBody<MoveBody>,
) -> Result<Json<EditDone>, ApiError> {
    let g = store.game(id).await?;
    if b.ply == 0 || b.ply as usize > g.moves.len() + 1 {
        return Err(ApiError::bad(format!(
            "ply must be between 1 and {}",
            g.moves.len() + 1
        )));
    }
    let mode = g.castling_mode();
    let mut pos = start_position(&g)?;
    // The moves before the replaced one must all still be there and legal.
    let kept = &g.moves[..b.ply as usize - 1];
    let (played, damaged) = relay_core::game::play_uci(&pos, kept.iter().map(|m| m.uci.as_str()));
    if let Some(i) = damaged {
        return Err(ApiError::Conflict(format!(
            "stored move {} is damaged",
            kept[i].ply
        )));
    }
    let mut out = Vec::new();
    for (mv, m) in played.into_iter().zip(kept) {
        out.push(stored_move(&mut pos, mv, m.ply, mode, Some(m)));
    }
    let san: San = b
        .san
        .trim()
        .trim_end_matches(['+', '#'])
        .parse()
        .map_err(|_| ApiError::bad(format!("{:?} is not a move in SAN", b.san)))?;
    let mv = san
        .to_move(&pos)
        .map_err(|_| ApiError::bad(format!("{} is not legal at ply {}", b.san, b.ply)))?;
    let old = g.moves.get(b.ply as usize - 1);
    out.push(stored_move(&mut pos, mv, b.ply, mode, old));
    // Later moves stay while they are still legal.
    let later = &g.moves[(b.ply as usize).min(g.moves.len())..];
    let (still, _) = relay_core::game::play_uci(&pos, later.iter().map(|m| m.uci.as_str()));
    for (mv, m) in still.into_iter().zip(later) {
        out.push(stored_move(&mut pos, mv, m.ply, mode, Some(m)));
    }
    let what = format!("ply {} replaced by {}", b.ply, b.san);
    send_edit(&hall, &g, &h, EditAction::Replace { what }, out).await
}

/// The body is the game as PGN text.
pub async fn replace_game(
    _: Admin,
    State(store): State<Store>,
    State(hall): State<ToHall>,
    Path(id): Path<GameId>,
    h: HeaderMap,
    body: Bytes,
) -> Result<Json<EditDone>, ApiError> {
    let text =
        std::str::from_utf8(&body).map_err(|_| ApiError::bad("the PGN is not UTF-8 text"))?;
    let parsed = read_game(text).map_err(|e| ApiError::bad(format!("PGN not understood: {e}")))?;
    if parsed.moves.len() > MAX_PLIES {
        return Err(ApiError::TooLarge(format!(
            "the PGN has {} plies; a game may have at most {} (nothing was changed)",
            parsed.moves.len(),
            MAX_PLIES
        )));
    }
    let g = store.game(id).await?;
    let start = start_position(&g)?;
    if parsed.start != start {
        return Err(ApiError::bad(
            "the PGN starts from another position than the game",
        ));
    }
    let mode = parsed.castling_mode;
    let mut pos = start;
    let mut out = Vec::new();
    for (i, m) in parsed.moves.iter().enumerate() {
        let mut sm = stored_move(&mut pos, m.mv, i as u32 + 1, mode, g.moves.get(i));
        sm.clk_ms = m.clk.map(|c| c.millis()).or(sm.clk_ms);
        sm.emt_ms = m.emt.map(|c| c.millis()).or(sm.emt_ms);
        out.push(sm);
    }
    let what = format!("replaced from PGN ({} moves)", out.len());
    send_edit(&hall, &g, &h, EditAction::Replace { what }, out).await
}
