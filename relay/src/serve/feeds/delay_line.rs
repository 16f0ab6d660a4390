//! A delay line: the events of a round's live feed held for a delayed feed's delay, then
//! passed on to it.
//!
//! What it holds of a move or a lever press is its change number and the little the store's
//! log does not keep (when the board was read, the running clock it went out with): the rest
//! is read back from the log when it comes due, as a client catching up reads it. A
//! 15-minute delay of a busy round is tens of thousands of moves (24,000 with 50 boards at
//! 10x), each a few hundred bytes held whole and about 120 held this way.

use super::feed::{Feed, Receiver};
use crate::serve::events::{Event, Pending, change_message};
use crate::serve::lookup::Lookup;
use crate::serve::views::ClockView;
use crate::serve::wire::ServerMessage;
use relay_core::recorder::ColorName;
use relay_store::{Change, GameId, Seq};
use relay_store::{StoreError, now_ms};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// A delay line passes on one running-clock message per game this often (a page counts the
/// seconds between them itself).
const HELD_CLOCK_EVERY_MS: i64 = 10_000;
/// Changes read back from the log at a time.
const PAGE: u32 = 1000;
/// How long a delay line waits to read the log again after the store failed it.
const RETRY: Duration = Duration::from_secs(1);

/// What a delay line holds of an event until it is due.
struct Held {
    due_ms: i64,
    seq: Seq,
    game: Option<GameId>,
    change: bool,
    /// Only for the clients that follow e-boards (e-board news, the arbiter's record).
    arbiters: bool,
    what: Kept,
    /// The lever presses the event carried, oldest first.
    presses: Vec<Press>,
}

/// What is kept of an event's message.
enum Kept {
    /// A stored change, read back from the log when due; for a move or a lever press, with
    /// what the log does not hold: when the board was read and the running clock.
    Logged {
        read_at_ms: Option<i64>,
        clock: Option<ClockView>,
    },
    /// Anything else (running clocks, evaluations, e-board news, a game sent whole, a
    /// result): the message itself, already shifted by the delay. These are few next to the
    /// moves: one running clock per game every 10 s, and an evaluation per position at most.
    Whole(Box<ServerMessage>),
}

/// A lever press an event carried: its change, read back from the log like a move's.
struct Press {
    seq: Seq,
    clock: Option<ClockView>,
}

impl Kept {
    /// What to keep of `m` (a stored change when `change`).
    fn of(m: &ServerMessage, change: bool, delay_ms: i64) -> Kept {
        match m {
            ServerMessage::Move {
                read_at_ms, clock, ..
            } if change => Kept::Logged {
                read_at_ms: *read_at_ms,
                clock: *clock,
            },
            ServerMessage::MoveClock { clock, .. } if change => Kept::Logged {
                read_at_ms: None,
                clock: *clock,
            },
            m => Kept::Whole(Box::new(m.delayed(delay_ms))),
        }
    }
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
                    let presses = e
                        .presses
                        .iter()
                        .filter_map(|p| match p {
                            ServerMessage::MoveClock { seq, clock, .. } => Some(Press { seq: *seq, clock: *clock }),
                            _ => None,
                        })
                        .collect();
                    let h = Held {
                        due_ms: e.at_ms + delay,
                        seq: e.seq,
                        game: e.game_id,
                        change: e.change,
                        arbiters: e.arbiters,
                        what: Kept::of(&e.message, e.change, delay),
                        presses,
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
                if let Err(e) = release_due(&lookup, &feed, &mut held).await {
                    tracing::warn!(round = %feed.round, error = %e, "delayed changes not read back; trying again");
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }
}

/// Passes on every held event that is due, reading its changes back from the log (in one
/// read for all of them). When the store fails, nothing is taken off the line.
async fn release_due(
    lookup: &Lookup,
    feed: &Feed,
    held: &mut VecDeque<Held>,
) -> Result<(), StoreError> {
    let delay = feed.delay_ms;
    let now = now_ms();
    let due = held.iter().take_while(|h| h.due_ms <= now).count();
    let mut logged = Vec::new();
    for h in held.iter().take(due) {
        if matches!(h.what, Kept::Logged { .. }) {
            logged.push(h.seq);
        }
        logged.extend(h.presses.iter().map(|p| p.seq));
    }
    let log = read_log(lookup, feed, &logged).await?;
    for h in held.drain(..due) {
        let message = match h.what {
            Kept::Whole(m) => *m,
            Kept::Logged { read_at_ms, clock } => {
                match from_log(lookup, &log, h.seq, read_at_ms, clock, delay).await {
                    Some(m) => m,
                    None => continue,
                }
            }
        };
        let mut presses = Vec::with_capacity(h.presses.len());
        for p in &h.presses {
            if let Some(m) = from_log(lookup, &log, p.seq, None, p.clock, delay).await {
                presses.push(m);
            }
        }
        let mut e = Event::new(feed.round, h.game, h.seq, &message);
        e.change = h.change;
        e.arbiters = h.arbiters;
        if !presses.is_empty() {
            e = e.carrying(presses);
        }
        feed.push(Arc::new(e));
    }
    Ok(())
}

/// The round's stored changes numbered `seqs` (in any order), by number.
async fn read_log(
    lookup: &Lookup,
    feed: &Feed,
    seqs: &[Seq],
) -> Result<HashMap<Seq, Change>, StoreError> {
    let mut log = HashMap::new();
    let (Some(&first), Some(&last)) = (seqs.iter().min(), seqs.iter().max()) else {
        return Ok(log);
    };
    let mut after = first - 1;
    while after < last {
        let page = lookup.store.changes_since(feed.round, after, PAGE).await?;
        let Some(end) = page.last().map(|c| c.seq) else {
            break;
        };
        log.extend(
            page.into_iter()
                .filter(|c| c.seq <= last)
                .map(|c| (c.seq, c)),
        );
        after = end;
    }
    Ok(log)
}

/// A held change's message from its log entry, as it went out live (the move's reading
/// time, the running clock) and shifted by the delay; `None` when the log does not have it.
async fn from_log(
    lookup: &Lookup,
    log: &HashMap<Seq, Change>,
    seq: Seq,
    read_at_ms: Option<i64>,
    clock: Option<ClockView>,
    delay_ms: i64,
) -> Option<ServerMessage> {
    let Some(c) = log.get(&seq) else {
        tracing::warn!(%seq, "a delayed change is not in the log; it is skipped");
        return None;
    };
    let mut m = match change_message(None, c)? {
        Pending::Message(m) => *m,
        // A game replaced wholesale is shown as it stood at its moment.
        Pending::Game { seq, game } => {
            let at = now_ms() - delay_ms;
            let view = lookup.game_view_at(game, Some(at)).await.ok()?;
            return Some(ServerMessage::Game {
                seq,
                game: Box::new(view),
            });
        }
    };
    match &mut m {
        ServerMessage::Move {
            read_at_ms: r,
            clock: k,
            ..
        } => {
            *r = read_at_ms;
            *k = clock;
        }
        ServerMessage::MoveClock { clock: k, .. } => *k = clock,
        _ => {}
    }
    Some(m.delayed(delay_ms))
}

/// Queues the stored changes after `since`, each due `delay` after it was made; the last
/// change number queued.
async fn backfill(lookup: &Lookup, feed: &Feed, mut since: Seq, held: &mut VecDeque<Held>) -> Seq {
    loop {
        let changes = match lookup.store.changes_since(feed.round, since, PAGE).await {
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
            if c.game_id.is_some() {
                held.push_back(Held {
                    due_ms: c.at_ms + feed.delay_ms,
                    seq: c.seq,
                    game: c.game_id,
                    change: true,
                    arbiters: false,
                    what: Kept::Logged {
                        read_at_ms: None,
                        clock: None,
                    },
                    presses: Vec::new(),
                });
            }
        }
    }
}
