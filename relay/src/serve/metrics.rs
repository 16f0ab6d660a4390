//! What `/metrics` reports, in the Prometheus (OpenMetrics) text format written by
//! `prometheus-client`: counters each part bumps as it works, gauges read when scraped, and
//! histograms of the times operators watch during a broadcast: a group commit, a move from
//! its board's judgement to its publication, and a move from its publication to a
//! spectator's socket.

use super::health::Health;
use super::views::EboardView;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::Ordering;

/// One client in this many has its deliveries timed ([`Metrics::move_delivery`]): with
/// thousands of spectators, a sample shows the spread as well and costs a fraction.
pub const DELIVERY_SAMPLE: u64 = 16;

/// The service's counters, gauges and histograms, and the registry that writes them out.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub messages: Counter,
    pub garbage: Counter,
    pub moves_committed: Counter,
    pub changes_committed: Counter,
    /// Each group commit of the writer, from its first statement to the store's answer.
    pub group_commit: Histogram,
    pub store_errors: Counter,
    pub raw_logged: Counter,
    pub http_requests: Counter,
    pub ws_clients: Gauge,
    pub ws_snapshots: Counter,
    /// WebSocket clients closed because they answered nothing (stopped reading).
    pub silent_closed: Counter,
    /// Changes read from the change log (committed by another relay, or filling a hole).
    pub changes_followed: Counter,
    /// A move from the moment the hall judged its board (the board still for the settle
    /// time) to its publication, the commit in between.
    pub move_publish: Histogram,
    /// A move from its publication to its frame's write on a spectator's socket (one client
    /// in [`DELIVERY_SAMPLE`]): the fan-out, with a crowd's wait for the feed's sweep.
    pub move_delivery: Histogram,
    // Read when scraped.
    pending_writes: Gauge,
    store_up: Gauge,
    eboards: Gauge,
    eboards_connected: Gauge,
    eboards_out_of_sync: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// Buckets from 0.1 ms to about 3.3 s, doubling: commits take a millisecond or two, a move
/// reaches a crowd in tens or hundreds of milliseconds, an outage shows in the top ones.
fn time_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_1, 2.0, 16))
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("relay");
        let mut counter = |name: &str, help: &str| {
            let c = Counter::default();
            registry.register(name, help, c.clone());
            c
        };
        let messages = counter("board_messages", "Board messages decoded.");
        let garbage = counter(
            "board_garbage",
            "Runs of garbage bytes skipped on the lines.",
        );
        let moves_committed = counter("moves_committed", "Moves committed to the store.");
        let changes_committed = counter("changes_committed", "Changes committed to the store.");
        let raw_logged = counter(
            "raw_messages_logged",
            "Raw board messages in the black box.",
        );
        let store_errors = counter("store_errors", "Failed store writes (retried).");
        let http_requests = counter("http_requests", "HTTP requests served.");
        let ws_snapshots = counter("ws_snapshots", "Snapshots sent to WebSocket clients.");
        let silent_closed = counter(
            "ws_silent_closed",
            "WebSocket clients closed because they stopped reading (no answer to pings).",
        );
        let changes_followed = counter(
            "changes_followed",
            "Changes read from the change log: committed by another relay on the same database, or filling a hole.",
        );
        let mut gauge = |name: &str, help: &str| {
            let g = Gauge::default();
            registry.register(name, help, g.clone());
            g
        };
        let ws_clients = gauge("ws_clients", "Open WebSocket connections.");
        let pending_writes = gauge("pending_writes", "Jobs waiting for the store.");
        let store_up = gauge("store_up", "1 when the store takes writes.");
        let eboards = gauge("eboards", "E-boards seen.");
        let eboards_connected = gauge("eboards_connected", "E-boards connected.");
        let eboards_out_of_sync = gauge(
            "eboards_out_of_sync",
            "E-boards whose position the game cannot explain.",
        );
        let mut histogram = |name: &str, help: &str| {
            let h = time_buckets();
            registry.register(name, help, h.clone());
            h
        };
        let group_commit = histogram(
            "group_commit_seconds",
            "The writer's group commits for the boards (each one fsync), from the first statement to the answer.",
        );
        let move_publish = histogram(
            "move_publish_seconds",
            "Moves from their board's judgement (still for the settle time) to their publication, the commit between.",
        );
        let move_delivery = histogram(
            "move_delivery_seconds",
            "Moves from their publication to the write on a spectator's socket (one client in 16): the fan-out.",
        );
        Metrics {
            registry,
            messages,
            garbage,
            moves_committed,
            changes_committed,
            group_commit,
            store_errors,
            raw_logged,
            http_requests,
            ws_clients,
            ws_snapshots,
            silent_closed,
            changes_followed,
            move_publish,
            move_delivery,
            pending_writes,
            store_up,
            eboards,
            eboards_connected,
            eboards_out_of_sync,
        }
    }

    /// Everything, as `/metrics` answers it, with the gauges read now from the store's health
    /// and the e-boards.
    pub fn render(&self, health: &Health, eboards: &[EboardView]) -> String {
        let count = |f: fn(&EboardView) -> bool| eboards.iter().filter(|e| f(e)).count() as i64;
        self.pending_writes
            .set(health.pending_writes.load(Ordering::Relaxed) as i64);
        self.store_up
            .set(i64::from(health.store_ok.load(Ordering::Relaxed)));
        self.eboards.set(eboards.len() as i64);
        self.eboards_connected.set(count(|e| e.connected));
        self.eboards_out_of_sync.set(count(|e| !e.in_sync));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// Seconds from `from_ms` to `to_ms` (ms since the epoch), never negative.
pub fn seconds_between(from_ms: i64, to_ms: i64) -> f64 {
    (to_ms - from_ms).max(0) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names scrapers and the tests read stay as they were before the library wrote them.
    #[test]
    fn the_text_keeps_the_names_and_has_the_histograms() {
        let m = Metrics::new();
        m.moves_committed.inc_by(3);
        m.group_commit.observe(0.002);
        let text = m.render(&Health::default(), &[]);
        for line in [
            "relay_moves_committed_total 3",
            "relay_board_messages_total 0",
            "relay_board_garbage_total 0",
            "relay_store_errors_total 0",
            "relay_changes_followed_total 0",
            "relay_ws_clients 0",
            "relay_store_up 0",
            "relay_group_commit_seconds_count 1",
            "relay_move_publish_seconds_count 0",
            "relay_move_delivery_seconds_count 0",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} not in\n{text}");
        }
        assert!(
            text.contains("relay_group_commit_seconds_sum 0.002"),
            "{text}"
        );
    }
}
