//! Operations: health, Prometheus counters, and the documents that describe the interface
//! (the OpenAPI document, the WebSocket messages' JSON Schema).

use super::state::OpenApiDocument;
use crate::serve::instance::instance_name;
use crate::serve::push::status::TargetStatus;
use crate::serve::service::Shared;
use crate::serve::views::EboardView;
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_store::MirrorSource;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// How the service is doing: `GET /health` (503 while the database is unavailable).
#[derive(Debug, Serialize, JsonSchema)]
pub struct HealthAnswer {
    /// `ok`, or `degraded` while the store is not reachable or takes no writes.
    status: &'static str,
    store: StoreHealth,
    boards: BoardsHealth,
    uptime_s: i64,
    /// This relay's name: its machine and process id.
    instance: &'static str,
    /// The ports this relay wants, and whether it reads each (another relay on the same
    /// PostgreSQL may).
    ports: Vec<PortHealth>,
    /// Each push target's state.
    upstream: Vec<TargetStatus>,
    /// The venues pushing here, with the games whose venue version is held back (`null` on a
    /// relay that takes no pushes).
    pushed_from: Option<Vec<MirrorSource>>,
    /// The evaluation of positions (`null` when it is off).
    evaluation: Option<EvalHealth>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct EvalHealth {
    /// Public positions with no evaluation yet and none out with a worker.
    waiting: usize,
    /// Positions out with workers now.
    out: usize,
    /// Positions whose evaluation is known (this relay's run).
    known: usize,
    /// Verdicts workers handed back since the start.
    evaluated: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct StoreHealth {
    /// `sqlite` or `postgres`.
    backend: &'static str,
    reachable: bool,
    writes_ok: bool,
    down_since_ms: Option<i64>,
    last_error: Option<String>,
    /// Jobs waiting for the store.
    pending_writes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct BoardsHealth {
    eboards: usize,
    connected: usize,
    /// Serials of e-boards lost.
    lost: Vec<String>,
    /// Serials of e-boards whose position the game cannot explain.
    out_of_sync: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct PortHealth {
    port: String,
    read_here: bool,
}

pub async fn health(State(s): State<Arc<Shared>>) -> (StatusCode, Json<HealthAnswer>) {
    let ok = s.store.ping().await;
    let h = &s.health;
    let eboards = s.boards.eboards();
    let serials = |f: fn(&EboardView) -> bool| {
        eboards
            .iter()
            .filter(|e| f(e))
            .map(|e| e.serial.clone())
            .collect()
    };
    let writer_ok = h.store_ok.load(Ordering::Relaxed);
    let down_since = h.store_down_since_ms.load(Ordering::Relaxed);
    // Venues pushing here, with the games whose venue version is held back.
    let pushed_from = match s.tokens().push() {
        Some(_) => s.store.mirror_sources().await.ok(),
        None => None,
    };
    let ports = s.claims.get().map(|c| c.ports()).unwrap_or_default();
    let answer = HealthAnswer {
        status: if ok && writer_ok { "ok" } else { "degraded" },
        store: StoreHealth {
            backend: s.store.backend(),
            reachable: ok,
            writes_ok: writer_ok,
            down_since_ms: (down_since != 0).then_some(down_since),
            last_error: h.last_store_error.lock().clone(),
            pending_writes: h.pending_writes.load(Ordering::Relaxed),
        },
        boards: BoardsHealth {
            eboards: eboards.len(),
            connected: eboards.iter().filter(|e| e.connected).count(),
            lost: serials(|e| !e.connected),
            out_of_sync: serials(|e| !e.in_sync),
        },
        uptime_s: s.uptime_s(),
        instance: instance_name(),
        ports: ports
            .into_iter()
            .map(|(port, read_here)| PortHealth { port, read_here })
            .collect(),
        upstream: s.targets.all(),
        pushed_from,
        evaluation: s.analysis.get().map(|a| {
            let c = a.counts();
            EvalHealth {
                waiting: c.waiting,
                out: c.out,
                known: c.known,
                evaluated: a.evaluated.load(Ordering::Relaxed),
            }
        }),
    };
    let code = if ok && writer_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(answer))
}

pub async fn metrics(State(s): State<Arc<Shared>>) -> Response {
    let text = s.metrics.render(&s.health, &s.boards.eboards());
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

pub async fn ws_messages_schema() -> Json<Value> {
    Json(crate::serve::wire::schema())
}

/// The document as written when the router was built (`openapi::document`).
pub async fn openapi(State(doc): State<OpenApiDocument>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], doc.0).into_response()
}
