//! The writer: the one place that changes games in the store, and the one that announces
//! changes. Jobs arrive in order from the hall and the arbiter routes; each is committed, then
//! published. When the database does not answer, the job is retried (with the queue behind it
//! kept in memory, readings still being taken) and `/health` says so; nothing is dropped and
//! nothing is announced before it is stored.
//!
//! Games are written by difference: the hall sends the recorder's whole game (a [`Snapshot`]),
//! and the writer stores what differs from what it stored last. A retried job therefore never
//! writes a move twice, and a move the store refuses as already there (a commit whose answer
//! was lost) only makes the writer read the game back and carry on.

use super::events::Event;
use super::health::{Health, Metrics};
use super::instance::instance_name;
use super::jobs::{
    EditAction, GameEdit, HallCommand, Job, Resume, Snapshot, ToHall, parse_orientation,
};
use super::live::Boards;
use super::publish::Publisher;
use super::views::{ClockView, EboardView, GameClock, game_view};
use super::wire::ServerMessage;
use relay_store::{Op, RawEntry, RoundInfo, Store, StoreError, StoredMove, now_ms};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long readings with no move among them wait for more before they are committed.
const READINGS_LINGER: Duration = Duration::from_millis(100);

/// How long the clock of a move already announced (its lever press, seen after the move was
/// judged) waits for company before it is committed. With 1000 boards another board's move
/// comes within about 10 ms and the two share one commit: a separate commit for each move's
/// clock was a third of all commits. A press shown 50 ms later is still well within the
/// second that clocks display.
const MOVE_CLOCK_LINGER: Duration = Duration::from_millis(50);

/// How often the round's running-clock readings are announced (see [`Writer::run`]).
const CLOCK_READINGS_EVERY: Duration = Duration::from_secs(10);
/// Running clocks per `clocks` message (about 95 bytes each: a message stays under 4 KiB).
const CLOCKS_PER_MESSAGE: usize = 40;

/// What a group commit holds: the black-box readings, the ops of the board games planned
/// into it, and what is done after the commit, in the order the jobs came.
#[derive(Default)]
struct Group {
    raws: Vec<RawEntry>,
    ops: Vec<Op>,
    /// Each board's stored game as it will be once the group is committed.
    shadows: HashMap<String, Slot>,
    after: Vec<After>,
}

enum After {
    /// A board's game planned into the group; `ops` are its indexes in the group's ops.
    Sync {
        snap: Box<Snapshot>,
        game: i64,
        round: i64,
        ops: Vec<usize>,
    },
    /// A job that only needs the group committed before it (running clocks, e-board news).
    Job(Job),
}

/// Where an e-board's game is stored, and what the store has of it.
#[derive(Debug, Clone)]
pub struct Slot {
    pub game_id: i64,
    pub round_id: i64,
    pub board_no: u32,
    pub game_no: u64,
    pub moves: Vec<StoredMove>,
    pub result: String,
    /// pending, live, finished (by the board) or confirmed (by an arbiter).
    pub status: String,
    pub orientation: Option<String>,
    /// Where the stored game starts (`None`: the standard position).
    pub start_fen: Option<String>,
}

/// The parts of the service the writer tells what it stored.
#[derive(Clone, Debug)]
pub struct Handles {
    pub publisher: Publisher,
    pub boards: Arc<Boards>,
    pub health: Arc<Health>,
    pub metrics: Arc<Metrics>,
    /// The hall, for the games its recorders carry on from (another relay's edit, a port
    /// taken over).
    pub hall: ToHall,
}

pub struct Writer {
    shared: Handles,
    /// The writer's own connections (separate from the readers').
    store: relay_store::Store,
    /// Its connection for group commits on a SQLite file, called on this thread (see
    /// `relay_store::SqliteCommits`); `None`: they go through `store`.
    commits: Option<relay_store::SqliteCommits>,
    slots: HashMap<String, Slot>,
    current: RoundInfo,
    /// Latest change number per round (clock and e-board messages carry it).
    seqs: HashMap<i64, i64>,
    backoff: Duration,
    jobs: mpsc::UnboundedReceiver<Job>,
    /// Jobs taken from the queue and not done yet.
    in_hand: usize,
    /// Running-clock readings waiting to be announced together, per round and game.
    bundled: HashMap<i64, std::collections::BTreeMap<i64, ClockView>>,
    /// Boards whose recorder is taking another relay's edit of their game: what the hall
    /// sends before it has (built on the game as it was) is not stored.
    adopting: std::collections::HashSet<String>,
}

/// An arbiter's change committed with its guard: refused when the game's edit count is no
/// longer the one the change was made on. Returns the change's number.
async fn guarded(store: &relay_store::Store, edit: &GameEdit, op: Op) -> Result<i64, StoreError> {
    let game = op.game();
    let ops = match edit.edits {
        Some(edits) => vec![Op::Guard { game, edits }, op],
        None => vec![op],
    };
    store
        .commit(&[], &ops)
        .await?
        .last()
        .copied()
        .flatten()
        .ok_or_else(|| StoreError::Conflict(format!("game {game}: the change was not stored")))
}

/// Whether the board plays the stored game from the same position: the same game, the same
/// start, and no orientation newly known (anything else needs the store first).
fn same_game(slot: &Slot, snap: &Snapshot) -> bool {
    slot.game_no == snap.game_no
        && slot.start_fen == snap.start_fen
        && !(slot.orientation.is_none() && snap.orientation.is_some())
}

/// How many of the stored game's first moves the board's game still has.
fn moves_in_common(slot: &Slot, snap: &Snapshot) -> usize {
    slot.moves
        .iter()
        .zip(&snap.moves)
        .take_while(|(a, b)| a.uci == b.uci)
        .count()
}

/// Whether the board's game differs from the stored one only in the clocks of its moves: the
/// same game, the same moves and the same result.
fn only_clocks(slot: &Slot, snap: &Snapshot) -> bool {
    same_game(slot, snap)
        && slot.result == snap.result
        && slot.moves.len() == snap.moves.len()
        && moves_in_common(slot, snap) == slot.moves.len()
}

fn transient(e: &StoreError) -> bool {
    e.is_transient()
}

impl Writer {
    pub fn new(
        shared: Handles,
        store: relay_store::Store,
        commits: Option<relay_store::SqliteCommits>,
        current: RoundInfo,
        slots: HashMap<String, Slot>,
        jobs: mpsc::UnboundedReceiver<Job>,
    ) -> Writer {
        let mut w = Writer {
            shared,
            store,
            commits,
            slots: HashMap::new(),
            seqs: HashMap::new(),
            current,
            backoff: Duration::from_millis(100),
            jobs,
            in_hand: 0,
            bundled: HashMap::new(),
            adopting: Default::default(),
        };
        for (serial, slot) in slots {
            w.bind(&serial, slot);
        }
        w
    }

    fn bind(&mut self, serial: &str, slot: Slot) {
        self.shared.boards.bind(
            serial,
            slot.game_id,
            slot.game_no,
            slot.board_no,
            slot.round_id,
        );
        self.slots.insert(serial.to_string(), slot);
        if let Some(view) = self.shared.boards.eboard(serial) {
            self.share_eboard(&view);
        }
    }

    /// Relays that read no boards show the e-boards this one reads (they read their states
    /// from the store; PostgreSQL only). Not worth holding the queue for: news of a board is
    /// rare, and a newer state is never overwritten by an older one.
    fn share_eboard(&self, view: &EboardView) {
        if !matches!(self.store, Store::Postgres(_)) || view.read_by != instance_name() {
            return;
        }
        let (store, serial) = (self.store.clone(), view.serial.clone());
        let text = serde_json::to_string(view).unwrap_or_default();
        let at = now_ms();
        tokio::spawn(async move {
            if let Err(e) = store.put_eboard_live(&serial, &text, at).await {
                tracing::debug!(%serial, error = %e, "e-board state not shared");
            }
        });
    }

    fn note_pending(&self) {
        self.shared
            .health
            .pending_writes
            .store((self.jobs.len() + self.in_hand) as u64, Ordering::Relaxed);
    }

    /// Announces the bundled clock readings, one message per round.
    fn announce_clocks(&mut self) {
        for (round, clocks) in std::mem::take(&mut self.bundled) {
            if clocks.is_empty() {
                continue;
            }
            let seq = self.seq(round);
            let mut all: Vec<(i64, ClockView)> = clocks.into_iter().collect();
            all.sort_unstable_by_key(|(g, _)| *g);
            // In messages of a few KiB: every socket's write buffer keeps the size of the
            // largest message it sent, and a 1000-board round's clocks in one were 95 KiB.
            for list in all.chunks(CLOCKS_PER_MESSAGE) {
                let body = ServerMessage::Clocks {
                    seq,
                    clocks: list
                        .iter()
                        .map(|(g, c)| GameClock {
                            game_id: *g,
                            clock: *c,
                        })
                        .collect(),
                };
                let mut e = Event::new(round, None, seq, &body);
                e.change = false;
                self.shared.publisher.publish(e);
            }
        }
    }

    pub async fn run(mut self) {
        // Running-clock readings go out every 10 s (the latest of each game): pages count the
        // running clock down themselves from the last reading, and lever presses go out at
        // once. Every second, a 200-board round's bundle was most of each spectator's bytes.
        let mut tick = tokio::time::interval(CLOCK_READINGS_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let first = tokio::select! {
                j = self.jobs.recv() => match j {
                    Some(j) => j,
                    None => break,
                },
                _ = tick.tick() => {
                    self.announce_clocks();
                    continue;
                }
            };
            // Readings, and the clocks of moves already announced, may wait a little for
            // company: one commit (one fsync) for many, instead of one each. A move, or
            // anything else that is news, ends the wait at once.
            let started = tokio::time::Instant::now();
            let mut wait = self.may_wait(&first);
            let mut batch = vec![first];
            while batch.len() < 2000 {
                let next = match (self.jobs.try_recv(), wait) {
                    (Ok(j), _) => j,
                    (Err(_), None) => break,
                    (Err(_), Some(w)) => {
                        match tokio::time::timeout_at(started + w, self.jobs.recv()).await {
                            Ok(Some(j)) => j,
                            Ok(None) | Err(_) => break,
                        }
                    }
                };
                // The group waits as long as its most urgent job allows.
                wait = wait.zip(self.may_wait(&next)).map(|(a, b)| a.min(b));
                batch.push(next);
            }
            self.in_hand = batch.len();
            self.note_pending();
            // Group commit: the readings and the board games' changes of everything waiting go
            // to the store in one transaction (one fsync, however many boards), and are
            // announced after it. Jobs that need the store's answer before going on (a new
            // game, an arbiter's edit, an assignment) close the group first and run on their
            // own, in order.
            let mut group = Group::default();
            for job in batch {
                match job {
                    Job::Raws(mut e) => group.raws.append(&mut e),
                    Job::Sync(snap) if self.adopting.contains(&snap.serial) => {
                        tracing::debug!(serial = %snap.serial, "a change made before another relay's edit was adopted is not stored");
                    }
                    Job::Sync(snap) if self.plannable(&snap, &group) => self.plan(snap, &mut group),
                    Job::Clock { .. } | Job::Eboard(_) | Job::Touch { .. } => {
                        group.after.push(After::Job(job))
                    }
                    Job::Shutdown => {
                        self.flush(&mut group).await;
                        tracing::info!("everything read is stored");
                        return;
                    }
                    other => {
                        self.flush(&mut group).await;
                        self.apply(other).await;
                    }
                }
            }
            self.flush(&mut group).await;
            self.in_hand = 0;
            self.note_pending();
        }
    }

    /// How long the job may wait for others to share its commit (`None`: not at all).
    /// [`READINGS_LINGER`] for black-box readings and for clock readings that are only kept
    /// for the round's next bundle (a tick while the same side runs: about one a second per
    /// board, which made every commit's wait end at once with 1000 boards);
    /// [`MOVE_CLOCK_LINGER`] for a board's change that only adds clocks to moves already
    /// stored. Not moves, results, lever presses on their own or anything an arbiter waits for.
    fn may_wait(&self, job: &Job) -> Option<Duration> {
        match job {
            Job::Raws(_) | Job::Touch { .. } => Some(READINGS_LINGER),
            Job::Clock { serial, clock } => self
                .slots
                .get(serial)
                .is_none_or(|s| s.result != "*" || !self.side_changed(s.game_id, clock.running))
                .then_some(READINGS_LINGER),
            Job::Sync(snap) => self
                .slots
                .get(&snap.serial)
                .is_some_and(|slot| only_clocks(slot, snap))
                .then_some(MOVE_CLOCK_LINGER),
            _ => None,
        }
    }

    /// Whether a board's game can join a group commit: its stored game is known and is the
    /// [`same_game`].
    fn plannable(&self, snap: &Snapshot, group: &Group) -> bool {
        group
            .shadows
            .get(&snap.serial)
            .or_else(|| self.slots.get(&snap.serial))
            .is_some_and(|slot| same_game(slot, snap))
    }

    /// Adds what differs between the stored game and the board's to the group: moves no
    /// longer there, clocks now known, new moves, the result. The writer's picture of the
    /// stored game changes only when the group is committed.
    fn plan(&mut self, snap: Box<Snapshot>, group: &mut Group) {
        let Some(mut slot) = group
            .shadows
            .remove(&snap.serial)
            .or_else(|| self.slots.get(&snap.serial).cloned())
        else {
            return;
        };
        let (game, round) = (slot.game_id, slot.round_id);
        let mut mine = Vec::new();
        let mut add = |group: &mut Group, op: Op| {
            mine.push(group.ops.len());
            group.ops.push(op);
        };
        let same = moves_in_common(&slot, &snap);
        if slot.moves.len() > same {
            let from_ply = (same + 1) as u32;
            add(
                group,
                Op::Truncate {
                    game,
                    from_ply,
                    actor: "recorder".into(),
                    reason: "taken back or corrected on the board".into(),
                },
            );
            slot.moves.truncate(same);
        }
        for i in 0..same {
            let new = &snap.moves[i];
            let old = &mut slot.moves[i];
            if old.clk_ms != new.clk_ms || old.emt_ms != new.emt_ms {
                add(
                    group,
                    Op::MoveClock {
                        game,
                        ply: new.ply,
                        clk_ms: new.clk_ms,
                        emt_ms: new.emt_ms,
                    },
                );
                old.clk_ms = new.clk_ms;
                old.emt_ms = new.emt_ms;
            }
        }
        for m in &snap.moves[same..] {
            let mut m = m.clone();
            m.accepted_at_ms = m.accepted_at_ms.max(1);
            add(group, Op::Move { game, m: m.clone() });
            slot.moves.push(m);
        }
        // A result the board gave (mate, stalemate) is stored; one the board takes back (the
        // mating move corrected) is undone, but never a result an arbiter confirmed.
        let reopened = snap.result == "*" && slot.status == "finished";
        if snap.result != slot.result && (snap.result != "*" || reopened) {
            let status = if reopened { "live" } else { "finished" };
            add(
                group,
                Op::Result {
                    game,
                    result: snap.result.clone(),
                    termination: snap.termination.clone(),
                    status: status.into(),
                    actor: "recorder".into(),
                },
            );
            slot.result = snap.result.clone();
            slot.status = status.to_string();
        }
        group.shadows.insert(snap.serial.clone(), slot);
        group.after.push(After::Sync {
            snap,
            game,
            round,
            ops: mine,
        });
    }

    /// Commits the group (retrying while the store is down), then announces its changes and
    /// runs the jobs that waited for it, in order. When the store refuses the group (our
    /// picture of a stored game is off), each board's game goes through the careful one-by-one
    /// path instead, which reads the game back and tries again.
    async fn flush(&mut self, group: &mut Group) {
        let g = std::mem::take(group);
        if g.raws.is_empty() && g.ops.is_empty() && g.after.is_empty() {
            return;
        }
        let committed = loop {
            if g.raws.is_empty() && g.ops.is_empty() {
                break Some(Vec::new());
            }
            let started = std::time::Instant::now();
            // On a SQLite file, SQLite is called on this thread (it blocks for the commit,
            // about a millisecond with 1000 boards): no hand-off to sqlx's worker thread and
            // back for each statement.
            let res = match &mut self.commits {
                Some(c) => c.commit(&g.raws, &g.ops),
                None => self.store.commit(&g.raws, &g.ops).await,
            };
            match res {
                Ok(seqs) => {
                    let m = &self.shared.metrics;
                    m.group_commits.fetch_add(1, Ordering::Relaxed);
                    m.group_commit_us
                        .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
                    self.stored_ok();
                    break Some(seqs);
                }
                Err(e) if transient(&e) => self.store_failed(&e).await,
                Err(e) => {
                    tracing::warn!(error = %e, "group commit refused; storing its games one by one");
                    break None;
                }
            }
        };
        let Some(seqs) = committed else {
            let mut raws = g.raws;
            self.flush_raw(&mut raws).await;
            for a in g.after {
                match a {
                    After::Sync { snap, .. } => self.apply(Job::Sync(snap)).await,
                    After::Job(job) => self.apply(job).await,
                }
            }
            return;
        };
        self.shared
            .metrics
            .raw_logged
            .fetch_add(g.raws.len() as u64, Ordering::Relaxed);
        for job in self.announce(g.shadows, g.after, &g.ops, &seqs) {
            self.apply(job).await;
        }
    }

    /// After a group's commit: the writer's picture of the stored games moves on, each
    /// committed op is announced with its change number (`seqs`, by index in `ops`), and the
    /// jobs that waited run, in order. The clock reading that came with a board's change (its
    /// lever press) rides on the change's move or move-clock message when it has one.
    /// Returns the jobs that need the store (e-board touches), to be run next.
    #[must_use]
    fn announce(
        &mut self,
        shadows: HashMap<String, Slot>,
        after: Vec<After>,
        ops: &[Op],
        seqs: &[Option<i64>],
    ) -> Vec<Job> {
        let mut rest = Vec::new();
        for (serial, slot) in shadows {
            self.update_slot(&serial, &slot);
        }
        for a in after {
            let (snap, game, round, mine) = match a {
                After::Job(Job::Clock { serial, clock }) => {
                    self.clock_reading(&serial, clock, true);
                    continue;
                }
                After::Job(Job::Eboard(view)) => {
                    self.eboard_news(view);
                    continue;
                }
                After::Job(job) => {
                    rest.push(job);
                    continue;
                }
                After::Sync {
                    snap,
                    game,
                    round,
                    ops: mine,
                } => (snap, game, round, mine),
            };
            let carried = mine
                .iter()
                .any(|&i| matches!(ops.get(i), Some(Op::Move { .. } | Op::MoveClock { .. })));
            let mut ride = snap
                .press
                .and_then(|press| self.press_with(&snap.serial, game, press, carried));
            for i in mine {
                let (Some(seq), Some(op)) = (seqs.get(i).copied().flatten(), ops.get(i)) else {
                    continue;
                };
                self.committed(round, seq);
                let Some(mut message) = ServerMessage::from_change(seq, game, op.record()) else {
                    continue;
                };
                match &mut message {
                    ServerMessage::Move {
                        read_at_ms, clock, ..
                    } => {
                        self.shared
                            .metrics
                            .moves_committed
                            .fetch_add(1, Ordering::Relaxed);
                        *read_at_ms = Some(snap.read_at_ms);
                        *clock = ride.take();
                    }
                    ServerMessage::MoveClock { clock, .. } => *clock = ride.take(),
                    _ => {}
                }
                self.shared
                    .publisher
                    .publish(Event::new(round, Some(game), seq, &message));
            }
        }
        rest
    }

    /// Takes the clock reading that came with a board's change: kept as its game's clock, and
    /// a lever press is returned to ride on the change's message when it has one to ride on
    /// (`carried`), else announced on its own.
    fn press_with(
        &mut self,
        serial: &str,
        game: i64,
        press: ClockView,
        carried: bool,
    ) -> Option<ClockView> {
        let side_changed = self.side_changed(game, press.running);
        self.clock_reading(serial, press, !carried);
        (carried && side_changed && self.slots.get(serial).is_some_and(|s| s.result == "*"))
            .then_some(press)
    }

    fn stored_ok(&mut self) {
        let h = &self.shared.health;
        if !h.store_ok.swap(true, Ordering::Relaxed) {
            tracing::info!("the database answers again");
        }
        h.store_down_since_ms.store(0, Ordering::Relaxed);
        self.backoff = Duration::from_millis(100);
    }

    async fn store_failed(&mut self, e: &StoreError) {
        let h = &self.shared.health;
        self.shared
            .metrics
            .store_errors
            .fetch_add(1, Ordering::Relaxed);
        if h.store_ok.swap(false, Ordering::Relaxed) {
            tracing::error!(error = %e, "the database does not answer; readings are kept and writes retried");
        }
        let _ = h.store_down_since_ms.compare_exchange(
            0,
            now_ms(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        *h.last_store_error.lock() = Some(e.to_string());
        self.note_pending();
        tokio::time::sleep(self.backoff).await;
        self.backoff = (self.backoff * 2).min(Duration::from_secs(5));
    }

    async fn flush_raw(&mut self, raws: &mut Vec<RawEntry>) {
        if raws.is_empty() {
            return;
        }
        loop {
            match self.store.log_raw(raws).await {
                Ok(()) => break,
                Err(e) if transient(&e) => self.store_failed(&e).await,
                Err(e) => {
                    tracing::error!(error = %e, "raw board messages could not be logged");
                    break;
                }
            }
        }
        self.stored_ok();
        self.shared
            .metrics
            .raw_logged
            .fetch_add(raws.len() as u64, Ordering::Relaxed);
        raws.clear();
    }

    /// Takes a reading of an e-board's clock: kept as its game's running clock, bundled into
    /// the round's next `clocks` message when the same side runs on, and announced on its own
    /// (when `announce`) when the side to move changed. Nothing for a game with a result: what
    /// the clock shows then (set up for the next game, or the loser's still running) is not
    /// this game's.
    fn clock_reading(&mut self, serial: &str, clock: ClockView, announce: bool) {
        let Some(slot) = self.slots.get(serial) else {
            return;
        };
        if slot.result != "*" {
            return;
        }
        let (game, round) = (slot.game_id, slot.round_id);
        let side_changed = self.side_changed(game, clock.running);
        self.shared.boards.set_clock(game, clock);
        if !side_changed {
            // A reading while the same side runs: bundled with the round's other readings and
            // announced with them (one message, not one per board: a round of 200
            // boards would otherwise send 200 a second to every spectator).
            self.bundled.entry(round).or_default().insert(game, clock);
            return;
        }
        if let Some(b) = self.bundled.get_mut(&round) {
            b.remove(&game);
        }
        if !announce {
            return;
        }
        let seq = self.seq(round);
        let mut e = Event::new(
            round,
            Some(game),
            seq,
            &ServerMessage::Clock {
                seq,
                game_id: game,
                clock,
            },
        );
        e.change = false;
        e.at_ms = clock.at_ms;
        self.shared.publisher.publish(e);
    }

    /// An e-board's news: placed with its game, kept for `/api/eboards`, and announced to
    /// the clients that follow e-boards (the console).
    fn eboard_news(&mut self, mut view: EboardView) {
        let slot = self.slots.get(&view.serial);
        view.game_id = slot.map(|s| s.game_id);
        view.board_no = slot.map(|s| s.board_no);
        view.round_id = Some(slot.map_or(self.current.id, |s| s.round_id));
        self.share_eboard(&view);
        self.shared
            .publisher
            .announce_eboard(view, |round| self.seq(round));
    }

    /// Whether `running` is another side to move than the game's last reading.
    fn side_changed(&self, game: i64, running: Option<&'static str>) -> bool {
        self.shared
            .boards
            .clock(game)
            .is_none_or(|l| l.running != running)
    }

    async fn apply(&mut self, job: Job) {
        match job {
            Job::Raws(_) | Job::Shutdown => {}
            Job::Touch { serial, port } => {
                // Not worth holding the queue for: the next touch will do.
                if let Err(e) = self.store.touch_eboard(&serial, &port).await {
                    tracing::debug!(error = %e, "e-board last-seen not noted");
                }
            }
            Job::Sync(snap) => loop {
                match self.sync(&snap).await {
                    Ok(()) => {
                        self.stored_ok();
                        break;
                    }
                    Err(e) if transient(&e) => self.store_failed(&e).await,
                    Err(e) => {
                        // Our picture of the stored game is off (a commit whose answer was
                        // lost): read the same game again, tell clients what it holds, and
                        // try once more.
                        tracing::warn!(serial = %snap.serial, error = %e, "re-reading the stored game");
                        if let Err(e) = self.reload_slot(&snap.serial).await {
                            tracing::error!(serial = %snap.serial, error = %e, "stored game not readable");
                        }
                        if let Err(e) = self.sync(&snap).await {
                            tracing::error!(serial = %snap.serial, error = %e, "game not stored");
                        }
                        break;
                    }
                }
            },
            Job::Clock { serial, clock } => self.clock_reading(&serial, clock, true),
            Job::Eboard(view) => self.eboard_news(view),
            Job::Edit(edit) => {
                let result = loop {
                    match self.edit(&edit).await {
                        Ok(seq) => {
                            self.stored_ok();
                            break Ok(seq);
                        }
                        Err(e) if transient(&e) => self.store_failed(&e).await,
                        Err(e) => break Err(e.to_string()),
                    }
                };
                let _ = edit.reply.send(result);
            }
            Job::Foreign { game } => {
                if let Err(e) = self.foreign(game, false).await {
                    tracing::warn!(game, error = %e, "another relay's edit could not be read");
                }
            }
            Job::Adopted { serial } => {
                self.adopting.remove(&serial);
            }
            Job::Reload { keep, reply } => {
                let resume = self.reload(&keep).await;
                self.shared
                    .hall
                    .send(HallCommand::Resumed { resume, reply });
            }
            Job::Assign {
                round_id,
                board_no,
                serial,
                reply,
            } => {
                let result = loop {
                    match self.assign(round_id, board_no, &serial).await {
                        Ok(game) => {
                            self.stored_ok();
                            break Ok(game);
                        }
                        Err(e) if transient(&e) => self.store_failed(&e).await,
                        Err(e) => break Err(e.to_string()),
                    }
                };
                let _ = reply.send(result);
            }
        }
    }

    /// Every e-board's stored game but those of `keep`, read again (see `Job::Reload`);
    /// returns what their recorders resume from.
    async fn reload(&mut self, keep: &[String]) -> HashMap<String, Resume> {
        let (slots, mut resume) = loop {
            match load_carry(&self.store).await {
                Ok(c) => {
                    self.stored_ok();
                    break c;
                }
                Err(e) if transient(&e) => self.store_failed(&e).await,
                Err(e) => {
                    tracing::error!(error = %e, "stored games not readable for the take-over");
                    break Default::default();
                }
            }
        };
        self.slots.retain(|serial, _| keep.contains(serial));
        let mut out = HashMap::new();
        for (serial, slot) in slots {
            if self.slots.contains_key(&serial) {
                continue;
            }
            if let Some(r) = resume.remove(&serial) {
                out.insert(serial.clone(), r);
            }
            self.bind(&serial, slot);
        }
        out
    }

    /// The e-board whose stored game is `game`.
    fn serial_playing(&self, game: i64) -> Option<String> {
        self.slots
            .iter()
            .find(|(_, s)| s.game_id == game)
            .map(|(k, _)| k.clone())
    }

    /// A change to `game` committed by another relay: when one of our boards plays the game
    /// and the store no longer holds what we stored (an arbiter corrected it there), our
    /// picture takes the stored game and the board's recorder carries on from it.
    async fn foreign(&mut self, game: i64, force: bool) -> Result<(), StoreError> {
        let Some(serial) = self.serial_playing(game) else {
            return Ok(());
        };
        let g = self.store.game(game).await?;
        let Some(slot) = self.slots.get_mut(&serial) else {
            return Ok(());
        };
        let same_moves = slot.moves.len() == g.moves.len()
            && slot.moves.iter().zip(&g.moves).all(|(a, b)| a.uci == b.uci);
        if !force && same_moves && slot.result == g.result && slot.status == g.status {
            // Our own change, read back before we announced it.
            return Ok(());
        }
        tracing::info!(game, %serial, "another relay changed this board's game: the board carries on from the stored game");
        slot.moves = g.moves.clone();
        slot.result = g.result.clone();
        slot.status = g.status.clone();
        self.adopting.insert(serial.clone());
        if !self.shared.hall.send(HallCommand::Adopt {
            serial: serial.clone(),
            game_id: game,
            moves: g.moves,
            result: g.result,
        }) {
            self.adopting.remove(&serial);
        }
        Ok(())
    }

    /// Puts an e-board on a board: its moves go to that game from now on (the recorder's
    /// whole game is written there at its next change), and an e-board that was on the
    /// board is taken off it.
    async fn assign(&mut self, round: i64, board_no: u32, serial: &str) -> Result<i64, StoreError> {
        let store = self.store.clone();
        let (game, seq) = store.assign(round, board_no, serial, None).await?;
        self.committed(round, seq);
        store
            .audit(
                "arbiter",
                "assign",
                Some(game),
                &json!({"round": round, "board_no": board_no, "serial": serial}).to_string(),
            )
            .await?;
        self.slots
            .retain(|s, slot| s == serial || slot.game_id != game);
        let g = store.game(game).await?;
        let game_no = self.slots.get(serial).map_or(0, |s| s.game_no);
        self.bind(
            serial,
            Slot {
                game_id: game,
                round_id: round,
                board_no,
                game_no,
                moves: g.moves,
                result: g.result,
                status: g.status,
                orientation: g.orientation,
                start_fen: g.start_fen,
            },
        );
        if round > self.current.id {
            self.current = store.round(round).await?;
        }
        self.publish_game(game, seq, true).await?;
        Ok(game)
    }

    /// Reads an e-board's game back from the store (same game, same game number) and
    /// announces it whole.
    async fn reload_slot(&mut self, serial: &str) -> Result<(), StoreError> {
        let Some(mut slot) = self.slots.get(serial).cloned() else {
            return Ok(());
        };
        let g = self.store.game(slot.game_id).await?;
        slot.moves = g.moves;
        slot.result = g.result;
        slot.status = g.status;
        slot.orientation = g.orientation;
        slot.start_fen = g.start_fen;
        self.bind(serial, slot.clone());
        let seq = self.store.round(slot.round_id).await?.seq;
        self.publish_game(slot.game_id, seq, false).await
    }

    fn seq(&self, round: i64) -> i64 {
        self.seqs.get(&round).copied().unwrap_or(0)
    }

    fn committed(&mut self, round: i64, seq: i64) {
        let s = self.seqs.entry(round).or_insert(0);
        *s = (*s).max(seq);
        self.shared
            .metrics
            .changes_committed
            .fetch_add(1, Ordering::Relaxed);
    }

    async fn publish_game(&mut self, game: i64, seq: i64, fresh: bool) -> Result<(), StoreError> {
        let g = self.store.game(game).await?;
        let serial = self.shared.boards.eboard_on(game);
        let view = game_view(&g, None, serial.as_deref(), None);
        let mut e = Event::new(
            g.round_id,
            Some(game),
            seq,
            &ServerMessage::Game {
                seq,
                game: Box::new(view),
            },
        );
        // A game re-read after a surprise carries no new change number; it must reach
        // clients that already have that number.
        e.change = fresh;
        self.shared.publisher.publish(e);
        Ok(())
    }

    /// The stored game an e-board's moves go to: its assignment in the current round, else
    /// the next free board number there.
    async fn slot_for(&mut self, serial: &str, port: &str) -> Result<Slot, StoreError> {
        if let Some(s) = self.slots.get(serial) {
            return Ok(s.clone());
        }
        let store = self.store.clone();
        // An arbiter may have opened a new round or closed this one since.
        if let Some(r) = store.current_round().await? {
            self.current = r;
        }
        let round = self.current.id;
        let board_no = match store
            .assignments(round)
            .await?
            .into_iter()
            .find(|(_, s)| s == serial)
        {
            Some((b, _)) => b,
            None => store.free_board_no(round).await?,
        };
        let (game, seq) = store.assign(round, board_no, serial, Some(port)).await?;
        self.committed(round, seq);
        tracing::info!(%serial, board_no, round, "e-board placed on a board");
        let g = store.game(game).await?;
        let slot = Slot {
            game_id: game,
            round_id: round,
            board_no,
            game_no: 0,
            moves: g.moves,
            result: g.result,
            status: g.status,
            orientation: g.orientation,
            start_fen: g.start_fen,
        };
        self.bind(serial, slot.clone());
        self.publish_game(game, seq, true).await?;
        Ok(slot)
    }

    async fn sync(&mut self, snap: &Snapshot) -> Result<(), StoreError> {
        let store = self.store.clone();
        let mut slot = self.slot_for(&snap.serial, &snap.port).await?;
        if slot.game_no != snap.game_no {
            if !slot.moves.is_empty() || slot.result != "*" {
                // The board was set up again after a game: the new game is the next round's.
                let next = store.next_round(slot.round_id).await?;
                let taken = store.assignments(next.id).await?;
                let board_no = match taken.iter().find(|(_, s)| *s == snap.serial) {
                    Some((b, _)) => *b,
                    None if !taken.iter().any(|(b, _)| *b == slot.board_no) => slot.board_no,
                    None => store.free_board_no(next.id).await?,
                };
                let (game, seq) = store
                    .assign(next.id, board_no, &snap.serial, Some(&snap.port))
                    .await?;
                self.committed(next.id, seq);
                tracing::info!(serial = %snap.serial, round = %next.number, board_no, "new game on the e-board: next round");
                if next.id > self.current.id {
                    self.current = next.clone();
                }
                let g = store.game(game).await?;
                slot = Slot {
                    game_id: game,
                    round_id: next.id,
                    board_no,
                    game_no: snap.game_no,
                    moves: g.moves,
                    result: g.result,
                    status: g.status,
                    orientation: g.orientation,
                    start_fen: g.start_fen,
                };
            }
            let seq = store
                .start_game(
                    slot.game_id,
                    snap.start_fen.as_deref(),
                    snap.chess960,
                    snap.orientation,
                )
                .await?;
            self.committed(slot.round_id, seq);
            slot.game_no = snap.game_no;
            slot.orientation = snap.orientation.map(str::to_string);
            slot.start_fen = snap.start_fen.clone();
            self.bind(&snap.serial, slot.clone());
            self.publish_game(slot.game_id, seq, true).await?;
        } else if slot.start_fen != snap.start_fen
            || (slot.orientation.is_none() && snap.orientation.is_some())
        {
            if slot.start_fen != snap.start_fen && !slot.moves.is_empty() {
                // The game goes on from another position (an arbiter had it continue from
                // the board): its moves so far were from the old one.
                let seq = store
                    .truncate_moves(
                        slot.game_id,
                        1,
                        "recorder",
                        "the game continues from the position on the board",
                    )
                    .await?;
                self.committed(slot.round_id, seq);
                slot.moves.clear();
                self.update_slot(&snap.serial, &slot);
            }
            let seq = store
                .start_game(
                    slot.game_id,
                    snap.start_fen.as_deref(),
                    snap.chess960,
                    snap.orientation,
                )
                .await?;
            self.committed(slot.round_id, seq);
            slot.orientation = snap.orientation.map(str::to_string);
            slot.start_fen = snap.start_fen.clone();
            self.bind(&snap.serial, slot.clone());
            self.publish_game(slot.game_id, seq, true).await?;
        }
        // What differs from the stored game, as in a group commit of this one game.
        let mut group = Group::default();
        self.plan(Box::new(snap.clone()), &mut group);
        let seqs = if group.ops.is_empty() {
            Vec::new()
        } else {
            store.commit(&[], &group.ops).await?
        };
        // A lone board game has no jobs waiting on it.
        let rest = self.announce(group.shadows, group.after, &group.ops, &seqs);
        debug_assert!(rest.is_empty());
        Ok(())
    }

    fn update_slot(&mut self, serial: &str, slot: &Slot) {
        if let Some(s) = self.slots.get_mut(serial) {
            *s = slot.clone();
        }
    }

    async fn edit(&mut self, edit: &GameEdit) -> Result<i64, StoreError> {
        match self.edit_stored(edit).await {
            Err(StoreError::Conflict(m)) => {
                // Another arbiter's edit came first: the hall has already given the board's
                // recorder this one, so it takes the stored game back.
                if let Err(e) = self.foreign(edit.game_id, true).await {
                    tracing::warn!(game = edit.game_id, error = %e, "stored game not re-read after a conflict");
                }
                Err(StoreError::Conflict(m))
            }
            other => other,
        }
    }

    async fn edit_stored(&mut self, edit: &GameEdit) -> Result<i64, StoreError> {
        let store = self.store.clone();
        let g = store.game(edit.game_id).await?;
        let (game, round) = (g.id, g.round_id);
        let seq = match &edit.action {
            EditAction::Truncate { from_ply } => {
                let seq = guarded(
                    &store,
                    edit,
                    Op::Truncate {
                        game,
                        from_ply: *from_ply,
                        actor: "arbiter".into(),
                        reason: "truncated by the arbiter".into(),
                    },
                )
                .await?;
                self.shared.publisher.publish(Event::new(
                    round,
                    Some(game),
                    seq,
                    &ServerMessage::Truncate {
                        seq,
                        game_id: game,
                        from_ply: *from_ply,
                    },
                ));
                seq
            }
            EditAction::Replace { what } => {
                let seq = store
                    .replace_moves_on(game, edit.edits, &edit.moves, "arbiter")
                    .await?;
                tracing::info!(game, %what, "game corrected by the arbiter");
                self.publish_game(game, seq, true).await?;
                seq
            }
            EditAction::Result {
                result,
                termination,
                status,
            } => {
                let seq = guarded(
                    &store,
                    edit,
                    Op::Result {
                        game,
                        result: result.clone(),
                        termination: termination.clone(),
                        status: status.clone(),
                        actor: "arbiter".into(),
                    },
                )
                .await?;
                self.shared.publisher.publish(Event::new(
                    round,
                    Some(game),
                    seq,
                    &ServerMessage::Result {
                        seq,
                        game_id: game,
                        result: result.clone(),
                        termination: termination.clone(),
                        status: status.clone(),
                    },
                ));
                seq
            }
        };
        self.committed(round, seq);
        if let Some(serial) = self.serial_playing(game) {
            match &edit.action {
                EditAction::Result { result, status, .. } => {
                    if let Some(s) = self.slots.get_mut(&serial) {
                        s.result = result.clone();
                        s.status = status.clone();
                    }
                }
                // The store is the truth after a change of moves.
                _ => {
                    let g = store.game(game).await?;
                    if let Some(s) = self.slots.get_mut(&serial) {
                        s.moves = g.moves;
                    }
                }
            }
        }
        Ok(seq)
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

/// Each e-board's game in the newest open round it is assigned in, as the writer's picture of
/// it and as what its recorder resumes from (at start-up, and when this relay takes over a
/// port another relay was reading).
pub async fn load_carry(
    store: &Store,
) -> Result<(HashMap<String, Slot>, HashMap<String, Resume>), relay_store::StoreError> {
    let mut slots = HashMap::new();
    let mut resume = HashMap::new();
    let mut rounds: HashMap<i64, Vec<relay_store::StoredGame>> = HashMap::new();
    for (round, board_no, serial) in store.open_assignments().await? {
        if slots.contains_key(&serial) {
            continue;
        }
        if let std::collections::hash_map::Entry::Vacant(e) = rounds.entry(round) {
            e.insert(store.round_games(round).await?);
        }
        let Some(g) = rounds
            .get(&round)
            .and_then(|gs| gs.iter().find(|g| g.pairing.board_no == board_no))
        else {
            continue;
        };
        slots.insert(
            serial.clone(),
            Slot {
                game_id: g.id,
                round_id: g.round_id,
                board_no,
                game_no: 0,
                moves: g.moves.clone(),
                result: g.result.clone(),
                status: g.status.clone(),
                orientation: g.orientation.clone(),
                start_fen: g.start_fen.clone(),
            },
        );
        if let Some(o) = g.orientation.as_deref().and_then(parse_orientation) {
            resume.insert(
                serial,
                Resume {
                    game: relay_store::to_game(g, "", None, ""),
                    orientation: o,
                    moves: g.moves.clone(),
                },
            );
        }
    }
    Ok((slots, resume))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played(ucis: &[&str], clk_ms: Option<u64>) -> Vec<StoredMove> {
        ucis.iter()
            .enumerate()
            .map(|(i, uci)| StoredMove {
                ply: i as u32 + 1,
                san: String::new(),
                uci: (*uci).to_string(),
                clk_ms,
                emt_ms: None,
                accepted_at_ms: 1,
                fen_after: String::new(),
            })
            .collect()
    }

    fn stored(ucis: &[&str]) -> Slot {
        Slot {
            game_id: 1,
            round_id: 1,
            board_no: 1,
            game_no: 1,
            moves: played(ucis, None),
            result: "*".into(),
            status: "live".into(),
            orientation: Some("normal".into()),
            start_fen: None,
        }
    }

    fn read(ucis: &[&str], clk_ms: Option<u64>) -> Snapshot {
        Snapshot {
            serial: "7001".into(),
            port: "/dev/ttyUSB0".into(),
            game_no: 1,
            start_fen: None,
            chess960: false,
            orientation: Some("normal"),
            moves: played(ucis, clk_ms),
            result: "*".into(),
            termination: None,
            read_at_ms: 1,
            press: None,
        }
    }

    /// Only a change that adds clocks to the moves already stored may wait for company;
    /// anything that would show spectators a new move, a taken-back one or a result may not.
    #[test]
    fn only_the_clocks_of_stored_moves_may_wait() {
        let slot = stored(&["e2e4", "e7e5"]);
        assert!(only_clocks(
            &slot,
            &read(&["e2e4", "e7e5"], Some(5_400_000))
        ));
        assert!(!only_clocks(&slot, &read(&["e2e4", "e7e5", "g1f3"], None)));
        assert!(!only_clocks(&slot, &read(&["e2e4"], None)));
        assert!(!only_clocks(&slot, &read(&["e2e4", "c7c5"], None)));
        let mut over = read(&["e2e4", "e7e5"], None);
        over.result = "0-1".into();
        assert!(!only_clocks(&slot, &over));
        let mut next = read(&["e2e4", "e7e5"], None);
        next.game_no = 2;
        assert!(!only_clocks(&slot, &next));
    }
}
