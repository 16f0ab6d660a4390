//! The cloud side of pushing: `POST /api/push` takes a venue relay's batch (see
//! `relay_store::PushBatch` and `serve::push::cloud`), and an arbiter here settles a conflict
//! by taking the venue's version (`POST /api/games/{id}/take-venue`), or a clash of two halls
//! over one board by placing the held game on a free board (`POST /api/push/settle`).
//!
//! A batch is checked whole before anything is stored (the token, the JSON, every move
//! legal from its game's start), then applied in one transaction. Its changes reach this
//! relay's clients through the change log like any other relay's commits (`follow`), so
//! they go out once and in order.

use super::check::{MAX_PLIES, start_position, stored_move};
use super::error::ApiError;
use super::extract::{Admin, JsonBody, Path, Pusher};
use crate::serve::events::Event;
use crate::serve::id::GameId;
use crate::serve::live::Boards;
use crate::serve::publish::Publisher;
use crate::serve::views::EboardView;
use axum::Json;
use axum::extract::State;
use relay_store::{
    Applied, PushBatch, PushReply, RoundId, Settled, Store, StoreError, StoredGame, now_ms,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// Plays a pushed game's moves from its start: every move must be legal and the plies
/// must follow on. The SAN and positions are worked out here, not taken on trust.
fn check_game(g: &mut StoredGame) -> Result<(), ApiError> {
    let bad = |what: String| {
        ApiError::bad(format!(
            "game {} (board {}): {what}; nothing was stored",
            g.id, g.pairing.board_no
        ))
    };
    if g.moves.len() > MAX_PLIES {
        return Err(bad(format!(
            "{} plies is more than {}",
            g.moves.len(),
            MAX_PLIES
        )));
    }
    let mode = g.castling_mode();
    let mut pos = start_position(g).map_err(|_| bad("the start position does not read".into()))?;
    // Plies follow on from the first (a game set up from a position may not start at 1).
    let first = g.moves.first().map_or(1, |m| m.ply.max(1));
    for (i, m) in g.moves.iter().enumerate() {
        let want = first + i as u32;
        if m.ply != want {
            return Err(bad(format!(
                "move {} has ply {}, expected {want}",
                i + 1,
                m.ply
            )));
        }
    }
    let (played, damaged) =
        relay_core::game::play_uci(&pos, g.moves.iter().map(|m| m.uci.as_str()));
    if let Some(i) = damaged {
        let m = &g.moves[i];
        return Err(bad(format!(
            "{} is not a legal move at ply {}",
            m.uci, m.ply
        )));
    }
    let checked: Vec<_> = played
        .into_iter()
        .zip(&g.moves)
        .map(|(mv, m)| stored_move(&mut pos, mv, m.ply, mode, Some(m)))
        .collect();
    g.moves = checked;
    Ok(())
}

pub async fn accept_push(
    _: Pusher,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    State(boards): State<Arc<Boards>>,
    JsonBody(mut batch, _): JsonBody<PushBatch>,
) -> Result<Json<PushReply>, ApiError> {
    if batch.origin.is_empty() || batch.origin.len() > 64 {
        return Err(ApiError::bad("origin must be 1 to 64 characters"));
    }
    for g in &mut batch.games {
        check_game(g)?;
    }
    let applied = store.apply_push(&batch).await.map_err(|e| match e {
        StoreError::Conflict(m) => ApiError::Bad(m),
        other => other.into(),
    })?;
    if !applied.reply.stale {
        for (round, _) in &applied.rounds {
            publisher.order().want(RoundId::from(*round));
        }
        if applied.meta_changed {
            publisher.rounds_edited_elsewhere().await;
        }
        if let Some(views) = &batch.eboards {
            show_venue_eboards(&store, &publisher, &boards, &batch, &applied, views).await;
        }
        let clashes = applied.reply.conflicts.iter().filter(|c| c.clash).count();
        let changed = applied.reply.conflicts.len() - clashes;
        if changed > 0 {
            tracing::warn!(venue = %batch.name, conflicts = changed, "venue versions held back: games changed here by an arbiter");
        }
        // Said once per game (a clashing live game comes again with every move).
        if applied.new_clashes > 0 {
            tracing::warn!(venue = %batch.name, new = applied.new_clashes, clashes, "venue games held back: their boards are another hall's here");
        }
    }
    Ok(Json(applied.reply))
}

/// The venue's e-boards, with its game and round ids turned into this relay's, listed here
/// as read by the venue (and, on PostgreSQL, for the relays beside this one).
async fn show_venue_eboards(
    store: &Store,
    publisher: &Publisher,
    boards: &Boards,
    batch: &PushBatch,
    applied: &Applied,
    views: &[Value],
) {
    let ids = match store.mirror_ids(&batch.origin).await {
        Ok(ids) => ids,
        Err(e) => {
            tracing::warn!(error = %e, "venue e-boards not shown");
            return;
        }
    };
    let local = |kind: &'static str, id: Option<i64>| {
        id.and_then(|id| {
            applied
                .ids
                .get(&(kind, id))
                .or_else(|| ids.get(&(kind.to_string(), id)))
                .copied()
        })
    };
    let views: Vec<EboardView> = views
        .iter()
        .filter_map(|v| serde_json::from_value::<EboardView>(v.clone()).ok())
        .map(|mut view| {
            // The venue's ids, as this relay's.
            view.game_id = local("game", view.game_id.map(GameId::get)).map(GameId::from);
            view.round_id = local("round", view.round_id.map(RoundId::get)).map(RoundId::from);
            view
        })
        .collect();
    // The board here: a game placed on another board (a clash settled) keeps its e-board.
    let games: Vec<GameId> = views.iter().filter_map(|v| v.game_id).collect();
    let here = store.board_numbers(&games).await.unwrap_or_default();
    for mut view in views {
        if let Some(b) = view.game_id.and_then(|g| here.get(&g)) {
            view.board_no = Some(*b);
        }
        view.read_by = format!("venue {}", batch.name);
        if let (Some(game), Some(board), Some(round)) = (view.game_id, view.board_no, view.round_id)
        {
            boards.bind(&view.serial, game, 0, board, round);
        }
        if boards.eboard(&view.serial).as_ref() == Some(&view) {
            continue;
        }
        boards.put_eboard(view.clone());
        if let Ok(text) = serde_json::to_string(&view) {
            let _ = store.put_eboard_live(&view.serial, &text, now_ms()).await;
        }
        if let Some(round) = view.round_id {
            let seq = publisher.order().last(round).unwrap_or_default();
            publisher.push_to_feed(Event::eboard(round, seq, view));
        }
    }
}

/// The venue's version of a game, taken.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TookVenue {
    game_id: GameId,
    /// How many moves the game has now.
    moves: usize,
    result: String,
}

pub async fn take_venue(
    _: Admin,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    Path(id): Path<GameId>,
) -> Result<Json<TookVenue>, ApiError> {
    let rounds = store.take_held(id.get()).await?;
    for (round, _) in &rounds {
        publisher.order().want(RoundId::from(*round));
    }
    let g = store.game(id).await?;
    Ok(Json(TookVenue {
        game_id: id,
        moves: g.moves.len(),
        result: g.result,
    }))
}

/// Where to place a venue's game that clashed with another hall's over a board.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettleBody {
    /// The venue (its `origin` in `/health`'s `pushed_from`).
    origin: String,
    /// The venue's id of the game (the conflict's `game_id`).
    game_id: GameId,
    /// A free board of the round here (1 to 99999); for a game its venue renumbered, also
    /// the board it is on, to keep it there.
    board_no: u32,
}

pub async fn settle_clash(
    _: Admin,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    JsonBody(b, _): JsonBody<SettleBody>,
) -> Result<Json<Settled>, ApiError> {
    if !(1..=99_999).contains(&b.board_no) {
        return Err(ApiError::bad("board_no must be between 1 and 99999"));
    }
    let settled = store
        .settle_clash(&b.origin, b.game_id.get(), b.board_no)
        .await?;
    for (round, _) in &settled.rounds {
        publisher.order().want(RoundId::from(*round));
    }
    // A new game in the round: its pairings' readers (round lists, the round PGN) hear it.
    publisher.rounds_edited_elsewhere().await;
    tracing::info!(origin = %b.origin, venue_game = %b.game_id, board = b.board_no, game = %settled.game_id, "a clash between halls settled");
    Ok(Json(settled))
}
