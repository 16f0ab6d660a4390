//! How the service is doing: the store's health as the writer last met it (for `/health` and
//! the console), and the counters `/metrics` reports. Every part that does work counts it
//! here; nothing here depends on another part of the service.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};

/// Store and board health for `/health`.
#[derive(Debug, Default)]
pub struct Health {
    pub store_ok: AtomicBool,
    /// When the store stopped answering (0 = it answers).
    pub store_down_since_ms: AtomicI64,
    pub last_store_error: Mutex<Option<String>>,
    /// Jobs (moves, readings) waiting for the store.
    pub pending_writes: AtomicU64,
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    pub messages: AtomicU64,
    pub garbage: AtomicU64,
    pub moves_committed: AtomicU64,
    pub changes_committed: AtomicU64,
    /// The writer's group commits, and the time spent in them (microseconds).
    pub group_commits: AtomicU64,
    pub group_commit_us: AtomicU64,
    pub store_errors: AtomicU64,
    pub raw_logged: AtomicU64,
    pub http_requests: AtomicU64,
    pub ws_clients: AtomicI64,
    pub ws_snapshots: AtomicU64,
    /// WebSocket clients closed because they answered nothing (stopped reading).
    pub silent_closed: AtomicU64,
    /// Changes read from the change log (committed by another relay, or filling a hole).
    pub changes_followed: AtomicU64,
}
