//! A delay line: the events of a round's live feed held for a delayed feed's delay, then
//! passed on to it.

use super::feed::{Feed, Receiver};
use crate::serve::events::{Event, Pending, change_message};
use crate::serve::lookup::Lookup;
use crate::serve::wire::ServerMessage;
use relay_core::recorder::ColorName;
use relay_store::now_ms;
use relay_store::{GameId, Seq};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// A delay line passes on one running-clock message per game this often (a page counts the
/// seconds between them itself).
const HELD_CLOCK_EVERY_MS: i64 = 10_000;

/// What a delay line holds: a message and when it is due.
struct Held {
    due_ms: i64,
    seq: Seq,
    game: Option<GameId>,
    change: bool,
    /// Only for the clients that follow e-boards (e-board news, the arbiter's record).
    arbiters: bool,
    message: Pending,
    /// Lever presses the event carried.
    presses: Vec<ServerMessage>,
}

/// Holds the live feed's events for the feed's delay and passes them on, re-stamping running
/// clocks and keeping one clock message per game every 10 s. It starts with the changes of
/// the last `delay` from the store, so the delayed view has no gap.
pub(super) async fn run(lookup: Lookup, feed: Arc<Feed>, mut rx: Receiver) {
    let delay = feed.delay_ms;
    let mut held: VecDeque<Held> = VecDeque::new();
    let mut clock_kept: HashMap<GameId, (i64, Option<ColorName>)> = HashMap::new();
    let mut last_seq = match lookup.store.seq_at(feed.round, now_ms() - delay).await {
        Ok(seq) => seq,
        Err(e) => {
            tracing::error!(round = %feed.round, error = %e, "delay line cannot start");
            Seq::default()
        }
    };
    last_seq = backfill(&lookup, &feed, last_seq, &mut held).await;
    loop {
        let next = held
            .front()
            .map(|h| Duration::from_millis(u64::try_from(h.due_ms - now_ms()).unwrap_or(0)));
        tokio::select! {
            ev = rx.recv() => match ev {
                Ok(e) => {
                    if e.change {
                        if e.seq <= last_seq {
                            continue;
                        }
                        last_seq = e.seq;
                    }
                    // A game's lever presses pass at most one a side every 10 s (the running
                    // clocks every 10 s come in bundles that all pass).
                    if let (Some(key), Some(clock)) = (e.game_id, e.clock()) {
                        let running = clock.running;
                        let last = clock_kept.get(&key).copied();
                        if last.is_some_and(|(at, r)| e.at_ms - at < HELD_CLOCK_EVERY_MS && r == running) {
                            continue;
                        }
                        clock_kept.insert(key, (e.at_ms, running));
                    }
                    let h = Held {
                        due_ms: e.at_ms + delay,
                        seq: e.seq,
                        game: e.game_id,
                        change: e.change,
                        arbiters: e.arbiters,
                        message: Pending::Message(Box::new(e.message.delayed(delay))),
                        presses: e.presses.iter().map(|p| p.delayed(delay)).collect(),
                    };
                    if matches!(e.message, ServerMessage::Eval { .. }) {
                        // An evaluation is made once its positions are public, so it arrives
                        // long after them, stamped with its newest move's time: it goes right
                        // behind that move, not behind every move that came since.
                        let at = held.partition_point(|x| x.due_ms <= h.due_ms);
                        held.insert(at, h);
                    } else {
                        held.push_back(h);
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(round = %feed.round, missed = n, "delay line fell behind; reading the changes from the store");
                    last_seq = backfill(&lookup, &feed, last_seq, &mut held).await;
                }
                Err(RecvError::Closed) => return,
            },
            _ = tokio::time::sleep(next.unwrap_or(Duration::from_secs(3600))), if next.is_some() => {
                while held.front().is_some_and(|h| h.due_ms <= now_ms()) {
                    let Some(h) = held.pop_front() else { break };
                    let message = match h.message {
                        Pending::Message(m) => *m,
                        // A game replaced wholesale is shown as it stood at its moment.
                        Pending::Game { seq, game } => {
                            match lookup.game_view_at(game, Some(now_ms() - delay)).await {
                                Ok(v) => ServerMessage::Game { seq, game: Box::new(v) },
                                Err(_) => continue,
                            }
                        }
                    };
                    let mut e = Event::new(feed.round, h.game, h.seq, &message);
                    e.change = h.change;
                    e.arbiters = h.arbiters;
                    if !h.presses.is_empty() {
                        e = e.carrying(h.presses);
                    }
                    feed.push(Arc::new(e));
                }
            }
        }
    }
}

/// Queues the stored changes after `since`, each due `delay` after it was made; the last
/// change number queued.
async fn backfill(lookup: &Lookup, feed: &Feed, mut since: Seq, held: &mut VecDeque<Held>) -> Seq {
    loop {
        let changes = match lookup.store.changes_since(feed.round, since, 1000).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(round = %feed.round, error = %e, "delayed changes not read");
                return since;
            }
        };
        if changes.is_empty() {
            return since;
        }
        for c in &changes {
            since = c.seq;
            if let Some(m) = change_message(None, c) {
                held.push_back(Held {
                    due_ms: c.at_ms + feed.delay_ms,
                    seq: c.seq,
                    game: c.game_id,
                    change: true,
                    arbiters: false,
                    message: m,
                    presses: Vec::new(),
                });
            }
        }
    }
}
