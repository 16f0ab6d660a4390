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
use prometheus_client::registry::{Metric, Registry};
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

/// `metric`, registered in `registry` under `name` (after the `relay_` prefix) with its help.
fn added<M: Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: impl Into<String>,
    metric: M,
) -> M {
    registry.register(name, help, metric.clone());
    metric
}

/// Buckets from 0.1 ms to about 3.3 s, doubling: commits take a millisecond or two, a move
/// reaches a crowd in tens or hundreds of milliseconds, an outage shows in the top ones.
fn time_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_1, 2.0, 16))
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("relay");
        let r = &mut registry;
        let messages = added(
            r,
            "board_messages",
            "Board messages decoded.",
            Counter::default(),
        );
        let garbage = added(
            r,
            "board_garbage",
            "Runs of garbage bytes skipped on the lines.",
            Counter::default(),
        );
        let moves_committed = added(
            r,
            "moves_committed",
            "Moves committed to the store.",
            Counter::default(),
        );
        let changes_committed = added(
            r,
            "changes_committed",
            "Changes committed to the store.",
            Counter::default(),
        );
        let raw_logged = added(
            r,
            "raw_messages_logged",
            "Raw board messages in the black box.",
            Counter::default(),
        );
        let store_errors = added(
            r,
            "store_errors",
            "Failed store writes (retried).",
            Counter::default(),
        );
        let http_requests = added(
            r,
            "http_requests",
            "HTTP requests served.",
            Counter::default(),
        );
        let ws_snapshots = added(
            r,
            "ws_snapshots",
            "Snapshots sent to WebSocket clients.",
            Counter::default(),
        );
        let silent_closed = added(
            r,
            "ws_silent_closed",
            "WebSocket clients closed because they stopped reading (no answer to pings).",
            Counter::default(),
        );
        let changes_followed = added(
            r,
            "changes_followed",
            "Changes read from the change log: committed by another relay on the same database, or filling a hole.",
            Counter::default(),
        );
        let ws_clients = added(
            r,
            "ws_clients",
            "Open WebSocket connections.",
            Gauge::default(),
        );
        let pending_writes = added(
            r,
            "pending_writes",
            "Jobs waiting for the store.",
            Gauge::default(),
        );
        let store_up = added(
            r,
            "store_up",
            "1 when the store takes writes.",
            Gauge::default(),
        );
        let eboards = added(r, "eboards", "E-boards seen.", Gauge::default());
        let eboards_connected = added(
            r,
            "eboards_connected",
            "E-boards connected.",
            Gauge::default(),
        );
        let eboards_out_of_sync = added(
            r,
            "eboards_out_of_sync",
            "E-boards whose position the game cannot explain.",
            Gauge::default(),
        );
        let group_commit = added(
            r,
            "group_commit_seconds",
            "The writer's group commits for the boards (each one fsync), from the first statement to the answer.",
            time_buckets(),
        );
        let move_publish = added(
            r,
            "move_publish_seconds",
            "Moves from their board's judgement (still for the settle time) to their publication, the commit between.",
            time_buckets(),
        );
        let move_delivery = added(
            r,
            "move_delivery_seconds",
            format!(
                "Moves from their publication to the write on a spectator's socket (one client in {DELIVERY_SAMPLE}): the fan-out."
            ),
            time_buckets(),
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
