//! HTTP: the JSON API, PGN downloads, `/health`, `/metrics`, the OpenAPI document and the
//! pages. Every route is declared once in [`routes`], which builds both the router and the
//! OpenAPI document, so the document cannot miss a route.
//!
//! Public reads apply the broadcast delay; a request with the admin token sees live data.
//! Nothing changes unless a request succeeds: input is checked before anything is written.

use super::live::{
    Cached, EditAction, GameEdit, HallCommand, STANDARD_FEN, Shared, game_view, now_ms, round_view,
};
use super::ws;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use relay_core::pgn::{WriteOptions, read_game, write_games};
use relay_store::{
    NewTournament, Pairing, Player, RoundInfo, RoundPatch, StoreError, StoredGame, StoredMove,
    TournamentPatch, to_game,
};
use serde::Deserialize;
use serde_json::{Value, json};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use subtle::ConstantTimeEq;

pub type AppState = Arc<Shared>;

/// An error answer: a status and a message naming the problem, as `{"error": "..."}`.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub String);

impl ApiError {
    pub fn bad(msg: impl Into<String>) -> ApiError {
        ApiError(StatusCode::BAD_REQUEST, msg.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.0, axum::Json(json!({"error": self.1}))).into_response();
        if self.0 == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::NotFound { .. } => ApiError(StatusCode::NOT_FOUND, e.to_string()),
            StoreError::Conflict(m) => ApiError(StatusCode::CONFLICT, m),
            other => {
                tracing::warn!(error = %other, "store error answering a request");
                ApiError(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the database is not available; try again".into(),
                )
            }
        }
    }
}

type ApiResult = Result<Response, ApiError>;

/// One route: how it is served and how the OpenAPI document describes it.
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    pub admin: bool,
    /// The content type of the success answer.
    pub produces: &'static str,
    pub handler: MethodRouter<AppState>,
}

macro_rules! route {
    ($method:ident, $path:literal, $summary:literal, $admin:literal, $produces:literal, $handler:expr) => {
        Route {
            method: stringify!($method),
            path: $path,
            summary: $summary,
            admin: $admin,
            produces: $produces,
            handler: $method($handler),
        }
    };
}

const JSON: &str = "application/json";
const PGN: &str = "application/x-chess-pgn";

pub fn routes() -> Vec<Route> {
    vec![
        route!(
            get,
            "/health",
            "Store and board health (503 while the database is unavailable)",
            false,
            "application/json",
            health
        ),
        route!(
            get,
            "/metrics",
            "Counters in the Prometheus text format",
            false,
            "text/plain",
            metrics
        ),
        route!(
            get,
            "/api/openapi.json",
            "This document",
            false,
            "application/json",
            openapi
        ),
        route!(
            get,
            "/api/ws-messages.schema.json",
            "JSON Schema of every message the WebSockets send (`type` names the message)",
            false,
            "application/json",
            ws_messages_schema
        ),
        route!(
            get,
            "/api/tournaments",
            "Tournaments with their rounds",
            false,
            "application/json",
            list_tournaments
        ),
        route!(
            post,
            "/api/tournaments",
            "Create a tournament",
            true,
            "application/json",
            create_tournament
        ),
        route!(
            get,
            "/api/tournaments/{id}",
            "One tournament with its rounds",
            false,
            "application/json",
            get_tournament
        ),
        route!(
            patch,
            "/api/tournaments/{id}",
            "Edit a tournament (name, site, time control, delay)",
            true,
            "application/json",
            edit_tournament
        ),
        route!(
            get,
            "/api/tournaments/{id}/pgn",
            "All games of a tournament as PGN",
            false,
            "application/x-chess-pgn",
            tournament_pgn
        ),
        route!(
            post,
            "/api/tournaments/{id}/rounds",
            "Create a round",
            true,
            "application/json",
            create_round
        ),
        route!(
            get,
            "/api/rounds/{id}",
            "A round with all its games",
            false,
            "application/json",
            get_round
        ),
        route!(
            patch,
            "/api/rounds/{id}",
            "Edit a round (delay, final)",
            true,
            "application/json",
            edit_round
        ),
        route!(
            get,
            "/api/rounds/{id}/pgn",
            "All games of a round as PGN, by board number",
            false,
            "application/x-chess-pgn",
            round_pgn
        ),
        route!(
            get,
            "/api/rounds/{id}/changes",
            "Changes of a round after ?since=N",
            false,
            "application/json",
            round_changes
        ),
        route!(
            get,
            "/api/rounds/{id}/ws",
            "WebSocket: snapshot then deltas of a round (?since=N resumes, ?eboards=1 adds e-board news); messages as in /api/ws-messages.schema.json",
            false,
            "application/json",
            ws::round_socket
        ),
        route!(
            put,
            "/api/rounds/{id}/pairings",
            "Load pairings (JSON list, or PGN whose tags give the players per board)",
            true,
            "application/json",
            put_pairings
        ),
        route!(
            put,
            "/api/rounds/{id}/boards/{board_no}",
            "Put an e-board (by serial) on a board number",
            true,
            "application/json",
            assign_eboard
        ),
        route!(
            get,
            "/api/games/{id}",
            "One game: players, moves with clocks, running clock, result",
            false,
            "application/json",
            get_game
        ),
        route!(
            get,
            "/api/games/{id}/pgn",
            "One game as PGN",
            false,
            "application/x-chess-pgn",
            game_pgn
        ),
        route!(
            get,
            "/api/games/{id}/ws",
            "WebSocket: snapshot then deltas of one game (?since=N resumes); messages as in /api/ws-messages.schema.json",
            false,
            "application/json",
            ws::game_socket
        ),
        route!(
            put,
            "/api/games/{id}/pgn",
            "Replace the whole game from an uploaded PGN",
            true,
            "application/json",
            replace_game
        ),
        route!(
            post,
            "/api/games/{id}/result",
            "Set (and confirm) a result",
            true,
            "application/json",
            set_result
        ),
        route!(
            post,
            "/api/games/{id}/confirm",
            "Confirm the proposed or current result",
            true,
            "application/json",
            confirm_result
        ),
        route!(
            post,
            "/api/games/{id}/truncate",
            "Remove the moves from ply N on",
            true,
            "application/json",
            truncate
        ),
        route!(
            post,
            "/api/games/{id}/move",
            "Replace the move at ply N (later moves kept while legal)",
            true,
            "application/json",
            replace_move
        ),
        route!(
            get,
            "/api/audit",
            "The whole audit trail, newest first (?before=ID&limit=N, at most 1000)",
            true,
            "application/json",
            audit_all
        ),
        route!(
            get,
            "/api/games/{id}/audit",
            "The audit trail of a game",
            true,
            "application/json",
            audit
        ),
        route!(
            get,
            "/api/eboards",
            "E-boards: port, serial, connected, battery, in sync",
            false,
            "application/json",
            list_eboards
        ),
        route!(
            post,
            "/api/eboards/{serial}/continue",
            "Go on from the position on the e-board ({\"turn\":\"white\"|\"black\"}): a game joined in the middle, or one the recorder lost",
            true,
            "application/json",
            continue_from_board
        ),
        route!(
            delete,
            "/api/eboards/{serial}",
            "Forget a disconnected e-board in the list",
            true,
            "application/json",
            forget_eboard
        ),
    ]
}

/// The service's router. `web_dir`: where the pages are.
pub fn app(shared: AppState, web_dir: Option<std::path::PathBuf>) -> Router {
    let mut by_path: Vec<(&'static str, MethodRouter<AppState>)> = Vec::new();
    for r in routes() {
        match by_path.iter_mut().find(|(p, _)| *p == r.path) {
            Some((_, m)) => *m = std::mem::take(m).merge(r.handler),
            None => by_path.push((r.path, r.handler)),
        }
    }
    let mut router = Router::new();
    for (p, m) in by_path {
        router = router.route(p, m);
    }
    let pages = super::pages::service(web_dir);
    let counted = shared.clone();
    router
        .fallback_service(pages)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                counted
                    .metrics
                    .http_requests
                    .fetch_add(1, Ordering::Relaxed);
                next.run(req)
            },
        ))
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(tower_http::cors::CorsLayer::permissive())
        .layer(
            tower_http::trace::TraceLayer::new_for_http().make_span_with(
                // Method and path only: a query string or header could carry a token.
                |req: &axum::http::Request<_>| {
                    tracing::debug_span!("http", method = %req.method(), path = %req.uri().path())
                },
            ),
        )
        .with_state(shared)
}

/// Most changes one `/changes` answer carries.
const MAX_CHANGES: u32 = 1000;

/// Largest request body (a tournament's PGN fits easily).
pub const MAX_BODY: usize = 8 * 1024 * 1024;

// ---------------------------------------------------------------------------------------
// Access

/// Whether the request carries the admin token. A wrong token is an error, not "public".
pub fn arbiter(shared: &Shared, headers: &HeaderMap) -> Result<bool, ApiError> {
    // Only a Bearer token counts: other schemes (a proxy's Basic auth) are public readers.
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return Ok(false);
    };
    let Some(expected) = &shared.admin_token else {
        return Err(no_token());
    };
    if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(true)
    } else {
        Err(ApiError(StatusCode::FORBIDDEN, "wrong admin token".into()))
    }
}

fn no_token() -> ApiError {
    ApiError(
        StatusCode::SERVICE_UNAVAILABLE,
        "arbiter actions are switched off: no admin token is configured (start relay serve with --admin-token or RELAY_ADMIN_TOKEN)".into(),
    )
}

fn require_admin(shared: &Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    if shared.admin_token.is_none() {
        return Err(no_token());
    }
    if arbiter(shared, headers)? {
        Ok(())
    } else {
        Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "this action needs the admin token (Authorization: Bearer TOKEN)".into(),
        ))
    }
}

/// The time public views of a round are cut at, or `None` for live data.
/// A failed delay lookup is an error, never live data.
pub async fn cutoff(
    shared: &Shared,
    round: &RoundInfo,
    arbiter: bool,
) -> Result<(Option<i64>, i64), ApiError> {
    let delay = shared.delay_ms(round).await?;
    Ok(if arbiter || delay == 0 {
        (None, delay)
    } else {
        (Some(now_ms() - delay), delay)
    })
}

pub fn parse_id(s: &str, what: &str) -> Result<i64, ApiError> {
    s.parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("{what} {s:?} not found")))
}

fn body_json<T: for<'de> Deserialize<'de>>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("malformed JSON: {e}")))
}

fn json_ok(v: Value) -> ApiResult {
    Ok(axum::Json(v).into_response())
}

// ---------------------------------------------------------------------------------------
// Health and metrics

async fn health(State(s): State<AppState>) -> Response {
    let ok = s.store.ping().await;
    let h = &s.health;
    let eboards = s.eboards.read().unwrap_or_else(|e| e.into_inner()).clone();
    let lost: Vec<&str> = eboards
        .values()
        .filter(|e| !e.connected)
        .map(|e| e.serial.as_str())
        .collect();
    let out_of_sync: Vec<&str> = eboards
        .values()
        .filter(|e| !e.in_sync)
        .map(|e| e.serial.as_str())
        .collect();
    let pending = h.pending_writes.load(Ordering::Relaxed);
    let writer_ok = h.store_ok.load(Ordering::Relaxed);
    let down_since = h.store_down_since_ms.load(Ordering::Relaxed);
    let body = json!({
        "status": if ok && writer_ok { "ok" } else { "degraded" },
        "store": {
            "backend": s.store.backend(),
            "reachable": ok,
            "writes_ok": writer_ok,
            "down_since_ms": (down_since != 0).then_some(down_since),
            "last_error": h.last_store_error.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            "pending_writes": pending,
        },
        "boards": {
            "eboards": eboards.len(),
            "connected": eboards.values().filter(|e| e.connected).count(),
            "lost": lost,
            "out_of_sync": out_of_sync,
        },
        "uptime_s": (now_ms() - s.started_at_ms) / 1000,
    });
    let code = if ok && writer_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, axum::Json(body)).into_response()
}

async fn metrics(State(s): State<AppState>) -> Response {
    let m = &s.metrics;
    let eboards = s.eboards.read().unwrap_or_else(|e| e.into_inner()).clone();
    let c = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let count =
        |f: fn(&super::live::EboardView) -> bool| eboards.values().filter(|e| f(e)).count() as i64;
    // (name, type, help, value)
    let rows: [(&str, &str, &str, i64); 14] = [
        (
            "board_messages_total",
            "counter",
            "Board messages decoded.",
            c(&m.messages) as i64,
        ),
        (
            "board_garbage_total",
            "counter",
            "Runs of garbage bytes skipped on the lines.",
            c(&m.garbage) as i64,
        ),
        (
            "moves_committed_total",
            "counter",
            "Moves committed to the store.",
            c(&m.moves_committed) as i64,
        ),
        (
            "changes_committed_total",
            "counter",
            "Changes committed to the store.",
            c(&m.changes_committed) as i64,
        ),
        (
            "raw_messages_logged_total",
            "counter",
            "Raw board messages in the black box.",
            c(&m.raw_logged) as i64,
        ),
        (
            "store_errors_total",
            "counter",
            "Failed store writes (retried).",
            c(&m.store_errors) as i64,
        ),
        (
            "http_requests_total",
            "counter",
            "HTTP requests served.",
            c(&m.http_requests) as i64,
        ),
        (
            "ws_snapshots_total",
            "counter",
            "Snapshots sent to WebSocket clients.",
            c(&m.ws_snapshots) as i64,
        ),
        (
            "ws_clients",
            "gauge",
            "Open WebSocket connections.",
            m.ws_clients.load(Ordering::Relaxed),
        ),
        (
            "pending_writes",
            "gauge",
            "Jobs waiting for the store.",
            s.health.pending_writes.load(Ordering::Relaxed) as i64,
        ),
        (
            "store_up",
            "gauge",
            "1 when the store takes writes.",
            i64::from(s.health.store_ok.load(Ordering::Relaxed)),
        ),
        ("eboards", "gauge", "E-boards seen.", eboards.len() as i64),
        (
            "eboards_connected",
            "gauge",
            "E-boards connected.",
            count(|e| e.connected),
        ),
        (
            "eboards_out_of_sync",
            "gauge",
            "E-boards whose position the game cannot explain.",
            count(|e| !e.in_sync),
        ),
    ];
    let mut out = String::new();
    for (name, kind, help, v) in rows {
        out.push_str(&format!(
            "# HELP relay_{name} {help}\n# TYPE relay_{name} {kind}\nrelay_{name} {v}\n"
        ));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

async fn ws_messages_schema() -> Response {
    axum::Json(super::wire::schema()).into_response()
}

async fn openapi() -> Response {
    axum::Json(openapi_document()).into_response()
}

/// The OpenAPI 3 document, built from [`routes`].
pub fn openapi_document() -> Value {
    let mut paths = serde_json::Map::new();
    for r in routes() {
        let params: Vec<Value> = r
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": if name == "serial" { "string" } else { "integer" }}}))
            .collect();
        let mut responses = serde_json::Map::new();
        responses.insert(
            "200".into(),
            json!({"description": "success", "content": {r.produces: {}}}),
        );
        if !params.is_empty() {
            responses.insert("404".into(), json!({"description": "unknown id"}));
        }
        if matches!(r.method, "post" | "put" | "patch") {
            responses.insert(
                "400".into(),
                json!({"description": "malformed input; the message names the problem"}),
            );
            responses.insert("413".into(), json!({"description": "body too large"}));
        }
        if r.admin {
            responses.insert("401".into(), json!({"description": "no token"}));
            responses.insert("403".into(), json!({"description": "wrong token"}));
        }
        if r.path.ends_with("/pgn") && r.method == "get" {
            responses.insert(
                "304".into(),
                json!({"description": "not modified (If-None-Match)"}),
            );
        }
        let mut op = json!({
            "summary": r.summary,
            "operationId": format!("{}{}", r.method, r.path.replace(['/', '{', '}', '.'], "_")),
            "parameters": params,
            "responses": responses,
        });
        if r.admin {
            op["security"] = json!([{"bearer": []}]);
        }
        if matches!(r.method, "post" | "put" | "patch") {
            op["requestBody"] =
                json!({"content": {if r.path.ends_with("/pgn") { PGN } else { JSON }: {}}});
        }
        let entry = paths.entry(r.path.to_string()).or_insert_with(|| json!({}));
        entry[r.method] = op;
    }
    json!({
        "openapi": "3.0.3",
        "info": {"title": "relay", "version": env!("CARGO_PKG_VERSION"), "description": "Live-broadcast relay for DGT electronic chess boards", "license": {"name": "GPL-3.0-or-later"}},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    })
}

// ---------------------------------------------------------------------------------------
// Reading

async fn list_tournaments(State(s): State<AppState>) -> ApiResult {
    json_ok(serde_json::to_value(s.store.tournaments().await?).unwrap_or(Value::Null))
}

async fn get_tournament(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let id = parse_id(&id, "tournament")?;
    json_ok(serde_json::to_value(s.store.tournament(id).await?).unwrap_or(Value::Null))
}

/// A round's view: games as of the delay (live for arbiters).
pub async fn round_json(s: &Shared, id: i64, arbiter: bool) -> Result<Value, ApiError> {
    let r = s.store.round(id).await?;
    let t = s.store.tournament(r.tournament_id).await?;
    let games = s.store.round_games(id).await?;
    let (cut, delay) = cutoff(s, &r, arbiter).await?;
    let mut r = r;
    if let Some(c) = cut {
        // The delayed view's change number is the one of its moment.
        r.seq = s.store.seq_at(id, c).await?;
    }
    Ok(round_view(s, &r, &t.name, &games, cut, delay))
}

/// A game's view, as of the delay.
pub async fn game_json(s: &Shared, id: i64, arbiter: bool) -> Result<Value, ApiError> {
    let g = s.store.game(id).await?;
    let r = s.store.round(g.round_id).await?;
    let (cut, _) = cutoff(s, &r, arbiter).await?;
    let clock = s
        .clocks
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .copied();
    let serial = s
        .bound
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned();
    Ok(game_view(&g, clock, serial.as_deref(), cut))
}

async fn get_round(State(s): State<AppState>, Path(id): Path<String>, h: HeaderMap) -> ApiResult {
    let id = parse_id(&id, "round")?;
    let a = arbiter(&s, &h)?;
    json_ok(round_json(&s, id, a).await?)
}

async fn get_game(State(s): State<AppState>, Path(id): Path<String>, h: HeaderMap) -> ApiResult {
    let id = parse_id(&id, "game")?;
    let a = arbiter(&s, &h)?;
    json_ok(game_json(&s, id, a).await?)
}

#[derive(Deserialize)]
struct Since {
    since: Option<i64>,
}

async fn round_changes(
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

async fn list_eboards(State(s): State<AppState>, h: HeaderMap) -> ApiResult {
    let a = arbiter(&s, &h)?;
    let mut list: Vec<_> = s
        .eboards
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .cloned()
        .collect();
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
                        Ok(r) => s.delay_ms(&r).await.unwrap_or(i64::MAX),
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

async fn forget_eboard(
    State(s): State<AppState>,
    Path(serial): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    let mut map = s.eboards.write().unwrap_or_else(|e| e.into_inner());
    match map.get(&serial) {
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("e-board {serial:?} not found"),
        )),
        Some(e) if e.connected => Err(ApiError(
            StatusCode::CONFLICT,
            format!("e-board {serial} is connected"),
        )),
        Some(_) => {
            map.remove(&serial);
            json_ok(json!({"forgotten": serial}))
        }
    }
}

// ---------------------------------------------------------------------------------------
// PGN

/// Keeps only what was known at `cutoff`.
fn cut_game(g: &StoredGame, cutoff: Option<i64>) -> StoredGame {
    let Some(c) = cutoff else {
        return g.clone();
    };
    let mut g = g.clone();
    g.moves.retain(|m| m.accepted_at_ms <= c);
    if g.result_at_ms.is_some_and(|at| at > c) {
        g.result = "*".into();
        g.termination = None;
    }
    g
}

fn pgn_date(d: &str) -> String {
    d.replace('-', ".")
}

/// PGN of games of one round, with the running `[Clock]` tag on live games.
fn round_pgn_games(
    s: &Shared,
    event: &str,
    site: Option<&str>,
    time_control: Option<&str>,
    r: &RoundInfo,
    games: &[StoredGame],
    cut: Option<i64>,
) -> Vec<relay_core::game::Game> {
    let clocks = s.clocks.read().unwrap_or_else(|e| e.into_inner());
    games
        .iter()
        .map(|g| {
            let g = cut_game(g, cut);
            let mut game = to_game(&g, event, site, &r.number);
            if let Some(d) = &r.date {
                game.tags.set("Date", pgn_date(d));
            }
            if let Some(tc) = time_control {
                game.tags.set("TimeControl", tc);
            }
            if cut.is_none()
                && g.result == "*"
                && let Some(c) = clocks.get(&g.id)
                && let Some(running) = c.running
            {
                let ms = if running == "white" {
                    c.white_ms
                } else {
                    c.black_ms
                };
                let t = relay_core::clock_time::ClockTime(ms);
                let side = if running == "white" { "W" } else { "B" };
                game.tags.set("Clock", format!("{side}/{t}"));
            }
            game
        })
        .collect()
}

fn etag_of(text: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("\"{:016x}-{:x}\"", hasher.finish(), text.len())
}

/// A PGN answer with an ETag; `If-None-Match` with the same tag gets 304.
fn pgn_response(text: String, h: &HeaderMap, filename: &str) -> Response {
    let etag = etag_of(&text);
    pgn_answer(&text, etag, h, filename)
}

fn pgn_answer(text: &str, etag: String, h: &HeaderMap, filename: &str) -> Response {
    let matches = h
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if matches {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("inline; filename=\"{filename}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    (StatusCode::OK, headers, text.to_string()).into_response()
}

async fn round_pgn(State(s): State<AppState>, Path(id): Path<String>, h: HeaderMap) -> ApiResult {
    let id = parse_id(&id, "round")?;
    let a = arbiter(&s, &h)?;
    let r = s.store.round(id).await?;
    let (cut, _) = cutoff(&s, &r, a).await?;
    let filename = format!("round-{}.pgn", r.number);
    // Platforms poll this URL every few seconds: the live text is built at most once a
    // second while nothing changes, and an unchanged one costs one small query.
    if cut.is_none()
        && let Some(c) = s
            .pgn_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
        && c.fresh(r.seq)
    {
        return Ok(pgn_answer(&c.text, c.etag, &h, &filename));
    }
    let t = s.store.tournament(r.tournament_id).await?;
    let games = s.store.round_games(id).await?;
    let pgn = round_pgn_games(
        &s,
        &t.name,
        t.site.as_deref(),
        t.time_control.as_deref(),
        &r,
        &games,
        cut,
    );
    let text = Arc::new(write_games(&pgn, &WriteOptions::default()));
    let etag = etag_of(&text);
    if cut.is_none() {
        s.pgn_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                Cached {
                    seq: r.seq,
                    built_ms: now_ms(),
                    text: text.clone(),
                    etag: etag.clone(),
                },
            );
    }
    Ok(pgn_answer(&text, etag, &h, &filename))
}

async fn tournament_pgn(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "tournament")?;
    let a = arbiter(&s, &h)?;
    let t = s.store.tournament(id).await?;
    let mut all = Vec::new();
    for r in &t.rounds {
        let games = s.store.round_games(r.id).await?;
        let (cut, _) = cutoff(&s, r, a).await?;
        all.extend(round_pgn_games(
            &s,
            &t.name,
            t.site.as_deref(),
            t.time_control.as_deref(),
            r,
            &games,
            cut,
        ));
    }
    let text = write_games(&all, &WriteOptions::default());
    Ok(pgn_response(text, &h, &format!("tournament-{id}.pgn")))
}

async fn game_pgn(State(s): State<AppState>, Path(id): Path<String>, h: HeaderMap) -> ApiResult {
    let id = parse_id(&id, "game")?;
    let a = arbiter(&s, &h)?;
    let g = s.store.game(id).await?;
    let r = s.store.round(g.round_id).await?;
    let t = s.store.tournament(r.tournament_id).await?;
    let (cut, _) = cutoff(&s, &r, a).await?;
    let pgn = round_pgn_games(
        &s,
        &t.name,
        t.site.as_deref(),
        t.time_control.as_deref(),
        &r,
        std::slice::from_ref(&g),
        cut,
    );
    let text = write_games(&pgn, &WriteOptions::default());
    Ok(pgn_response(text, &h, &format!("game-{id}.pgn")))
}

// ---------------------------------------------------------------------------------------
// Arbiter: tournaments, rounds, pairings, e-boards

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TournamentBody {
    name: Option<String>,
    site: Option<Option<String>>,
    start_date: Option<Option<String>>,
    end_date: Option<Option<String>>,
    time_control: Option<Option<String>>,
    delay_secs: Option<u32>,
}

/// A date as PGN writes it ("2026.11.23", with "??" for what is unknown) or as ISO 8601
/// ("2026-11-23"); stored in the ISO form.
fn check_date(what: &str, d: Option<Option<String>>) -> Result<Option<Option<String>>, ApiError> {
    let Some(Some(d)) = d else { return Ok(d) };
    let iso = d.trim().replace('.', "-");
    let parts: Vec<&str> = iso.split('-').collect();
    let field = |p: &str, len: usize, max: u32| {
        p.len() == len
            && (p.chars().all(|c| c == '?')
                || p.parse::<u32>().is_ok_and(|v| (1..=max).contains(&v)))
    };
    if parts.len() == 3
        && field(parts[0], 4, 9999)
        && field(parts[1], 2, 12)
        && field(parts[2], 2, 31)
    {
        Ok(Some(Some(iso)))
    } else {
        Err(ApiError::bad(format!(
            "{what} {d:?} is not a date (YYYY-MM-DD or YYYY.MM.DD, ?? for unknown parts)"
        )))
    }
}

fn check_delay(d: Option<u32>) -> Result<(), ApiError> {
    match d {
        Some(d) if d > 3600 => Err(ApiError::bad("delay_secs must be between 0 and 3600")),
        _ => Ok(()),
    }
}

fn check_text(what: &str, v: Option<&str>, max: usize) -> Result<(), ApiError> {
    match v {
        Some(t) if t.chars().count() > max => Err(ApiError::bad(format!(
            "{what} is longer than {max} characters"
        ))),
        Some(t) if t.chars().any(|c| c.is_control()) => {
            Err(ApiError::bad(format!("{what} contains control characters")))
        }
        _ => Ok(()),
    }
}

fn check_time_control(tc: Option<&str>) -> Result<(), ApiError> {
    if let Some(tc) = tc
        && tc.parse::<relay_core::time_control::TimeControl>().is_err()
    {
        return Err(ApiError::bad(format!(
            "time_control {tc:?} is not a PGN TimeControl (e.g. \"5400+30\" or \"40/5400+30:1800+30\")"
        )));
    }
    Ok(())
}

async fn create_tournament(State(s): State<AppState>, h: HeaderMap, body: Bytes) -> ApiResult {
    require_admin(&s, &h)?;
    let b: TournamentBody = body_json(&body)?;
    let name = b
        .name
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::bad("name is required"))?;
    check_text("name", Some(&name), 200)?;
    check_delay(b.delay_secs)?;
    let tc = b.time_control.flatten();
    check_time_control(tc.as_deref())?;
    let start_date = check_date("start_date", b.start_date)?.flatten();
    let end_date = check_date("end_date", b.end_date)?.flatten();
    let id = s
        .store
        .create_tournament(&NewTournament {
            name,
            site: b.site.flatten(),
            start_date,
            end_date,
            time_control: tc,
            delay_secs: b.delay_secs.unwrap_or(0),
        })
        .await?;
    s.store
        .audit(
            "arbiter",
            "create_tournament",
            None,
            &json!({"id": id}).to_string(),
        )
        .await?;
    Ok((StatusCode::CREATED, axum::Json(json!({"id": id}))).into_response())
}

async fn edit_tournament(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "tournament")?;
    let b: TournamentBody = body_json(&body)?;
    check_text("name", b.name.as_deref(), 200)?;
    check_delay(b.delay_secs)?;
    if let Some(tc) = &b.time_control {
        check_time_control(tc.as_deref())?;
    }
    let patch = TournamentPatch {
        name: b.name,
        site: b.site,
        start_date: check_date("start_date", b.start_date)?,
        end_date: check_date("end_date", b.end_date)?,
        time_control: b.time_control,
        delay_secs: b.delay_secs,
    };
    s.store.update_tournament(id, &patch).await?;
    let t = s.store.tournament(id).await?;
    // Rounds without a delay of their own take the tournament's.
    s.round_edited(t.rounds.iter().map(|r| {
        let secs = r.delay_secs.unwrap_or(t.delay_secs);
        (r.id, i64::from(secs) * 1000)
    }));
    s.store
        .audit(
            "arbiter",
            "edit_tournament",
            None,
            &String::from_utf8_lossy(&body),
        )
        .await?;
    json_ok(serde_json::to_value(t).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoundBody {
    number: Option<String>,
    date: Option<Option<String>>,
    delay_secs: Option<Option<u32>>,
    #[serde(rename = "final")]
    is_final: Option<bool>,
}

async fn create_round(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "tournament")?;
    let b: RoundBody = body_json(&body)?;
    let number = b
        .number
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::bad("number is required"))?;
    check_text("number", Some(&number), 20)?;
    check_delay(b.delay_secs.flatten())?;
    let date = check_date("date", b.date)?.flatten();
    let r = s.store.create_round(id, &number, date.as_deref()).await?;
    if b.delay_secs.is_some() || b.is_final.is_some() {
        let patch = RoundPatch {
            delay_secs: b.delay_secs,
            is_final: b.is_final,
            ..Default::default()
        };
        s.store.update_round(r, &patch).await?;
    }
    s.store
        .audit(
            "arbiter",
            "create_round",
            None,
            &json!({"round": r, "tournament": id, "change": String::from_utf8_lossy(&body)})
                .to_string(),
        )
        .await?;
    Ok((StatusCode::CREATED, axum::Json(json!({"id": r}))).into_response())
}

async fn edit_round(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "round")?;
    let b: RoundBody = body_json(&body)?;
    if let Some(n) = &b.number {
        if n.trim().is_empty() {
            return Err(ApiError::bad("number must not be empty"));
        }
        check_text("number", Some(n), 20)?;
    }
    check_delay(b.delay_secs.flatten())?;
    let patch = RoundPatch {
        number: b.number,
        date: check_date("date", b.date)?,
        delay_secs: b.delay_secs,
        is_final: b.is_final,
    };
    let r = s.store.update_round(id, &patch).await?;
    s.round_edited([(r.id, s.delay_ms(&r).await?)]);
    s.store
        .audit(
            "arbiter",
            "edit_round",
            None,
            &json!({"round": id, "change": String::from_utf8_lossy(&body)}).to_string(),
        )
        .await?;
    json_ok(serde_json::to_value(r).unwrap_or(Value::Null))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PlayerBody {
    name: Option<String>,
    title: Option<String>,
    rating: Option<u32>,
    fide_id: Option<u64>,
    federation: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairingBody {
    board_no: u32,
    #[serde(default)]
    white: PlayerBody,
    #[serde(default)]
    black: PlayerBody,
}

fn player(p: PlayerBody, at: &str) -> Result<Player, ApiError> {
    check_text(&format!("{at} name"), p.name.as_deref(), 200)?;
    check_text(&format!("{at} title"), p.title.as_deref(), 10)?;
    check_text(&format!("{at} federation"), p.federation.as_deref(), 10)?;
    if p.rating.is_some_and(|r| r > 4000) {
        return Err(ApiError::bad(format!("{at} rating must be at most 4000")));
    }
    Ok(Player {
        name: p.name,
        title: p.title,
        rating: p.rating,
        fide_id: p.fide_id,
        federation: p.federation,
    })
}

/// Pairings from PGN tags: board from `[Board]`, else the part after the dot of `[Round]`,
/// else the game's place in the file.
fn pairings_from_pgn(text: &str) -> Result<Vec<Pairing>, ApiError> {
    let mut out = Vec::new();
    for (i, g) in relay_core::pgn::read_games(text).into_iter().enumerate() {
        let g = g.map_err(|e| ApiError::bad(format!("PGN not understood: {e}")))?;
        let t = &g.tags;
        let board_no = t
            .get("Board")
            .and_then(|b| b.trim().parse().ok())
            .or_else(|| {
                t.get("Round")
                    .and_then(|r| r.rsplit_once('.'))
                    .and_then(|(_, b)| b.parse().ok())
            })
            .unwrap_or(i as u32 + 1);
        let p = |side: &str| PlayerBody {
            name: t.get(side).filter(|v| *v != "?").map(str::to_string),
            title: t.get(&format!("{side}Title")).map(str::to_string),
            rating: t.get(&format!("{side}Elo")).and_then(|v| v.parse().ok()),
            fide_id: t.get(&format!("{side}FideId")).and_then(|v| v.parse().ok()),
            federation: t.get(&format!("{side}Team")).map(str::to_string),
        };
        out.push(Pairing {
            board_no,
            white: player(p("White"), &format!("board {board_no} White"))?,
            black: player(p("Black"), &format!("board {board_no} Black"))?,
        });
    }
    if out.is_empty() {
        return Err(ApiError::bad("no games in the PGN"));
    }
    Ok(out)
}

async fn put_pairings(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "round")?;
    s.store.round(id).await?;
    let is_pgn = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("pgn") || v.starts_with("text/plain"));
    let pairings = if is_pgn {
        let text =
            std::str::from_utf8(&body).map_err(|_| ApiError::bad("the PGN is not UTF-8 text"))?;
        pairings_from_pgn(text)?
    } else {
        let list: Vec<PairingBody> = body_json(&body)?;
        let mut out = Vec::new();
        for p in list {
            let at = format!("board {}", p.board_no);
            out.push(Pairing {
                board_no: p.board_no,
                white: player(p.white, &format!("{at} White"))?,
                black: player(p.black, &format!("{at} Black"))?,
            });
        }
        out
    };
    let mut seen = std::collections::HashSet::new();
    for p in &pairings {
        if p.board_no == 0 || p.board_no > 10_000 {
            return Err(ApiError::bad(format!(
                "board number {} is out of range (1..=10000)",
                p.board_no
            )));
        }
        if !seen.insert(p.board_no) {
            return Err(ApiError::bad(format!(
                "board {} is paired twice",
                p.board_no
            )));
        }
    }
    let done = s.store.set_pairings(id, &pairings).await?;
    let ids: Vec<i64> = done.iter().map(|(g, _)| *g).collect();
    // Committed: spectators get the new names.
    for (game, seq) in &done {
        if let Ok(v) = game_json(&s, *game, true).await {
            s.publish(super::live::Event::new(
                id,
                Some(*game),
                *seq,
                &super::wire::ServerMessage::Game { seq: *seq, game: v },
            ));
        }
    }
    s.store
        .audit(
            "arbiter",
            "pairings",
            None,
            &json!({"round": id, "boards": pairings.len()}).to_string(),
        )
        .await?;
    json_ok(json!({"round_id": id, "games": ids}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssignBody {
    serial: String,
}

async fn assign_eboard(
    State(s): State<AppState>,
    Path((id, board_no)): Path<(String, String)>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "round")?;
    let board_no: u32 = board_no
        .parse()
        .ok()
        .filter(|b| (1..=10_000).contains(b))
        .ok_or_else(|| ApiError::bad("board number must be 1..=10000"))?;
    let b: AssignBody = body_json(&body)?;
    if b.serial.is_empty()
        || b.serial.len() > 32
        || !b.serial.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(ApiError::bad("serial must be 1 to 32 letters or digits"));
    }
    s.store.round(id).await?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    s.jobs
        .send(super::writer::Job::Assign {
            round_id: id,
            board_no,
            serial: b.serial.clone(),
            reply: tx,
        })
        .map_err(|_| ApiError(StatusCode::SERVICE_UNAVAILABLE, "shutting down".into()))?;
    let game = wait_reply(rx).await?;
    json_ok(json!({"round_id": id, "board_no": board_no, "serial": b.serial, "game_id": game}))
}

async fn wait_reply(
    rx: tokio::sync::oneshot::Receiver<Result<i64, String>>,
) -> Result<i64, ApiError> {
    match tokio::time::timeout(Duration::from_secs(15), rx).await {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(ApiError(StatusCode::CONFLICT, e)),
        Ok(Err(_)) => Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, "shutting down".into())),
        Err(_) => Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database is not answering; the change is queued and will be stored when it is back".into(),
        )),
    }
}

// ---------------------------------------------------------------------------------------
// Arbiter: games

async fn send_edit(
    s: &Shared,
    game_id: i64,
    action: EditAction,
    moves: Vec<StoredMove>,
) -> ApiResult {
    let (tx, rx) = tokio::sync::oneshot::channel();
    s.edits
        .send(HallCommand::Edit(GameEdit {
            game_id,
            action,
            moves,
            reply: tx,
        }))
        .map_err(|_| ApiError(StatusCode::SERVICE_UNAVAILABLE, "shutting down".into()))?;
    let seq = wait_reply(rx).await?;
    json_ok(json!({"game_id": game_id, "seq": seq}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultBody {
    result: String,
    termination: Option<String>,
}

async fn set_result(
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
        "live"
    } else {
        "confirmed"
    };
    send_edit(
        &s,
        id,
        EditAction::Result {
            result: result.to_string(),
            termination: b.termination,
            status: status.into(),
        },
        g.moves,
    )
    .await
}

async fn confirm_result(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    let g = s.store.game(id).await?;
    let serial = s
        .bound
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned();
    let proposal = serial.and_then(|sn| {
        s.eboards
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&sn)
            .and_then(|e| e.proposal.clone())
    });
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
        (None, r) => (r.to_string(), g.termination.clone()),
    };
    send_edit(
        &s,
        id,
        EditAction::Result {
            result,
            termination,
            status: "confirmed".into(),
        },
        g.moves,
    )
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlyBody {
    ply: u32,
}

async fn truncate(
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
    send_edit(&s, id, EditAction::Truncate { from_ply: b.ply }, keep).await
}

fn start_position(g: &StoredGame) -> Result<Chess, ApiError> {
    let mode = if g.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    g.start_fen
        .as_deref()
        .unwrap_or(STANDARD_FEN)
        .parse::<Fen>()
        .ok()
        .and_then(|f| f.into_position(mode).ok())
        .ok_or_else(|| {
            ApiError(
                StatusCode::CONFLICT,
                "the game's start position is damaged".into(),
            )
        })
}

fn stored_move(
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
struct MoveBody {
    ply: u32,
    san: String,
}

async fn replace_move(
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
    let mode = if g.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let mut pos = start_position(&g)?;
    let mut out = Vec::new();
    for m in &g.moves[..b.ply as usize - 1] {
        let mv = m
            .uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| {
                ApiError(
                    StatusCode::CONFLICT,
                    format!("stored move {} is damaged", m.ply),
                )
            })?;
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
    for m in g.moves.iter().skip(b.ply as usize) {
        let Some(mv) = m
            .uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            break;
        };
        out.push(stored_move(&mut pos, mv, m.ply, mode, Some(m)));
    }
    let what = format!("ply {} replaced by {}", b.ply, b.san);
    send_edit(&s, id, EditAction::Replace { what }, out).await
}

async fn replace_game(
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
    send_edit(&s, id, EditAction::Replace { what }, out).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    before: Option<i64>,
    limit: Option<u32>,
}

async fn audit_all(
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

async fn audit(State(s): State<AppState>, Path(id): Path<String>, h: HeaderMap) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "game")?;
    s.store.game(id).await?;
    json_ok(serde_json::to_value(s.store.audit_trail(id).await?).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnBody {
    turn: String,
}

async fn continue_from_board(
    State(s): State<AppState>,
    Path(serial): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    if !s
        .eboards
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&serial)
    {
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
    s.edits
        .send(HallCommand::ContinueFromBoard {
            serial: serial.clone(),
            white_to_move,
            reply: tx,
        })
        .map_err(|_| ApiError(StatusCode::SERVICE_UNAVAILABLE, "shutting down".into()))?;
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
