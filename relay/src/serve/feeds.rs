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

use super::api::{ApiError, game_view_at, round_view_at};
use super::live::{Event, Pending, Shared, change_message, now_ms};
use super::views::{GameView, RoundView};
use super::wire::{Frame, ServerMessage, game_snapshot, round_snapshot};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// Batches of events a client may be behind before it is started again from a snapshot.
const CHANNEL_CAPACITY: usize = 1024;
/// Change events each feed keeps for clients joining or coming back.
const RECENT: usize = 2048;
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
fn until_next_sweep(now_ms: i64) -> Duration {
    let sweep = SWEEP.as_millis() as i64;
    Duration::from_millis((sweep - now_ms.rem_euclid(sweep)) as u64)
}

/// Events sent together (never none).
type Batch = Arc<Vec<Arc<Event>>>;

/// A client's end of a feed: the events of each batch one by one, in order. A lag counts
/// batches.
pub struct Receiver {
    rx: broadcast::Receiver<Batch>,
    batch: Batch,
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
            self.batch = self.rx.recv().await?;
            self.next = 0;
        }
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Result<Arc<Event>, TryRecvError> {
        loop {
            if let Some(e) = self.take() {
                return Ok(e);
            }
            self.batch = self.rx.try_recv()?;
            self.next = 0;
        }
    }

    fn take(&mut self) -> Option<Arc<Event>> {
        let e = self.batch.get(self.next)?.clone();
        self.next += 1;
        Some(e)
    }
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("waiting", &(self.batch.len() - self.next))
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

/// A delay line passes on one running-clock message per game this often (a page counts the
/// seconds between them itself).
const HELD_CLOCK_EVERY_MS: i64 = 10_000;

#[derive(Clone, Debug)]
struct Snap {
    seq: i64,
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
struct View {
    round: Option<RoundView>,
    /// The spectators' snapshot (each game with its last move).
    summary: Option<Snap>,
    /// Every move of every game (the console, arbiters, `?moves=all`).
    full: Option<Snap>,
    /// Game pages' snapshots at the view's change number.
    games: HashMap<i64, Snap>,
}

/// One round with one delay, as its spectators follow it.
#[derive(Debug)]
pub struct Feed {
    pub round: i64,
    pub delay_ms: i64,
    /// Events go out in batches: one each, or a crowd's paced events together (see
    /// [`Receiver`]).
    ///
    /// The clients are spread over [`SHARDS`] channels, each sent every batch: a client
    /// going back to wait for the next batch takes its channel's lock, and thousands of
    /// clients on one channel woken together by a sweep queued for that one lock on both
    /// cores (`perf record` of `sched_yield` at 19,000 spectators: 75% in the channel's
    /// `recv`).
    tx: Vec<broadcast::Sender<Batch>>,
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
}

/// Which snapshot a client asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotOf {
    /// The round, each game with its last move: what spectators get.
    Summary,
    /// The round with every move.
    Full,
    /// One game with every move.
    Game(i64),
}

impl Feed {
    fn new(round: i64, delay_ms: i64) -> Feed {
        Feed {
            round,
            delay_ms,
            tx: (0..SHARDS)
                .map(|_| broadcast::channel(CHANNEL_CAPACITY).0)
                .collect(),
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
        }
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
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
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
        let mut paced = self.paced.lock().unwrap_or_else(|e| e.into_inner());
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
        for tx in &self.tx {
            let _ = tx.send(batch.clone());
        }
    }

    /// How many clients follow the feed.
    fn clients(&self) -> usize {
        self.tx.iter().map(|tx| tx.receiver_count()).sum()
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
            let mut by_sweep = self
                .passed_by_sweep
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            by_sweep.push_back(self.passed.swap(0, Ordering::Relaxed));
            let per_second = (1000 / SWEEP.as_millis()) as usize;
            while by_sweep.len() > per_second {
                by_sweep.pop_front();
            }
            self.per_sec.store(by_sweep.iter().sum(), Ordering::Relaxed);
        }
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let due = std::mem::take(&mut *self.paced.lock().unwrap_or_else(|e| e.into_inner()));
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
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let due: Vec<Arc<Event>> = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
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
            self.last_seq.fetch_max(e.seq, Ordering::Relaxed);
            if recent.len() >= RECENT {
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
        let _held = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        Receiver {
            rx: self.tx[self.next_shard.fetch_add(1, Ordering::Relaxed) % SHARDS].subscribe(),
            batch: Arc::new(Vec::new()),
            next: 0,
        }
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
            seq <= self.last_seq.load(Ordering::Relaxed) && first.first_seq() <= seq + 1
        })
    }

    /// Makes sure the feed holds its round's view: read from the store the first time (and
    /// after an arbiter's edit of the round), as of the feed's delay.
    async fn ensure_view(&self, s: &Shared) -> Result<(), ApiError> {
        if self.lock_view().round.is_some() {
            return Ok(());
        }
        let cutoff = (self.delay_ms > 0).then(|| now_ms() - self.delay_ms);
        let mut built = round_view_at(s, self.round, cutoff).await?;
        // Changes pushed while the store was read are in the ring: applied, the view misses
        // nothing (those it already has are skipped by their numbers).
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
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

    fn lock_view(&self) -> std::sync::MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A snapshot of this feed's view, with its change number, from memory.
    pub async fn snapshot(&self, s: &Shared, of: SnapshotOf) -> Result<(i64, Parts), ApiError> {
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
        self.ensure_view(s).await?;
        s.metrics.ws_snapshots.fetch_add(1, Ordering::Relaxed);
        // Copied under the lock, encoded outside it: the writer's pushes do not wait.
        enum Copy {
            Round(RoundView),
            Game(Box<GameView>),
        }
        let (seq, copy) = {
            let view = self.lock_view();
            let Some(round) = view.round.as_ref() else {
                return Err(ApiError::bad("the round view is not ready"));
            };
            let copy = match of {
                SnapshotOf::Summary => Copy::Round(round.summary()),
                SnapshotOf::Full => Copy::Round(round.clone()),
                SnapshotOf::Game(id) => match round.game(id) {
                    Some(g) => Copy::Game(Box::new(g.clone())),
                    None => {
                        return Err(ApiError(
                            axum::http::StatusCode::NOT_FOUND,
                            format!("game {id} is not in round {}", self.round),
                        ));
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
    fn cached(&self, of: SnapshotOf, crowd: bool) -> Option<(i64, Parts)> {
        let recent = crowd.then(|| self.recent.lock().unwrap_or_else(|e| e.into_inner()));
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
    fn forget_view(&self) {
        *self.lock_view() = View::default();
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
    /// Links the feeds to their service and starts the sweep that lets out crowds' paced
    /// events and held presses (call once, on the runtime). The sweep is a task on the shared
    /// runtime on purpose: when the runtime is overloaded it comes round less often, and a
    /// crowd's events then go out in fewer, larger fan-outs.
    ///
    /// Sweeps fall on the wall clock's multiples of [`SWEEP`], so relays sharing one database
    /// (each serving its share of one audience) let out what they have at the same moments,
    /// as a bare broadcast server's ticks do.
    pub fn attach(&self, shared: &Arc<Shared>) {
        *self.shared.lock().unwrap_or_else(|e| e.into_inner()) = Arc::downgrade(shared);
        let weak = Arc::downgrade(shared);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(until_next_sweep(now_ms())).await;
                let Some(s) = weak.upgrade() else { return };
                let now = now_ms();
                for f in s.feeds.all() {
                    f.release_paced();
                    f.release_due(now);
                }
            }
        });
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

    /// Every feed there is now.
    fn all(&self) -> Vec<Arc<Feed>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The rounds that have feeds.
    pub fn rounds(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self
            .map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .map(|(round, _)| *round)
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// The round a game is in, when a feed's view holds it.
    pub fn round_of(&self, game: i64) -> Option<i64> {
        self.all().iter().find_map(|f| {
            f.lock_view()
                .round
                .as_ref()
                .and_then(|r| r.game(game).map(|g| g.round_id))
        })
    }

    /// Views are read from the store again (after an arbiter's edit of rounds or
    /// tournaments, which the feeds' messages do not carry).
    pub fn forget_views(&self) {
        for f in self.all() {
            f.forget_view();
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
    /// Lever presses the event carried.
    presses: Vec<ServerMessage>,
}

/// Holds the live feed's events for the feed's delay and passes them on, re-stamping running
/// clocks and keeping one clock message per game every 10 s. It starts with the changes of
/// the last `delay` from the store, so the delayed view has no gap.
async fn delay_line(s: Arc<Shared>, feed: Arc<Feed>, mut rx: Receiver) {
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
                    held.push_back(Held {
                        due_ms: e.at_ms + delay,
                        seq: e.seq,
                        game: e.game_id,
                        change: e.change,
                        message: Pending::Message(Box::new(e.message.delayed(delay))),
                        presses: e.presses.iter().map(|p| p.delayed(delay)).collect(),
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
                    let message = match h.message {
                        Pending::Message(m) => *m,
                        // A game replaced wholesale is shown as it stood at its moment.
                        Pending::Game { seq, game } => {
                            match game_view_at(&s, game, Some(now_ms() - delay)).await {
                                Ok(v) => ServerMessage::Game { seq, game: Box::new(v) },
                                Err(_) => continue,
                            }
                        }
                    };
                    let mut e = Event::new(feed.round, h.game, h.seq, &message);
                    e.change = h.change;
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
                    presses: Vec::new(),
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

    #[tokio::test]
    async fn a_crowd_gets_its_events_together_at_the_sweep() {
        let feed = Feed::new(1, 0);
        let mut first = feed.subscribe();
        feed.push(event(1, true));
        // A few clients: at once.
        assert_eq!(first.try_recv().expect("sent at once").seq, 1);
        let mut crowd: Vec<_> = (1..CROWD_FANOUT).map(|_| feed.subscribe()).collect();
        // Spread over every channel, and counted over all of them.
        assert!(
            feed.tx
                .iter()
                .all(|tx| tx.receiver_count() >= CROWD_FANOUT / SHARDS)
        );
        assert_eq!(feed.clients(), CROWD_FANOUT);
        feed.push(event(2, true));
        feed.push(event(2, false));
        feed.push(event(3, true));
        assert!(
            first.try_recv().is_err(),
            "a crowd's events wait for the sweep"
        );
        // Not in the ring either: a client joining now is not told of them twice.
        assert_eq!(seqs(feed.since(1)), Some(vec![]));
        feed.release_paced();
        // In one send: a client woken by it has all three to write at once.
        assert_eq!(first.rx.len(), 1, "one batch");
        for rx in std::iter::once(&mut first).chain(crowd.iter_mut()) {
            let got: Vec<(i64, bool)> = std::iter::from_fn(|| rx.try_recv().ok())
                .map(|e| (e.seq, e.change))
                .collect();
            assert_eq!(got, vec![(2, true), (2, false), (3, true)]);
        }
        assert_eq!(seqs(feed.since(1)), Some(vec![2, 3]));
        // The crowd leaves: events go out at once again.
        drop(crowd);
        feed.push(event(4, true));
        assert_eq!(first.try_recv().expect("sent at once").seq, 4);
    }

    #[tokio::test]
    async fn a_smaller_crowd_of_a_busy_feed_is_paced_too() {
        let feed = Feed::new(1, 0);
        let mut clients: Vec<_> = (0..PACE_MIN).map(|_| feed.subscribe()).collect();
        let seqs_of = |rx: &mut Receiver| -> Vec<i64> {
            std::iter::from_fn(|| rx.try_recv().ok())
                .filter(|e| !e.arbiters)
                .map(|e| e.seq)
                .collect()
        };
        // 2000 clients, 2 events in the last second: 4,000 writes a second, at once.
        for seq in 1..=2 {
            feed.push(event(seq, true));
        }
        feed.release_paced();
        feed.push(event(3, true));
        assert_eq!(clients[0].try_recv().expect("sent at once").seq, 1);
        // 19 in the last second (and e-board news, which only the console writes): 38,000
        // writes, still at once.
        for seq in 4..=19 {
            feed.push(event(seq, true));
        }
        let mut news = Event::new(1, Some(7), 19, &ServerMessage::Heartbeat { at_ms: 0 });
        news.arbiters = true;
        news.change = false;
        feed.push(Arc::new(news));
        feed.release_paced();
        feed.push(event(20, true));
        assert!(feed.paced.lock().expect("lock").is_empty());
        // 21 (42,000 writes): paced from then on.
        feed.push(event(21, true));
        feed.release_paced();
        feed.push(event(22, true));
        assert_eq!(
            seqs_of(&mut clients[0]),
            (2..=21).collect::<Vec<_>>(),
            "22 waits for the sweep"
        );
        feed.release_paced();
        assert_eq!(clients[0].try_recv().expect("at the sweep").seq, 22);
        // A quiet second later the feed goes out at once again.
        for _ in 0..4 {
            feed.release_paced();
        }
        feed.push(event(23, true));
        assert_eq!(clients[0].try_recv().expect("sent at once").seq, 23);
        // Fewer than PACE_MIN clients: at once however busy.
        clients.truncate(PACE_MIN - 1);
        for seq in 24..=103 {
            feed.push(event(seq, true));
        }
        feed.release_paced();
        feed.push(event(104, true));
        assert_eq!(seqs_of(&mut clients[1]), (1..=104).collect::<Vec<_>>());
    }

    fn press(seq: i64, game: i64) -> Arc<Event> {
        let m = ServerMessage::MoveClock {
            seq,
            game_id: game,
            ply: 3,
            clk_ms: Some(60_000),
            emt_ms: Some(2_000),
            clock: None,
        };
        Arc::new(Event::new(1, Some(game), seq, &m))
    }

    #[tokio::test]
    async fn a_lever_press_rides_on_the_next_change_or_goes_alone_after_a_second() {
        let feed = Feed::new(1, 0);
        let mut rx = feed.subscribe();
        feed.push(press(5, 7));
        feed.push(event(5, false));
        // Held: only the running-clock event went out.
        assert!(!rx.recv().await.expect("an event").change);
        assert!(rx.try_recv().is_err());
        feed.push(event(6, true));
        let carrier = rx.recv().await.expect("an event");
        assert_eq!((carrier.seq, carrier.presses.len()), (6, 1));
        let v: serde_json::Value = serde_json::from_str(carrier.text.json()).expect("JSON");
        assert_eq!(v["presses"][0]["type"], "move_clock");
        assert_eq!(v["presses"][0]["seq"], 5);
        assert_eq!(carrier.press_texts[0].0, 7);
        // The ring holds what went out: the carrier, not the press alone.
        assert_eq!(seqs(feed.since(4)), Some(vec![6]));

        feed.push(press(7, 7));
        feed.release_due(now_ms());
        assert!(rx.try_recv().is_err(), "held for a second");
        feed.release_due(now_ms() + PRESS_HOLD_MS);
        let alone = rx.recv().await.expect("an event");
        assert_eq!((alone.seq, alone.presses.len()), (7, 0));
        assert!(matches!(alone.message, ServerMessage::MoveClock { .. }));
    }
}
