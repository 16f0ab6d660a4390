//! Arbiter actions on games: corrections, truncation, results, continuing from the board.

use super::*;

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
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!(
                "game {} was edited by another arbiter since you read it (it is at edit {}, you read edit {n}); read it again and redo the change if it is still needed",
                g.id, g.edits
            ),
        ));
    }
    Ok(n)
}

pub(super) async fn send_edit(
    s: &Shared,
    g: &StoredGame,
    h: &HeaderMap,
    action: EditAction,
    moves: Vec<StoredMove>,
) -> ApiResult {
    let edits = made_on(h, g)?;
    let game_id = g.id;
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !s.hall.send(HallCommand::Edit(GameEdit {
        game_id,
        action,
        moves,
        edits: Some(edits),
        reply: tx,
    })) {
        return Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down".into(),
        ));
    }
    let seq = wait_reply(rx).await?;
    json_ok(json!({"game_id": game_id, "seq": seq}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResultBody {
    result: String,
    termination: Option<String>,
}

pub(super) async fn set_result(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let b: ResultBody = body_json(&body)?;
    let result: relay_core::game::GameResult = b
        .result
        .parse()
        .map_err(|e: relay_core::game::BadResult| ApiError::bad(e.to_string()))?;
    check_text("termination", b.termination.as_deref(), 100)?;
    let g = s.store.game(id).await?;
    let status = if result == relay_core::game::GameResult::Ongoing {
        GameStatus::Live
    } else {
        GameStatus::Confirmed
    };
    send_edit(
        &s,
        &g,
        &h,
        EditAction::Result {
            result,
            termination: b.termination,
            status,
        },
        g.moves.clone(),
    )
    .await
}

pub(super) async fn confirm_result(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let g = s.store.game(id).await?;
    let proposal = s
        .boards
        .eboard_on(id)
        .and_then(|sn| s.boards.eboard(&sn))
        .and_then(|e| e.proposal);
    let (result, termination) = match (proposal, g.result.as_str()) {
        (Some(p), _) => {
            let term = (p.reason == "time_forfeit").then(|| "time forfeit".to_string());
            (p.result, term.or(g.termination.clone()))
        }
        (None, "*") => {
            return Err(ApiError(
                StatusCode::CONFLICT,
                "nothing to confirm: no result and no proposal".into(),
            ));
        }
        (None, r) => (stored_result(r), g.termination.clone()),
    };
    send_edit(
        &s,
        &g,
        &h,
        EditAction::Result {
            result,
            termination,
            status: GameStatus::Confirmed,
        },
        g.moves.clone(),
    )
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlyBody {
    ply: u32,
}

pub(super) async fn truncate(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let b: PlyBody = body_json(&body)?;
    let g = s.store.game(id).await?;
    if b.ply == 0 || b.ply as usize > g.moves.len() {
        return Err(ApiError::bad(format!(
            "ply must be between 1 and {} (the game's last move)",
            g.moves.len()
        )));
    }
    let keep = g.moves[..b.ply as usize - 1].to_vec();
    send_edit(&s, &g, &h, EditAction::Truncate { from_ply: b.ply }, keep).await
}

pub(super) fn start_position(g: &StoredGame) -> Result<Chess, ApiError> {
    g.start_position().ok_or_else(|| {
        ApiError(
            StatusCode::CONFLICT,
            "the game's start position is damaged".into(),
        )
    })
}

pub(super) fn stored_move(
    pos: &mut Chess,
    mv: shakmaty::Move,
    ply: u32,
    mode: CastlingMode,
    from: Option<&StoredMove>,
) -> StoredMove {
    let san = SanPlus::from_move_and_play_unchecked(pos, mv);
    StoredMove {
        ply,
        san: san.to_string(),
        uci: mv.to_uci(mode).to_string(),
        clk_ms: from.and_then(|m| m.clk_ms),
        emt_ms: from.and_then(|m| m.emt_ms),
        accepted_at_ms: from.map_or_else(now_ms, |m| m.accepted_at_ms),
        fen_after: Fen::from_position(pos, EnPassantMode::Legal).to_string(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveBody {
    ply: u32,
    san: String,
}

pub(super) async fn replace_move(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let b: MoveBody = body_json(&body)?;
    let g = s.store.game(id).await?;
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
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!("stored move {} is damaged", kept[i].ply),
        ));
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
    send_edit(&s, &g, &h, EditAction::Replace { what }, out).await
}

pub(super) async fn replace_game(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let text =
        std::str::from_utf8(&body).map_err(|_| ApiError::bad("the PGN is not UTF-8 text"))?;
    let parsed = read_game(text).map_err(|e| ApiError::bad(format!("PGN not understood: {e}")))?;
    if parsed.moves.len() > super::MAX_PLIES {
        return Err(ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the PGN has {} plies; a game may have at most {} (nothing was changed)",
                parsed.moves.len(),
                super::MAX_PLIES
            ),
        ));
    }
    let g = s.store.game(id).await?;
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
    send_edit(&s, &g, &h, EditAction::Replace { what }, out).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuditQuery {
    before: Option<i64>,
    limit: Option<u32>,
}

pub(super) async fn audit_all(
    State(s): State<AppState>,
    q: Result<axum::extract::Query<AuditQuery>, axum::extract::rejection::QueryRejection>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    let q = q.map_err(|e| ApiError::bad(format!("bad query: {e}")))?;
    let limit = q.limit.unwrap_or(200);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad("limit must be between 1 and 1000"));
    }
    let entries = s.store.audit_all(q.before, limit).await?;
    json_ok(serde_json::to_value(entries).unwrap_or(Value::Null))
}

pub(super) async fn audit(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    s.store.game(id).await?;
    json_ok(serde_json::to_value(s.store.audit_trail(id).await?).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TurnBody {
    turn: String,
}

pub(super) async fn continue_from_board(
    State(s): State<AppState>,
    Path(serial): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    if s.boards.eboard(&serial).is_none() {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("e-board {serial:?} not found"),
        ));
    }
    let b: TurnBody = body_json(&body)?;
    let white_to_move = match b.turn.as_str() {
        "white" => true,
        "black" => false,
        other => {
            return Err(ApiError::bad(format!(
                "turn must be \"white\" or \"black\", not {other:?}"
            )));
        }
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !s.hall.send(HallCommand::ContinueFromBoard {
        serial: serial.clone(),
        white_to_move,
        reply: tx,
    }) {
        return Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down".into(),
        ));
    }
    match tokio::time::timeout(Duration::from_secs(5), rx).await {
        Ok(Ok(Ok(_))) => json_ok(json!({"serial": serial, "continued": true})),
        Ok(Ok(Err(e))) => Err(ApiError(StatusCode::CONFLICT, e)),
        _ => Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the hall did not answer".into(),
        )),
    }
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route").finish_non_exhaustive()
    }
}
