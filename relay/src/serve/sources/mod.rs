//! PGN sources: a round takes the games of boards without e-boards from URLs it polls (another
//! relay's round PGN, DGT LiveChess Cloud, a Lichess round, a file a venue's program writes).
//! Each source is polled with conditional requests (ETag, Last-Modified), backing off on
//! errors; each game it has is matched to a board of the round (`[Board]`, `[Round "r.b"]`, or
//! the players of a pairing) and its moves, clocks and result are handed to the hall as
//! edits, which the writer stores and announces as a board's are. A game an e-board plays
//! is never overwritten: where the source disagrees with it, that is a clash shown to the
//! arbiter (`GET /api/rounds/{id}/sources`).
//!
//! - `registry.rs`: the sources of this relay and what each poll found (what the routes read),
//!   and what polling needs of the service.
//! - `mod.rs`: starting them, and each one's polling loop.
//! - `fetch.rs`: one conditional GET.
//! - `apply.rs`: a fetched PGN matched to the round's boards and its changes handed over.

mod apply;
mod fetch;
mod registry;

pub use apply::BoardRange;
pub use registry::{Polling, SourceState, Sources};

use relay_store::{PgnSource, now_ms};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a source is asked while it answers.
pub const POLL: Duration = Duration::from_secs(2);
/// The longest wait between tries while it fails.
const MOST_BACKOFF: Duration = Duration::from_secs(60);

/// Starts polling `source`.
pub fn start(p: Polling, source: PgnSource) {
    let stop = Arc::new(AtomicBool::new(false));
    p.sources.states.lock().insert(
        source.id,
        SourceState {
            id: source.id,
            round_id: source.round_id.get(),
            url: source.url.clone(),
            boards: source.boards.clone(),
            last_status: "not asked yet".into(),
            ..SourceState::default()
        },
    );
    p.sources.stops.lock().insert(source.id, stop.clone());
    tokio::spawn(poll(p, source, stop));
}

/// Starts polling every source of the rounds not final yet.
pub async fn start_all(p: Polling) {
    match p.store.sources(None).await {
        Ok(list) => {
            for s in list {
                tracing::info!(id = s.id, round = %s.round_id, url = %s.url, "polling a PGN source");
                start(p.clone(), s);
            }
        }
        Err(e) => tracing::warn!(error = %e, "the PGN sources could not be read; none is polled"),
    }
}

/// Polls `source` until it is stopped or the service ends.
async fn poll(p: Polling, source: PgnSource, stop: Arc<AtomicBool>) {
    let mut closing = p.closing.clone();
    let mut cache = fetch::Validators::default();
    let mut fed = apply::Fed::default();
    let mut wait = POLL;
    let id = source.id;
    while !stop.load(Ordering::Relaxed) && !*closing.borrow() {
        let url = source.url.clone();
        let validators = cache.clone();
        let fetched = tokio::task::spawn_blocking(move || fetch::fetch(&url, &validators)).await;
        let at = now_ms();
        match fetched {
            Ok(Ok(fetch::Fetched::Unchanged)) => {
                wait = POLL;
                p.sources.update(id, |s| {
                    s.last_poll_ms = Some(at);
                    s.last_status = "304".into();
                    s.polls += 1;
                });
            }
            Ok(Ok(fetch::Fetched::Body { text, validators })) => {
                wait = POLL;
                let report = apply::apply(&p, &source, &text, &mut fed).await;
                // A PGN whose changes could not all be handed over is read again in full.
                cache = if report.complete {
                    validators
                } else {
                    fetch::Validators::default()
                };
                p.sources.update(id, |s| {
                    s.last_poll_ms = Some(at);
                    s.last_status = "200".into();
                    s.polls += 1;
                    s.games = report.games;
                    s.matched = report.matched;
                    s.moves += report.moves;
                    s.clashes = report.clashes;
                    s.unmatched = report.unmatched;
                    if let Some(e) = report.error {
                        s.errors += 1;
                        s.last_error = Some(e);
                    }
                });
            }
            Ok(Err(why)) => {
                wait = (wait * 2).min(MOST_BACKOFF);
                tracing::warn!(id, url = %source.url, error = %why, retry_in_s = wait.as_secs(), "PGN source not read");
                p.sources.update(id, |s| {
                    s.last_poll_ms = Some(at);
                    s.last_status = format!("error: {why}");
                    s.polls += 1;
                    s.errors += 1;
                    s.last_error = Some(why);
                });
            }
            Err(_) => break,
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = closing.changed() => break,
        }
    }
}
