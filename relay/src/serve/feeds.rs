//! Round feeds: what spectators of a round follow, shared by all of them.
//!
//! A feed is one round as seen with one delay. The live feed (delay 0) of a round is fed by
//! the writer, after each commit (`Shared::publish`); a delayed feed is fed by its delay line,
//! one task per (round, delay) that holds the live feed's events for the delay and then passes
//! them on. Either way every client of a feed gets the same `Arc<Event>` whose text was encoded
//! once, from a channel of its own round only.
//!
//! A feed keeps its last change events in a ring and one snapshot of the round, built from the
//! store at most once a second however many clients ask (rebuilt sooner only when the ring no
//! longer covers the changes since it). A client joining gets that snapshot and the ring's
//! events after it: a crowd joining costs one snapshot build, not one store query per client,
//! and memory per delayed spectator does not grow with the delay.

use super::api::{ApiError, game_json, round_json};
use super::live::{Event, Pending, Shared, change_message, now_ms};
use super::wire::ServerMessage;
use axum::extract::ws::Utf8Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// Events a client may be behind before it is started again from a snapshot.
const CHANNEL_CAPACITY: usize = 1024;
/// Change events each feed keeps for clients joining or coming back.
const RECENT: usize = 2048;
/// Snapshots asked for in one second that make a crowd, for whom one snapshot a second is
/// built and shared.
const CROWD: u64 = 20;
/// How long a snapshot is reused while the ring covers what changed since.
const SNAPSHOT_REUSE_MS: i64 = 1000;
/// A delay line passes on one running-clock message per game this often (a page counts the
/// seconds between them itself).
const HELD_CLOCK_EVERY_MS: i64 = 10_000;

#[derive(Clone, Debug)]
struct Snap {
    seq: i64,
    built_ms: i64,
    text: Utf8Bytes,
}

/// One round with one delay, as its spectators follow it.
#[derive(Debug)]
pub struct Feed {
    pub round: i64,
    pub delay_ms: i64,
    tx: broadcast::Sender<Arc<Event>>,
    /// The last change events, oldest first (pushed under this lock with the send, so a
    /// subscriber taken under it misses nothing between the ring and the channel).
    recent: Mutex<VecDeque<Arc<Event>>>,
    last_seq: AtomicI64,
    snapshot: Mutex<Option<Snap>>,
    /// Held while the snapshot is built: one build at a time.
    build: tokio::sync::Mutex<()>,
    /// Snapshots asked for since `asks_since` (ms): more than [`CROWD`] a second is a crowd.
    asks: AtomicU64,
    asks_since: AtomicI64,
}

impl Feed {
    fn new(round: i64, delay_ms: i64) -> Feed {
        Feed {
            round,
            delay_ms,
            tx: broadcast::channel(CHANNEL_CAPACITY).0,
            recent: Mutex::new(VecDeque::new()),
            last_seq: AtomicI64::new(0),
            snapshot: Mutex::new(None),
            build: tokio::sync::Mutex::new(()),
            asks: AtomicU64::new(0),
            asks_since: AtomicI64::new(0),
        }
    }

    pub fn push(&self, e: Arc<Event>) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if e.change {
            self.last_seq.fetch_max(e.seq, Ordering::Relaxed);
            if recent.len() >= RECENT {
                recent.pop_front();
            }
            recent.push_back(e.clone());
        }
        // No receiver is fine: nobody is watching.
        let _ = self.tx.send(e);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        let _held = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        self.tx.subscribe()
    }

    /// The change events after `seq`, when the ring still has all of them.
    pub fn since(&self, seq: i64) -> Option<Vec<Arc<Event>>> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        self.covers(&recent, seq)
            .then(|| recent.iter().filter(|e| e.seq > seq).cloned().collect())
    }

    /// Whether `recent` holds every change after `seq`. Nothing seen yet (a fresh service):
    /// the feed cannot vouch for any gap.
    fn covers(&self, recent: &VecDeque<Arc<Event>>, seq: i64) -> bool {
        recent.front().is_some_and(|first| {
            seq <= self.last_seq.load(Ordering::Relaxed) && first.seq <= seq + 1
        })
    }

    /// The round's snapshot message as this feed shows it, with its change number.
    pub async fn snapshot(&self, s: &Shared) -> Result<(i64, Utf8Bytes), ApiError> {
        // A snapshot behind the round is reused (its changes follow it from the ring) only
        // while a crowd is asking: a lone client gets a current one.
        let crowd = self.note_ask() >= CROWD;
        let usable = |snap: &Option<Snap>| {
            snap.as_ref()
                .filter(|c| {
                    c.seq >= self.last_seq.load(Ordering::Relaxed)
                        || (crowd
                            && now_ms() - c.built_ms < SNAPSHOT_REUSE_MS
                            && self.covers(
                                &self.recent.lock().unwrap_or_else(|e| e.into_inner()),
                                c.seq,
                            ))
                })
                .map(|c| (c.seq, c.text.clone()))
        };
        if let Some(hit) = usable(&self.snapshot.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(hit);
        }
        let _turn = self.build.lock().await;
        if let Some(hit) = usable(&self.snapshot.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(hit);
        }
        s.metrics.ws_snapshots.fetch_add(1, Ordering::Relaxed);
        let mut v = round_json(s, self.round, false).await?;
        summarize(&mut v);
        let seq = v["seq"].as_i64().unwrap_or(0);
        let text = Utf8Bytes::from(
            ServerMessage::Snapshot {
                seq,
                round: Some(v),
                game: None,
            }
            .encode(),
        );
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = Some(Snap {
            seq,
            built_ms: now_ms(),
            text: text.clone(),
        });
        Ok((seq, text))
    }

    /// Counts a snapshot asked for; how many were asked in the current second.
    fn note_ask(&self) -> u64 {
        let now = now_ms();
        let start = self.asks_since.load(Ordering::Relaxed);
        if now - start >= 1000 {
            self.asks_since.store(now, Ordering::Relaxed);
            self.asks.store(0, Ordering::Relaxed);
        }
        self.asks.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn forget_snapshot(&self) {
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// A round view for spectators: each game keeps only its last move (the round page shows
/// that, the position and the clocks; a game page asks for its whole game). A 200-board
/// round's snapshot shrinks from all its moves to one each, which is what lets a crowd join
/// (each socket's write buffer still keeps the snapshot's size: see README "Measured").
fn summarize(round: &mut serde_json::Value) {
    if let Some(games) = round["games"].as_array_mut() {
        for g in games {
            if let Some(moves) = g["moves"].as_array_mut()
                && moves.len() > 1
            {
                moves.drain(..moves.len() - 1);
            }
        }
    }
}

/// Every feed of the service, made when first asked for.
#[derive(Debug, Default)]
pub struct Feeds {
    map: Mutex<HashMap<(i64, i64), Arc<Feed>>>,
    /// The service, for delay lines (set once at start-up).
    shared: Mutex<Weak<Shared>>,
}

impl Feeds {
    pub fn attach(&self, shared: &Arc<Shared>) {
        *self.shared.lock().unwrap_or_else(|e| e.into_inner()) = Arc::downgrade(shared);
    }

    /// The live feed of a round.
    pub fn live(&self, round: i64) -> Arc<Feed> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((round, 0))
            .or_insert_with(|| Arc::new(Feed::new(round, 0)))
            .clone()
    }

    /// The feed of a round with `delay_ms` (the live one for 0), its delay line started when
    /// it is new.
    pub fn get(&self, round: i64, delay_ms: i64) -> Arc<Feed> {
        if delay_ms <= 0 {
            return self.live(round);
        }
        let live = self.live(round);
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = map.get(&(round, delay_ms)) {
            return f.clone();
        }
        let feed = Arc::new(Feed::new(round, delay_ms));
        map.insert((round, delay_ms), feed.clone());
        let shared = self
            .shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(shared) = shared.upgrade() {
            // Subscribed now, before the store is read for what came before.
            let rx = live.subscribe();
            tokio::spawn(delay_line(shared, feed.clone(), rx));
        }
        feed
    }

    /// Cached snapshots are rebuilt (after an arbiter's edit of rounds or tournaments).
    pub fn forget_snapshots(&self) {
        for f in self.map.lock().unwrap_or_else(|e| e.into_inner()).values() {
            f.forget_snapshot();
        }
    }
}

/// What a delay line holds: a message and when it is due.
struct Held {
    due_ms: i64,
    seq: i64,
    game: Option<i64>,
    change: bool,
    message: Pending,
}

/// Holds the live feed's events for the feed's delay and passes them on, re-stamping running
/// clocks and keeping one clock message per game every 10 s. It starts with the changes of
/// the last `delay` from the store, so the delayed view has no gap.
async fn delay_line(s: Arc<Shared>, feed: Arc<Feed>, mut rx: broadcast::Receiver<Arc<Event>>) {
    let delay = feed.delay_ms;
    let mut held: VecDeque<Held> = VecDeque::new();
    let mut clock_kept: HashMap<i64, (i64, Option<&'static str>)> = HashMap::new();
    let mut last_seq = match s.store.seq_at(feed.round, now_ms() - delay).await {
        Ok(seq) => seq,
        Err(e) => {
            tracing::error!(round = feed.round, error = %e, "delay line cannot start");
            0
        }
    };
    last_seq = backfill(&s, &feed, last_seq, &mut held).await;
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
                    if e.clocks.is_some() || e.clock.is_some() {
                        let key = e.game_id.filter(|_| e.clock.is_some()).unwrap_or(-1);
                        let running = e.clock.and_then(|c| c.running);
                        let last = clock_kept.get(&key).copied();
                        if last.is_some_and(|(at, r)| e.at_ms - at < HELD_CLOCK_EVERY_MS && r == running) {
                            continue;
                        }
                        clock_kept.insert(key, (e.at_ms, running));
                    }
                    held.push_back(Held {
                        due_ms: e.at_ms + delay,
                        seq: e.seq,
                        game: e.game_id,
                        change: e.change,
                        message: Pending::Text(e.delayed_text(delay)),
                    });
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(round = feed.round, missed = n, "delay line fell behind; reading the changes from the store");
                    last_seq = backfill(&s, &feed, last_seq, &mut held).await;
                }
                Err(RecvError::Closed) => return,
            },
            _ = tokio::time::sleep(next.unwrap_or(Duration::from_secs(3600))), if next.is_some() => {
                while held.front().is_some_and(|h| h.due_ms <= now_ms()) {
                    let Some(h) = held.pop_front() else { break };
                    let text = match h.message {
                        Pending::Text(t) => t,
                        // A game replaced wholesale is shown as it stood at its moment.
                        Pending::Game { seq, game } => match game_json(&s, game, false).await {
                            Ok(v) => ServerMessage::Game { seq, game: v }.encode(),
                            Err(_) => continue,
                        },
                    };
                    let mut e = Event::encoded(feed.round, h.game, h.seq, text);
                    e.change = h.change;
                    feed.push(Arc::new(e));
                }
            }
        }
    }
}

/// Queues the stored changes after `since`, each due `delay` after it was made; the last
/// change number queued.
async fn backfill(s: &Shared, feed: &Feed, mut since: i64, held: &mut VecDeque<Held>) -> i64 {
    loop {
        let changes = match s.store.changes_since(feed.round, since, 1000).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(round = feed.round, error = %e, "delayed changes not read");
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
                    message: m,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: i64, change: bool) -> Arc<Event> {
        let mut e = Event::new(1, Some(7), seq, &ServerMessage::Heartbeat { at_ms: seq });
        e.change = change;
        Arc::new(e)
    }

    fn seqs(events: Option<Vec<Arc<Event>>>) -> Option<Vec<i64>> {
        events.map(|v| v.iter().map(|e| e.seq).collect())
    }

    #[test]
    fn the_ring_answers_only_for_what_it_still_has() {
        let feed = Feed::new(1, 0);
        // Nothing seen yet: the feed cannot vouch for any gap.
        assert_eq!(seqs(feed.since(0)), None);
        for seq in 1..=3 {
            feed.push(event(seq, true));
        }
        // A running clock repeats the last number and is not kept.
        feed.push(event(3, false));
        assert_eq!(seqs(feed.since(0)), Some(vec![1, 2, 3]));
        assert_eq!(seqs(feed.since(1)), Some(vec![2, 3]));
        assert_eq!(seqs(feed.since(3)), Some(vec![]));
        for seq in 4..=(RECENT as i64 + 10) {
            feed.push(event(seq, true));
        }
        // The oldest fell out of the ring: a client that far behind needs a snapshot.
        assert_eq!(seqs(feed.since(1)), None);
        let last = RECENT as i64 + 10;
        assert_eq!(seqs(feed.since(last - 2)), Some(vec![last - 1, last]));
    }

    #[tokio::test]
    async fn a_subscriber_gets_every_event_pushed_after_it_subscribed() {
        let feed = Feed::new(1, 0);
        feed.push(event(1, true));
        let mut rx = feed.subscribe();
        feed.push(event(2, true));
        feed.push(event(2, false));
        let first = rx.recv().await.expect("an event");
        let second = rx.recv().await.expect("an event");
        assert_eq!((first.seq, first.change), (2, true));
        assert_eq!((second.seq, second.change), (2, false));
        assert!(rx.try_recv().is_err());
    }
}
