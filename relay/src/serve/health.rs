//! How the store is doing, as the writer last met it: what `/health` and the console show
//! (the counters `/metrics` reports are in `metrics`).

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
