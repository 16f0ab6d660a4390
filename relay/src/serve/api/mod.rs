//! HTTP: the JSON API, PGN downloads, `/health`, `/metrics`, the OpenAPI document and the
//! pages. Every route is declared once in [`routes`], which builds both the router and the
//! OpenAPI document, so the document cannot miss a route.
//!
//! Public reads apply the broadcast delay; a request with the admin token sees live data.
//! Nothing changes unless a request succeeds: input is checked before anything is written.

use super::events::Event;
use super::feeds::SnapshotError;
use super::jobs::{EditAction, GameEdit, HallCommand, Job};
use super::lookup::Cached;
use super::service::Shared;
use super::views::{EboardView, GameStatus, cut_game, stored_result};
use super::wire::ServerMessage;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use relay_core::pgn::{WriteOptions, read_game, write_games};
use relay_core::recorder::ColorName;
use relay_store::{
    NewTournament, Pairing, Player, RoundInfo, RoundPatch, StoreError, StoredGame, StoredMove,
    TournamentPatch, now_ms,
};
use serde::Deserialize;
use serde_json::{Value, json};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingMode, Chess, EnPassantMode};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use subtle::ConstantTimeEq;

mod access;
mod arbiter;
mod games;
mod ops;
mod pgn;
mod push;
mod reading;
pub mod ws;

pub use access::*;
use arbiter::*;
use games::*;
pub use ops::*;
use pgn::*;
use push::*;
pub use reading::*;

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

impl From<SnapshotError> for ApiError {
    fn from(e: SnapshotError) -> ApiError {
        match e {
            SnapshotError::Store(e) => e.into(),
            SnapshotError::NotInRound { .. } => ApiError(StatusCode::NOT_FOUND, e.to_string()),
            SnapshotError::NotReady => ApiError::bad(e.to_string()),
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
            "Counters, gauges and histograms (group commit, judgement to publication, publication to a spectator) in the Prometheus (OpenMetrics) text format",
            false,
            "application/openmetrics-text",
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
            get,
            "/api/tournaments/{id}/export",
            "A tournament's games as a file: ?format=pgn (default), archive (PGN in the standard's archival order), epd (a line per position; &final=1 for final positions only), onebyte (the one-byte move encoding), pgc (PGN standard section 20), cbf (ChessBase CBF) or cbi (the index of that CBF); 422 when a game cannot be held by the format",
            false,
            "application/x-chess-pgn",
            export_tournament
        ),
        route!(
            get,
            "/api/rounds/{id}/export",
            "A round's games as a file: ?format=pgn|archive|epd|onebyte|pgc|cbf|cbi[&final=1]",
            false,
            "application/x-chess-pgn",
            export_round
        ),
        route!(
            get,
            "/api/games/{id}/export",
            "A game as a file: ?format=pgn|archive|epd|onebyte|pgc|cbf|cbi[&final=1]",
            false,
            "application/x-chess-pgn",
            export_game
        ),
        route!(
            post,
            "/api/push",
            "A venue relay's batch (a relay started with --push-to; the Bearer token is this relay's --accept-push-token, not the admin token): tournaments, rounds and whole games, applied once",
            true,
            "application/json",
            accept_push
        ),
        route!(
            post,
            "/api/games/{id}/take-venue",
            "A game an arbiter here changed after the venue's last push: take the venue's version held back, and follow the venue again",
            true,
            "application/json",
            take_venue
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
                    .http_requests.inc();
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
/// The most plies an uploaded game may have. The longest tournament game on record has 538;
/// a bound keeps one upload from costing the store and every spectator megabytes.
pub const MAX_PLIES: usize = 2_000;
