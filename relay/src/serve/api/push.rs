//! The cloud side of pushing: `POST /api/push` takes a venue relay's batch (see
//! `relay_store::PushBatch` and `serve::push::cloud`), and an arbiter here settles a conflict
//! by taking the venue's version (`POST /api/games/{id}/take-venue`).
//!
//! A batch is checked whole before anything is stored (the token, the JSON, every move
//! legal from its game's start), then applied in one transaction. Its changes reach this
//! relay's clients through the change log like any other relay's commits (`follow`), so
//! they go out once and in order.

use super::*;
use relay_store::{PushBatch, StoredGame};

/// Whether the request carries the push token: 401 without one, 403 for a wrong one, and 403
/// when this relay takes no pushes at all.
fn require_push_token(s: &Shared, h: &HeaderMap) -> Result<(), ApiError> {
    let Some(given) = bearer(h) else {
        return Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "a push needs the push token (Authorization: Bearer TOKEN)".into(),
        ));
    };
    let Some(expected) = s.push_token() else {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "this relay takes no pushes (start it with --accept-push-token)".into(),
        ));
    };
    if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError(StatusCode::FORBIDDEN, "wrong push token".into()))
    }
}

/// Plays a pushed game's moves from its start: every move must be legal and the plies
/// must follow on. The SAN and positions are worked out here, not taken on trust.
fn check_game(g: &mut StoredGame) -> Result<(), ApiError> {
    let bad = |what: String| {
        ApiError::bad(format!(
            "game {} (board {}): {what}; nothing was stored",
            g.id, g.pairing.board_no
        ))
    };
    if g.moves.len() > super::MAX_PLIES {
        return Err(bad(format!(
            "{} plies is more than {}",
            g.moves.len(),
            super::MAX_PLIES
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

pub(super) async fn accept_push(State(s): State<AppState>, h: HeaderMap, body: Bytes) -> ApiResult {
    require_push_token(&s, &h)?;
    let mut batch: PushBatch = body_json(&body)?;
    if batch.origin.is_empty() || batch.origin.len() > 64 {
        return Err(ApiError::bad("origin must be 1 to 64 characters"));
    }
    for g in &mut batch.games {
        check_game(g)?;
    }
    let applied = s.store.apply_push(&batch).await.map_err(|e| match e {
        StoreError::Conflict(m) => ApiError::bad(m),
        other => other.into(),
    })?;
    if !applied.reply.stale {
        for (round, _) in &applied.rounds {
            s.publisher.order().want(*round);
        }
        if applied.meta_changed {
            s.publisher.rounds_edited_elsewhere().await;
        }
        if let Some(views) = &batch.eboards {
            show_venue_eboards(&s, &batch, &applied, views).await;
        }
        if !applied.reply.conflicts.is_empty() {
            tracing::warn!(venue = %batch.name, conflicts = applied.reply.conflicts.len(), "venue versions held back: games changed here by an arbiter");
        }
    }
    json_ok(serde_json::to_value(&applied.reply).unwrap_or_default())
}

/// The venue's e-boards, with its game and round ids turned into this relay's, listed here
/// as read by the venue (and, on PostgreSQL, for the relays beside this one).
async fn show_venue_eboards(
    s: &Shared,
    batch: &PushBatch,
    applied: &relay_store::Applied,
    views: &[Value],
) {
    let ids = match s.store.mirror_ids(&batch.origin).await {
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
    for v in views {
        let Ok(mut view) = serde_json::from_value::<EboardView>(v.clone()) else {
            continue;
        };
        view.game_id = local("game", view.game_id);
        view.round_id = local("round", view.round_id);
        view.read_by = format!("venue {}", batch.name);
        if let (Some(game), Some(board), Some(round)) = (view.game_id, view.board_no, view.round_id)
        {
            s.boards.bind(&view.serial, game, 0, board, round);
        }
        if s.boards.eboard(&view.serial).as_ref() == Some(&view) {
            continue;
        }
        s.boards.put_eboard(view.clone());
        if let Ok(text) = serde_json::to_string(&view) {
            let _ = s.store.put_eboard_live(&view.serial, &text, now_ms()).await;
        }
        if let Some(round) = view.round_id {
            let seq = s.publisher.order().last_published(round).unwrap_or(0);
            s.publisher.push_to_feed(Event::eboard(round, seq, view));
        }
    }
}

pub(super) async fn take_venue(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let rounds = s.store.take_held(id).await?;
    for (round, _) in &rounds {
        s.publisher.order().want(*round);
    }
    let g = s.store.game(id).await?;
    json_ok(json!({"game_id": id, "moves": g.moves.len(), "result": g.result}))
}
