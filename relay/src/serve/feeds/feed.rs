//! One feed: a round as seen with one delay, its clients' channels, its ring of recent
//! changes and its view in memory.

use crate::serve::events::Event;
use crate::serve::lookup::Lookup;
use crate::serve::metrics::Metrics;
use crate::serve::views::{GameView, RoundView};
use crate::serve::wire::{Frame, ServerMessage, game_snapshot, round_snapshot};
use parking_lot::{Mutex, MutexGuard};
use relay_store::{GameId, RoundId, Seq};
use relay_store::{StoreError, now_ms};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// Batches of events a client may be behind before it is started again from a snapshot.
const CHANNEL_CAPACITY: usize = 1024;
/// Change events each feed keeps for clients joining or coming back: what a crowd's shared
/// snapshot (a second old at most) and a view read from the store need after them, and a
/// client's reconnection after a blip (512 is 19 s of 50 boards at 10x, 27 changes a second);
/// a client further behind is answered from the store's log. An event costs about 700 bytes
/// (its message, its encoded frame): 2,048 a feed were 1.4 MiB of every round's feed.
const RECENT: usize = 512;
/// The ring of a feed nobody follows (its round's spectators are elsewhere, or none yet): a
/// first client gets a snapshot, and one coming back from further behind is answered from the
/// store's log. At 10x a board's next game opens the next round every few minutes, and each
/// of those rounds' feeds kept 512 events (350 KiB) for no client.
const RECENT_UNFOLLOWED: usize = 64;
/// Snapshots asked for in one second that make a crowd, for whom one snapshot a second is
/// built and shared.
const CROWD: u64 = 20;
/// How long a snapshot is reused while the ring covers what changed since.
const SNAPSHOT_REUSE_MS: i64 = 1000;
/// How long a lever press waits for a change of its round to carry it.
const PRESS_HOLD_MS: i64 = 1000;
/// Clients of one feed that make a crowd: its events are paced (see [`Feed::push`]).
const CROWD_FANOUT: usize = 5000;
/// Fewer clients make a crowd too when the feed's events would ask this many socket writes a
/// second of them (clients × the events for spectators in the last second; e-board news,
/// which only the console gets, does not count). A write costs 10-20 µs of a core here, so
/// past this a fan-out lasts about half the gap between two events and the next one lands
/// in its middle: a relay serving its share of an audience beside others on one database
/// (3,333 clients, 17 moves a second: 57,000) is paced.
const PACE_WRITES: u64 = 40_000;
/// Below this many clients a feed's events always go out at once: a fan-out to them takes a
/// few milliseconds (1000 spectators of a delayed round with 45 events a second: 12 ms
/// first to last, unpaced; paced, every move waits up to a sweep).
const PACE_MIN: usize = 2000;
/// Channels a feed's clients are spread over (see `Feed::tx`).
const SHARDS: usize = 8;
/// How often feeds let out a crowd's paced events, and presses held for [`PRESS_HOLD_MS`].
pub const SWEEP: Duration = Duration::from_millis(250);

/// The wait from `now_ms` (ms since the epoch) to the wall clock's next multiple of
/// [`SWEEP`] (a whole sweep when `now_ms` is one).
pub(super) fn until_next_sweep(now_ms: i64) -> Duration {
    let sweep = SWEEP.as_millis() as i64;
    Duration::from_millis((sweep - now_ms.rem_euclid(sweep)) as u64)
}

/// Events sent together (never none).
type Batch = Arc<Vec<Arc<Event>>>;

/// A client's end of a feed: the events of each batch one by one, in order. A lag counts
/// batches.
pub struct Receiver {
    rx: broadcast::Receiver<Batch>,
    /// `None` until the first batch: an empty one made at subscription was an allocation
    /// a client, kept for as long as the feed was quiet.
    batch: Option<Batch>,
    /// The next event of `batch` to hand out.
    next: usize,
}

impl Receiver {
    /// The next event (cancel-safe: nothing is taken until it is returned).
    pub async fn recv(&mut self) -> Result<Arc<Event>, RecvError> {
        loop {
            if let Some(e) = self.take() {
                return Ok(e);
            }
            self.batch = Some(self.rx.recv().await?);
            self.next = 0;
        }
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Result<Arc<Event>, TryRecvError> {
        loop {
            if let Some(e) = self.take() {
                return Ok(e);
            }
            self.batch = Some(self.rx.try_recv()?);
            self.next = 0;
        }
    }

    fn take(&mut self) -> Option<Arc<Event>> {
        let e = self.batch.as_ref()?.get(self.next)?.clone();
        self.next += 1;
        Some(e)
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field(
                "waiting",
                &self.batch.as_ref().map_or(0, |b| b.len() - self.next),
            )
            .finish_non_exhaustive()
    }
}

/// An event as the view takes it: the presses it carries first, then its own message. A
/// press sets its move's clock whatever the view's number (setting it twice is harmless), so
/// one committed before a change published ahead of it is not lost to the view.
fn apply(view: &mut RoundView, e: &Event) {
    for p in &e.presses {
        view.apply(p, false);
    }
    view.apply(&e.message, e.change);
}

#[derive(Clone, Debug)]
struct Snap {
    seq: Seq,
    built_ms: i64,
    parts: Parts,
}

/// A snapshot's messages, in order (a round's comes in parts: see `wire::round_snapshot`),
/// encoded once and shared by every client that gets them.
pub type Parts = Arc<Vec<Frame>>;

/// The feed's round as its clients see it, kept in memory: built from the store once, then
/// brought up to date with every message the feed passes on, and encoded for snapshots at
/// most once per change.
#[derive(Debug, Default)]
pub(super) struct View {
    pub(super) round: Option<RoundView>,
    /// The spectators' snapshot (each game with its last move).
    summary: Option<Snap>,
    /// Every move of every game (the console, arbiters, `?moves=all`).
    full: Option<Snap>,
    /// Game pages' snapshots at the view's change number.
    games: HashMap<GameId, Snap>,
}

/// One round with one delay, as its spectators follow it.
#[derive(Debug)]
pub struct Feed {
    pub round: RoundId,
    pub delay_ms: i64,
    /// Events go out in batches: one each, or a crowd's paced events together (see
    /// [`Receiver`]).
    ///
    /// The clients are spread over [`SHARDS`] channels, each sent every batch: a client
    /// going back to wait for the next batch takes its channel's lock, and thousands of
    /// clients on one channel woken together by a sweep queued for that one lock on both
    /// cores (`perf record` of `sched_yield` at 19,000 spectators: 75% in the channel's
    /// `recv`). A channel is made when its first client comes (under `recent`, as a
    /// subscription is): each holds [`CHANNEL_CAPACITY`] slots from the start (40 KiB), and
    /// most feeds have one follower or none.
    tx: [OnceLock<broadcast::Sender<Batch>>; SHARDS],
    /// The channel the next client subscribes to.
    next_shard: AtomicUsize,
    /// The last change events, oldest first (pushed under this lock with the send, so a
    /// subscriber taken under it misses nothing between the ring and the channel).
    recent: Mutex<VecDeque<Arc<Event>>>,
    last_seq: AtomicI64,
    /// Taken after `recent` when both are held.
    view: Mutex<View>,
    /// Lever presses waiting for a change to carry them (taken after `recent`).
    held: Mutex<Vec<Arc<Event>>>,
    /// A crowd's events waiting for the next [`SWEEP`] (taken after `recent`).
    paced: Mutex<Vec<Arc<Event>>>,
    /// Events for spectators passed on since the last sweep, those of the last four sweeps,
    /// and their sum: the events of the last second (for [`PACE_WRITES`]).
    passed: AtomicU64,
    passed_by_sweep: Mutex<VecDeque<u64>>,
    per_sec: AtomicU64,
    /// Held while the view is read from the store or a snapshot encoded: one at a time.
    build: tokio::sync::Mutex<()>,
    /// Snapshots asked for since `asks_since` (ms): more than [`CROWD`] a second is a crowd.
    asks: AtomicU64,
    asks_since: AtomicI64,
    /// When the feed was last handed an event (ms since the epoch).
    last_push_ms: AtomicI64,
}

/// Which snapshot a client asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotOf {
    /// The round, each game with its last move: what spectators get.
    Summary,
    /// The round with every move.
    Full,
    /// One game with every move.
    Game(GameId),
}

impl Feed {
    pub(super) fn new(round: RoundId, delay_ms: i64) -> Feed {
        Feed {
            round,
            delay_ms,
            tx: std::array::from_fn(|_| OnceLock::new()),
            next_shard: AtomicUsize::new(0),
            recent: Mutex::new(VecDeque::new()),
            last_seq: AtomicI64::new(0),
            view: Mutex::new(View::default()),
            held: Mutex::new(Vec::new()),
            paced: Mutex::new(Vec::new()),
            passed: AtomicU64::new(0),
            passed_by_sweep: Mutex::new(VecDeque::new()),
            per_sec: AtomicU64::new(0),
            build: tokio::sync::Mutex::new(()),
            asks: AtomicU64::new(0),
            asks_since: AtomicI64::new(0),
            last_push_ms: AtomicI64::new(now_ms()),
        }
    }

    /// Whether nobody follows the feed (no client, no delay line) and it was handed nothing
    /// for `idle_ms` up to `now_ms`: what it keeps (its ring of recent events and its view)
    /// serves nobody. (Its channels hold nothing by then: a broadcast channel lets go of a
    /// batch once every receiver has read it, and with no receiver at all it keeps none.)
    pub(super) fn is_idle(&self, now_ms: i64, idle_ms: i64) -> bool {
        self.clients() == 0 && now_ms - self.last_push_ms.load(Ordering::Relaxed) >= idle_ms
    }

    /// Passes an event on to the feed's clients. A lever press on its own is held for the
    /// round's next change to carry (see `wire::Announcement`), or until [`Feed::release_due`]
    /// finds it a second old.
    ///
    /// A crowd's events are paced: they wait for the next [`SWEEP`] and go out together.
    /// Each event sent wakes every client, and each woken client writes to its socket; with
    /// thousands of clients one fan-out takes longer than the gap between a busy round's
    /// commits, so a move that came in the middle of one went at once to the clients not
    /// served yet and a whole fan-out later to those served already (measured with 19,000
    /// spectators: first to last 2.0-2.3 times the bare machine's spread). Paced, every
    /// client gets the same events in the same fan-out, at most a sweep later.
    pub fn push(&self, e: Arc<Event>) {
        self.last_push_ms.store(now_ms(), Ordering::Relaxed);
        let mut recent = self.recent.lock();
        let mut held = self.held.lock();
        if e.is_press() {
            held.push(e);
            return;
        }
        let e = if e.change && !held.is_empty() {
            // Oldest first: the held ones, then any the event carries already (a delayed
            // feed's events come carrying the live feed's).
            let mut presses: Vec<ServerMessage> =
                held.drain(..).map(|p| p.message.clone()).collect();
            presses.extend(e.presses.iter().cloned());
            Arc::new(e.carrying(presses))
        } else {
            e
        };
        drop(held);
        self.pass(&mut recent, e);
    }

    /// Releases the event now, or keeps it for the next sweep when the feed is a crowd (or
    /// events are kept already: they go out in order).
    fn pass(&self, recent: &mut VecDeque<Arc<Event>>, e: Arc<Event>) {
        // E-board news goes to the console alone: spectators write nothing for it.
        if !e.arbiters {
            self.passed.fetch_add(1, Ordering::Relaxed);
        }
        let mut paced = self.paced.lock();
        if !paced.is_empty() || self.is_crowd() {
            paced.push(e);
            return;
        }
        drop(paced);
        let e = self.release(recent, e);
        self.send(Arc::new(vec![e]));
    }

    /// Sends a batch to every client (no receiver is fine: nobody is watching).
    fn send(&self, batch: Batch) {
        for tx in self.channels() {
            let _ = tx.send(batch.clone());
        }
    }

    /// The channels made so far.
    fn channels(&self) -> impl Iterator<Item = &broadcast::Sender<Batch>> {
        self.tx.iter().filter_map(OnceLock::get)
    }

    /// How many clients follow the feed.
    fn clients(&self) -> usize {
        self.channels().map(|tx| tx.receiver_count()).sum()
    }

    /// Whether the feed's clients are a crowd whose events are paced: [`CROWD_FANOUT`] of
    /// them, or enough that the feed's rate of events would ask [`PACE_WRITES`] of them.
    fn is_crowd(&self) -> bool {
        let clients = self.clients();
        let per_sec = self.per_sec.load(Ordering::Relaxed);
        clients >= CROWD_FANOUT || (clients >= PACE_MIN && clients as u64 * per_sec >= PACE_WRITES)
    }

    /// Lets out the events a crowd's pacing kept, oldest first (called at every sweep).
    pub fn release_paced(&self) {
        {
            let mut by_sweep = self.passed_by_sweep.lock();
            by_sweep.push_back(self.passed.swap(0, Ordering::Relaxed));
            let per_second = (1000 / SWEEP.as_millis()) as usize;
            while by_sweep.len() > per_second {
                by_sweep.pop_front();
            }
            self.per_sec.store(by_sweep.iter().sum(), Ordering::Relaxed);
        }
        let mut recent = self.recent.lock();
        let due = std::mem::take(&mut *self.paced.lock());
        if due.is_empty() {
            return;
        }
        let batch: Vec<Arc<Event>> = due
            .into_iter()
            .map(|e| self.release(&mut recent, e))
            .collect();
        // One send for the lot: a client woken by it finds all of it and writes it at once.
        // Sent one by one, a client the other worker thread woke at the first could write
        // that one alone and the rest in a second write.
        self.send(Arc::new(batch));
    }

    /// Presses held for a second with no change to carry them go out on their own.
    pub fn release_due(&self, now_ms: i64) {
        let mut recent = self.recent.lock();
        let due: Vec<Arc<Event>> = {
            let mut held = self.held.lock();
            if held
                .first()
                .is_none_or(|p| now_ms - p.at_ms < PRESS_HOLD_MS)
            {
                return;
            }
            held.drain(..).collect()
        };
        for e in due {
            self.pass(&mut recent, e);
        }
    }

    /// Takes an event going out into the ring and the view; the caller sends it.
    fn release(&self, recent: &mut VecDeque<Arc<Event>>, e: Arc<Event>) -> Arc<Event> {
        if e.change {
            self.last_seq.fetch_max(e.seq.get(), Ordering::Relaxed);
            let keep = if self.clients() == 0 {
                RECENT_UNFOLLOWED
            } else {
                RECENT
            };
            while recent.len() >= keep {
                recent.pop_front();
            }
            recent.push_back(e.clone());
        }
        if let Some(view) = self.lock_view().round.as_mut() {
            apply(view, &e);
        }
        e
    }

    pub fn subscribe(&self) -> Receiver {
        let _held = self.recent.lock();
        Receiver {
            rx: self.tx[self.next_shard.fetch_add(1, Ordering::Relaxed) % SHARDS]
                .get_or_init(|| broadcast::channel(CHANNEL_CAPACITY).0)
                .subscribe(),
            batch: None,
            next: 0,
        }
    }

    /// The change events after `seq`, when the ring still has all of them.
    pub fn since(&self, seq: Seq) -> Option<Vec<Arc<Event>>> {
        let recent = self.recent.lock();
        self.covers(&recent, seq)
            .then(|| recent.iter().filter(|e| e.seq > seq).cloned().collect())
    }

    /// Whether `recent` holds every change after `seq`. Nothing seen yet (a fresh service):
    /// the feed cannot vouch for any gap.
    fn covers(&self, recent: &VecDeque<Arc<Event>>, seq: Seq) -> bool {
        recent.front().is_some_and(|first| {
            seq <= Seq::from(self.last_seq.load(Ordering::Relaxed)) && first.first_seq() <= seq + 1
        })
    }

    /// Makes sure the feed holds its round's view: read from the store the first time (and
    /// after an arbiter's edit of the round), as of the feed's delay.
    async fn ensure_view(&self, lookup: &Lookup) -> Result<(), StoreError> {
        if self.lock_view().round.is_some() {
            return Ok(());
        }
        let cutoff = (self.delay_ms > 0).then(|| now_ms() - self.delay_ms);
        let mut built = lookup.round_view_at(self.round, cutoff).await?;
        // Changes pushed while the store was read are in the ring: applied, the view misses
        // nothing (those it already has are skipped by their numbers).
        let recent = self.recent.lock();
        let from = built.seq;
        for e in recent.iter().filter(|e| e.seq > from) {
            apply(&mut built, e);
        }
        let mut view = self.lock_view();
        if view.round.is_none() {
            view.round = Some(built);
        }
        Ok(())
    }

    pub(super) fn lock_view(&self) -> MutexGuard<'_, View> {
        self.view.lock()
    }

    /// A snapshot of this feed's view, with its change number, from memory (the view is read
    /// through `lookup` the first time); `metrics` counts the snapshots built.
    pub async fn snapshot(
        &self,
        lookup: &Lookup,
        metrics: &Metrics,
        of: SnapshotOf,
    ) -> Result<(Seq, Parts), SnapshotError> {
        // A spectators' snapshot behind the round is reused (its changes follow it from the
        // ring) only while a crowd is asking: a lone client gets a current one.
        let crowd = of == SnapshotOf::Summary && self.note_ask() >= CROWD;
        if let Some(hit) = self.cached(of, crowd) {
            return Ok(hit);
        }
        let _turn = self.build.lock().await;
        if let Some(hit) = self.cached(of, crowd) {
            return Ok(hit);
        }
        self.ensure_view(lookup).await?;
        metrics.ws_snapshots.inc();
        // Copied under the lock, encoded outside it: the writer's pushes do not wait.
        enum Copy {
            Round(RoundView),
            Game(Box<GameView>),
        }
        let (seq, copy) = {
            let view = self.lock_view();
            let Some(round) = view.round.as_ref() else {
                return Err(SnapshotError::NotReady);
            };
            let copy = match of {
                SnapshotOf::Summary => Copy::Round(round.summary()),
                SnapshotOf::Full => Copy::Round(round.clone()),
                SnapshotOf::Game(id) => match round.game(id) {
                    Some(g) => Copy::Game(Box::new(g.clone())),
                    None => {
                        return Err(SnapshotError::NotInRound {
                            game: id,
                            round: self.round,
                        });
                    }
                },
            };
            (round.seq, copy)
        };
        let texts = match copy {
            Copy::Round(round) => round_snapshot(seq, round),
            Copy::Game(game) => game_snapshot(seq, *game),
        };
        let snap = Snap {
            seq,
            built_ms: now_ms(),
            parts: Arc::new(texts.iter().map(|t| Frame::text(t)).collect()),
        };
        let mut view = self.lock_view();
        if view.round.as_ref().is_some_and(|r| r.seq == seq) {
            match of {
                SnapshotOf::Summary => view.summary = Some(snap.clone()),
                SnapshotOf::Full => view.full = Some(snap.clone()),
                SnapshotOf::Game(id) => {
                    view.games.retain(|_, g| g.seq == seq);
                    view.games.insert(id, snap.clone());
                }
            }
        }
        Ok((snap.seq, snap.parts))
    }

    /// A snapshot already encoded that can be sent: one of the view's current change number,
    /// or (for a crowd) one under a second old whose gap the ring covers.
    fn cached(&self, of: SnapshotOf, crowd: bool) -> Option<(Seq, Parts)> {
        let recent = crowd.then(|| self.recent.lock());
        let view = self.lock_view();
        let current = view.round.as_ref()?.seq;
        let snap = match of {
            SnapshotOf::Summary => view.summary.as_ref(),
            SnapshotOf::Full => view.full.as_ref(),
            SnapshotOf::Game(id) => view.games.get(&id),
        }?;
        let usable = snap.seq >= current
            || recent.is_some_and(|r| {
                now_ms() - snap.built_ms < SNAPSHOT_REUSE_MS && self.covers(&r, snap.seq)
            });
        usable.then(|| (snap.seq, snap.parts.clone()))
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

    /// The view is read from the store again when next asked for.
    pub(super) fn forget_view(&self) {
        *self.lock_view() = View::default();
    }
}

/// Why a feed has no snapshot to give.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("game {game} is not in round {round}")]
    NotInRound { game: GameId, round: RoundId },
    #[error("the round view is not ready")]
    NotReady,
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::{GameId, RoundId, Seq};

    fn event(seq: Seq, change: bool) -> Arc<Event> {
        let mut e = Event::new(
            RoundId::from(1),
            Some(GameId::from(7)),
            seq,
            &ServerMessage::Heartbeat { at_ms: seq.get() },
        );
        e.change = change;
        Arc::new(e)
    }

    fn seqs(events: Option<Vec<Arc<Event>>>) -> Option<Vec<i64>> {
        events.map(|v| v.iter().map(|e| e.seq.get()).collect())
    }

    #[test]
    fn sweeps_fall_on_the_wall_clocks_quarter_seconds() {
        let ms = |n: u64| Duration::from_millis(n);
        assert_eq!(until_next_sweep(1_000), ms(250));
        assert_eq!(until_next_sweep(1_001), ms(249));
        assert_eq!(until_next_sweep(1_249), ms(1));
        // Asked 10 ms apart (two relays, or one whose sweep came round late), both wake at
        // the same wall-clock moment.
        assert_eq!(1_130 + until_next_sweep(1_130).as_millis(), 1_250);
        assert_eq!(1_140 + until_next_sweep(1_140).as_millis(), 1_250);
    }

    #[test]
    fn the_ring_answers_only_for_what_it_still_has() {
        let feed = Feed::new(RoundId::from(1), 0);
        let _follower = feed.subscribe();
        // Nothing seen yet: the feed cannot vouch for any gap.
        assert_eq!(seqs(feed.since(Seq::from(0))), None);
        for seq in 1..=3 {
            feed.push(event(Seq::from(seq), true));
        }
        // A running clock repeats the last number and is not kept.
        feed.push(event(Seq::from(3), false));
        assert_eq!(seqs(feed.since(Seq::from(0))), Some(vec![1, 2, 3]));
        assert_eq!(seqs(feed.since(Seq::from(1))), Some(vec![2, 3]));
        assert_eq!(seqs(feed.since(Seq::from(3))), Some(vec![]));
        for seq in 4..=(RECENT as i64 + 10) {
            feed.push(event(Seq::from(seq), true));
        }
        // The oldest fell out of the ring: a client that far behind needs a snapshot.
        assert_eq!(seqs(feed.since(Seq::from(1))), None);
        let last = RECENT as i64 + 10;
        assert_eq!(
            seqs(feed.since(Seq::from(last) - 2)),
            Some(vec![last - 1, last])
        );
        let held = |feed: &Feed, n: usize| feed.since(Seq::from(last - n as i64)).map(|e| e.len());
        assert_eq!(held(&feed, RECENT), Some(RECENT));
        assert_eq!(held(&feed, RECENT + 1), None);

        // Nobody following: a short ring.
        let unfollowed = Feed::new(RoundId::from(2), 0);
        for seq in 1..=last {
            unfollowed.push(event(Seq::from(seq), true));
        }
        assert_eq!(
            held(&unfollowed, RECENT_UNFOLLOWED),
            Some(RECENT_UNFOLLOWED)
        );
        assert_eq!(held(&unfollowed, RECENT_UNFOLLOWED + 1), None);
    }

    #[test]
    fn a_feed_is_idle_only_with_nobody_following_and_nothing_pushed_for_a_while() {
        let feed = Feed::new(RoundId::from(1), 0);
        let t0 = feed.last_push_ms.load(Ordering::Relaxed);
        assert!(!feed.is_idle(t0 + 59_999, 60_000));
        assert!(feed.is_idle(t0 + 60_000, 60_000));
        let rx = feed.subscribe();
        assert!(!feed.is_idle(t0 + 600_000, 60_000), "a client follows it");
        drop(rx);
        feed.push(event(Seq::from(1), true));
        let t1 = feed.last_push_ms.load(Ordering::Relaxed);
        assert!(
            !feed.is_idle(t1 + 1_000, 60_000),
            "an event came a second ago"
        );
        assert!(feed.is_idle(t1 + 60_000, 60_000));
    }

    #[tokio::test]
    async fn a_subscriber_gets_every_event_pushed_after_it_subscribed() {
        let feed = Feed::new(RoundId::from(1), 0);
        feed.push(event(Seq::from(1), true));
        let mut rx = feed.subscribe();
        feed.push(event(Seq::from(2), true));
        feed.push(event(Seq::from(2), false));
        let first = rx.recv().await.expect("an event");
        let second = rx.recv().await.expect("an event");
        assert_eq!((first.seq.get(), first.change), (2, true));
        assert_eq!((second.seq.get(), second.change), (2, false));
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_crowd_gets_its_events_together_at_the_sweep() {
        let feed = Feed::new(RoundId::from(1), 0);
        let mut first = feed.subscribe();
        feed.push(event(Seq::from(1), true));
        // A few clients: at once.
        assert_eq!(first.try_recv().expect("sent at once").seq, Seq::from(1));
        let mut crowd: Vec<_> = (1..CROWD_FANOUT).map(|_| feed.subscribe()).collect();
        // Spread over every channel, and counted over all of them.
        assert!(feed.tx.iter().all(|tx| {
            tx.get()
                .is_some_and(|tx| tx.receiver_count() >= CROWD_FANOUT / SHARDS)
        }));
        assert_eq!(feed.clients(), CROWD_FANOUT);
        feed.push(event(Seq::from(2), true));
        feed.push(event(Seq::from(2), false));
        feed.push(event(Seq::from(3), true));
        assert!(
            first.try_recv().is_err(),
            "a crowd's events wait for the sweep"
        );
        // Not in the ring either: a client joining now is not told of them twice.
        assert_eq!(seqs(feed.since(Seq::from(1))), Some(vec![]));
        feed.release_paced();
        // In one send: a client woken by it has all three to write at once.
        assert_eq!(first.rx.len(), 1, "one batch");
        for rx in std::iter::once(&mut first).chain(crowd.iter_mut()) {
            let got: Vec<(i64, bool)> = std::iter::from_fn(|| rx.try_recv().ok())
                .map(|e| (e.seq.get(), e.change))
                .collect();
            assert_eq!(got, vec![(2, true), (2, false), (3, true)]);
        }
        assert_eq!(seqs(feed.since(Seq::from(1))), Some(vec![2, 3]));
        // The crowd leaves: events go out at once again.
        drop(crowd);
        feed.push(event(Seq::from(4), true));
        assert_eq!(first.try_recv().expect("sent at once").seq, Seq::from(4));
    }

    #[tokio::test]
    async fn a_smaller_crowd_of_a_busy_feed_is_paced_too() {
        let feed = Feed::new(RoundId::from(1), 0);
        let mut clients: Vec<_> = (0..PACE_MIN).map(|_| feed.subscribe()).collect();
        let seqs_of = |rx: &mut Receiver| -> Vec<i64> {
            std::iter::from_fn(|| rx.try_recv().ok())
                .filter(|e| !e.arbiters)
                .map(|e| e.seq.get())
                .collect()
        };
        // 2000 clients, 2 events in the last second: 4,000 writes a second, at once.
        for seq in 1..=2 {
            feed.push(event(Seq::from(seq), true));
        }
        feed.release_paced();
        feed.push(event(Seq::from(3), true));
        assert_eq!(
            clients[0].try_recv().expect("sent at once").seq,
            Seq::from(1)
        );
        // 19 in the last second (and e-board news, which only the console writes): 38,000
        // writes, still at once.
        for seq in 4..=19 {
            feed.push(event(Seq::from(seq), true));
        }
        let mut news = Event::new(
            RoundId::from(1),
            Some(GameId::from(7)),
            Seq::from(19),
            &ServerMessage::Heartbeat { at_ms: 0 },
        );
        news.arbiters = true;
        news.change = false;
        feed.push(Arc::new(news));
        feed.release_paced();
        feed.push(event(Seq::from(20), true));
        assert!(feed.paced.lock().is_empty());
        // 21 (42,000 writes): paced from then on.
        feed.push(event(Seq::from(21), true));
        feed.release_paced();
        feed.push(event(Seq::from(22), true));
        assert_eq!(
            seqs_of(&mut clients[0]),
            (2..=21).collect::<Vec<_>>(),
            "22 waits for the sweep"
        );
        feed.release_paced();
        assert_eq!(
            clients[0].try_recv().expect("at the sweep").seq,
            Seq::from(22)
        );
        // A quiet second later the feed goes out at once again.
        for _ in 0..4 {
            feed.release_paced();
        }
        feed.push(event(Seq::from(23), true));
        assert_eq!(
            clients[0].try_recv().expect("sent at once").seq,
            Seq::from(23)
        );
        // Fewer than PACE_MIN clients: at once however busy.
        clients.truncate(PACE_MIN - 1);
        for seq in 24..=103 {
            feed.push(event(Seq::from(seq), true));
        }
        feed.release_paced();
        feed.push(event(Seq::from(104), true));
        assert_eq!(seqs_of(&mut clients[1]), (1..=104).collect::<Vec<_>>());
    }

    fn press(seq: Seq, game: GameId) -> Arc<Event> {
        let m = ServerMessage::MoveClock {
            seq,
            game_id: game,
            ply: 3,
            clk_ms: Some(60_000),
            emt_ms: Some(2_000),
            clock: None,
        };
        Arc::new(Event::new(RoundId::from(1), Some(game), seq, &m))
    }

    #[tokio::test]
    async fn a_lever_press_rides_on_the_next_change_or_goes_alone_after_a_second() {
        let feed = Feed::new(RoundId::from(1), 0);
        let mut rx = feed.subscribe();
        feed.push(press(Seq::from(5), GameId::from(7)));
        feed.push(event(Seq::from(5), false));
        // Held: only the running-clock event went out.
        assert!(!rx.recv().await.expect("an event").change);
        assert!(rx.try_recv().is_err());
        feed.push(event(Seq::from(6), true));
        let carrier = rx.recv().await.expect("an event");
        assert_eq!((carrier.seq.get(), carrier.presses.len()), (6, 1));
        let v: serde_json::Value = serde_json::from_str(carrier.text.json()).expect("JSON");
        assert_eq!(v["presses"][0]["type"], "move_clock");
        assert_eq!(v["presses"][0]["seq"], 5);
        assert_eq!(carrier.press_texts[0].0, GameId::from(7));
        // The ring holds what went out: the carrier, not the press alone.
        assert_eq!(seqs(feed.since(Seq::from(4))), Some(vec![6]));

        feed.push(press(Seq::from(7), GameId::from(7)));
        feed.release_due(now_ms());
        assert!(rx.try_recv().is_err(), "held for a second");
        feed.release_due(now_ms() + PRESS_HOLD_MS);
        let alone = rx.recv().await.expect("an event");
        assert_eq!((alone.seq.get(), alone.presses.len()), (7, 0));
        assert!(matches!(alone.message, ServerMessage::MoveClock { .. }));
    }
}
