//! Operations: health, Prometheus counters, and the documents that describe the interface
//! (the OpenAPI document, the WebSocket messages' JSON Schema).

use super::state::OpenApiDocument;
use crate::serve::instance::instance_name;
use crate::serve::service::Shared;
use crate::serve::targets::TargetStatus;
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
    let pushed_from = match s.push_token() {
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
    };
    let code = if ok && writer_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(answer))
}

pub async fn metrics(State(s): State<Arc<Shared>>) -> Response {
    let m = &s.metrics;
    let eboards = s.boards.eboards();
    let c = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let count = |f: fn(&EboardView) -> bool| eboards.iter().filter(|e| f(e)).count() as i64;
    // (name, type, help, value)
    let rows: [(&str, &str, &str, i64); 18] = [
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
            "group_commits_total",
            "counter",
            "Transactions the writer committed for the boards (each one fsync).",
            c(&m.group_commits) as i64,
        ),
        (
            "group_commit_microseconds_total",
            "counter",
            "Time the writer spent in those commits, from the first statement to the answer.",
            c(&m.group_commit_us) as i64,
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
            "ws_silent_closed_total",
            "counter",
            "WebSocket clients closed because they stopped reading (no answer to pings).",
            c(&m.silent_closed) as i64,
        ),
        (
            "changes_followed_total",
            "counter",
            "Changes read from the change log: committed by another relay on the same database, or filling a hole.",
            c(&m.changes_followed) as i64,
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

pub async fn ws_messages_schema() -> Json<Value> {
    Json(crate::serve::wire::schema())
}

/// The document as written when the router was built (`openapi::document`).
pub async fn openapi(State(doc): State<OpenApiDocument>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], doc.0).into_response()
}
