//! HTTP: the JSON API, PGN downloads, `/health`, `/metrics`, the OpenAPI document and the
//! pages. Every route is declared once in [`routes`](routes::routes), which builds both the
//! router and the OpenAPI document, so the document cannot miss a route.
//!
//! Public reads apply the broadcast delay; a request with the admin token sees live data.
//! Nothing changes unless a request succeeds: input is checked before anything is written.
//!
//! The modules stand in layers, each using only those before it (checked by
//! `relay/tests/house_rules.rs`):
//!
//! 1. `error` (every refusal and its status), `state` (the handles handlers may take);
//!    `extract` (ids in the path, who asks and what they may see, bodies, queries); `check`
//!    (fields, moves), `reply` (waiting for the writer or the hall).
//! 2. Handlers by area: `tournaments`, `rounds` (which answers a new round as a new
//!    tournament is answered), `pairings`, `trf` (tournaments from and back to a pairing
//!    program's file, their players and teams), `games`, `audit`, `eboards`, `pgn` (files),
//!    `push`, `ops` (health, metrics, the documents), `ws` (WebSockets).
//! 3. `routes` (the table), `openapi` (the document written from it); this file puts the
//!    router together, and hands the document to the route that serves it.

mod audit;
mod check;
mod eboards;
mod embed;
mod error;
mod evals;
mod extract;
mod games;
mod incidents;
mod openapi;
mod operator_token;
mod ops;
mod pairings;
mod pgn;
mod player;
mod push;
mod record;
mod reply;
mod rounds;
mod routes;
mod sources;
mod standings;
mod state;
mod tournaments;
mod trf;
mod typed;
pub mod ws;

pub use rounds::round_json;

use crate::serve::service::Shared;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::Next;
use axum::routing::MethodRouter;
use extract::MAX_BODY;
use state::{AppState, OpenApiDocument};
use std::path::PathBuf;
use std::sync::Arc;

/// The service's router. `web_dir`: where the pages are; `photos_dir`: players' photos.
pub fn app(shared: Arc<Shared>, web_dir: Option<PathBuf>, photos_dir: Option<PathBuf>) -> Router {
    let table = routes::routes();
    // Written once here: the route that serves it is in the table it is written from.
    let doc = serde_json::to_vec(&openapi::document(&table)).unwrap_or_default();
    let state = AppState::new(shared.clone(), OpenApiDocument(Bytes::from(doc)));
    let mut by_path: Vec<(&'static str, MethodRouter<AppState>)> = Vec::new();
    for r in table {
        match by_path.iter_mut().find(|(p, _)| *p == r.path) {
            Some((_, m)) => *m = std::mem::take(m).merge(r.handler),
            None => by_path.push((r.path, r.handler)),
        }
    }
    let mut router = Router::new();
    for (p, m) in by_path {
        router = router.route(p, m);
    }
    // The embeds are pages with a header of their own (which sites may frame them).
    for (path, which) in [
        ("/embed/game.html", embed::Embed::Game),
        ("/embed/round.html", embed::Embed::Round),
    ] {
        let (store, dir) = (shared.store.clone(), web_dir.clone());
        router = router.route(
            path,
            axum::routing::get(move |uri: axum::http::Uri| embed::page(store, dir, which, uri)),
        );
    }
    if let Some(dir) = photos_dir {
        router = router.route(
            "/photos/{name}",
            axum::routing::get(
                move |axum::extract::Path(name): axum::extract::Path<String>| {
                    crate::serve::pages::photo(dir.clone(), name)
                },
            ),
        );
    }
    let pages = crate::serve::pages::service(web_dir);
    let counted = shared;
    router
        .fallback_service(pages)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(move |req: Request, next: Next| {
            counted.metrics.http_requests.inc();
            next.run(req)
        }))
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
        .with_state(state)
}
