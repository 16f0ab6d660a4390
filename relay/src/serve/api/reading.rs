//! Public reads: tournaments, rounds and games as JSON, as of the delay (live for arbiters); the views the WebSockets share.

use super::*;
use crate::serve::live::NotForgotten;
use crate::serve::views::{GameView, RoundView};

pub(super) async fn list_tournaments(State(s): State<AppState>) -> ApiResult {
    json_ok(serde_json::to_value(s.store.tournaments().await?).unwrap_or(Value::Null))
}

pub(super) async fn get_tournament(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let id = parse_id(&id, "tournament")?;
    json_ok(serde_json::to_value(s.store.tournament(id).await?).unwrap_or(Value::Null))
}

/// A round's view: games as of the delay (live for arbiters).
pub async fn round_json(s: &Shared, id: i64, arbiter: bool) -> Result<Value, ApiError> {
    let r = s.store.round(id).await?;
    let (cut, delay) = cutoff(s, &r, arbiter).await?;
    let v: RoundView = s.lookup.round_view_of(r, cut, delay).await?;
    Ok(serde_json::to_value(v).unwrap_or(Value::Null))
}

/// A game's view, as of the delay.
pub async fn game_json(s: &Shared, id: i64, arbiter: bool) -> Result<Value, ApiError> {
    let g = s.store.game(id).await?;
    let r = s.store.round(g.round_id).await?;
    let (cut, _) = cutoff(s, &r, arbiter).await?;
    let view: GameView = s.lookup.game_view_of(&g, cut);
    let mut v = serde_json::to_value(view).unwrap_or(Value::Null);
    if arbiter && let Some(o) = v.as_object_mut() {
        // What an arbiter's edit names in `If-Match` (see `games::made_on`).
        o.insert("edits".into(), g.edits.into());
    }
    Ok(v)
}

pub(super) async fn get_round(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "round")?;
    let a = arbiter(&s, &h)?;
    json_ok(round_json(&s, id, a).await?)
}

pub(super) async fn get_game(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "game")?;
    let a = arbiter(&s, &h)?;
    json_ok(game_json(&s, id, a).await?)
}

#[derive(Deserialize)]
pub(super) struct Since {
    since: Option<i64>,
}

pub(super) async fn round_changes(
    State(s): State<AppState>,
    Path(id): Path<String>,
    q: Result<axum::extract::Query<Since>, axum::extract::rejection::QueryRejection>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "round")?;
    let q = q.map_err(|e| ApiError::bad(format!("bad query: {e}")))?;
    let r = s.store.round(id).await?;
    let (cut, _) = cutoff(&s, &r, arbiter(&s, &h)?).await?;
    let found = s
        .store
        .changes_since(id, q.since.unwrap_or(0), MAX_CHANGES + 1)
        .await?;
    let more = found.len() > MAX_CHANGES as usize;
    let changes: Vec<Value> = found
        .into_iter()
        .take(MAX_CHANGES as usize)
        .filter(|c| cut.is_none_or(|t| c.at_ms <= t))
        .map(|c| {
            json!({"seq": c.seq, "game_id": c.game_id, "kind": c.kind, "at_ms": c.at_ms,
                   "data": serde_json::from_str::<Value>(&c.payload).unwrap_or(Value::Null)})
        })
        .collect();
    // `more`: ask again with the last seq for the rest.
    json_ok(json!({"round_id": id, "changes": changes, "more": more}))
}

pub(super) async fn list_eboards(State(s): State<AppState>, h: HeaderMap) -> ApiResult {
    let a = arbiter(&s, &h)?;
    let mut list = s.boards.eboards();
    if !a {
        // The board as read and a proposed result are live news: spectators of a delayed
        // round do not get them early.
        let mut delays = std::collections::HashMap::new();
        for e in &mut list {
            let Some(round) = e.round_id else { continue };
            // Without the database the delay is unknown: the e-boards' state is still
            // shown (operators need it most then), without what a delay would hide.
            let delay = match delays.get(&round) {
                Some(d) => *d,
                None => {
                    let d = match s.store.round(round).await {
                        Ok(r) => s.lookup.delay_ms(&r).await.unwrap_or(i64::MAX),
                        Err(_) => i64::MAX,
                    };
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
    json_ok(serde_json::to_value(list).unwrap_or(Value::Null))
}

pub(super) async fn forget_eboard(
    State(s): State<AppState>,
    Path(serial): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    match s.boards.forget_eboard(&serial) {
        Err(NotForgotten::Unknown) => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("e-board {serial:?} not found"),
        )),
        Err(NotForgotten::Connected) => Err(ApiError(
            StatusCode::CONFLICT,
            format!("e-board {serial} is connected"),
        )),
        Ok(()) => json_ok(json!({"forgotten": serial})),
    }
}
