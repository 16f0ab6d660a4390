//! The writer's state: its connections, its picture of each e-board's stored game, and the
//! handles it tells what it stored; with the small steps every concern uses (binding an
//! e-board to its game, counting changes, the store's health).

use super::bundle::ClockBundle;
use super::carry::{Slot, Slots};
use crate::serve::health::Health;
use crate::serve::instance::instance_name;
use crate::serve::jobs::{Job, ToHall};
use crate::serve::live::Boards;
use crate::serve::metrics::Metrics;
use crate::serve::publish::Publisher;
use crate::serve::views::EboardView;
use relay_store::{RoundId, Seq};
use relay_store::{RoundInfo, SqliteCommits, Store, StoreError, now_ms};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::mpsc;

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
    pub(super) parts: Handles,
    /// The writer's own connections (separate from the readers').
    pub(super) store: Store,
    /// Its connection for group commits on a SQLite file, called on this thread (see
    /// `SqliteCommits`); `None`: they go through `store`.
    pub(super) commits: Option<SqliteCommits>,
    pub(super) slots: Slots,
    pub(super) current: RoundInfo,
    seqs: Seqs,
    backoff: Backoff,
    pub(super) jobs: Queue,
    pub(super) bundled: ClockBundle,
}

/// The latest change number of each round the writer committed to (clock and e-board
/// messages carry it); it only grows.
#[derive(Debug, Default)]
pub(super) struct Seqs(HashMap<RoundId, Seq>);

impl Seqs {
    pub(super) fn of(&self, round: RoundId) -> Seq {
        self.0.get(&round).copied().unwrap_or_default()
    }

    pub(super) fn raise(&mut self, round: RoundId, seq: Seq) {
        let s = self.0.entry(round).or_default();
        *s = (*s).max(seq);
    }
}

/// How long the writer waits before trying the store again: 100 ms after an answer,
/// doubling with each failure in a row up to 5 s.
#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    const FIRST: Duration = Duration::from_millis(100);
    const MOST: Duration = Duration::from_secs(5);

    fn reset(&mut self) {
        self.0 = Backoff::FIRST;
    }

    /// The wait before the next try; the one after it is longer.
    fn next(&mut self) -> Duration {
        let wait = self.0;
        self.0 = (self.0 * 2).min(Backoff::MOST);
        wait
    }
}

/// The writer's queue of jobs, with how many it has taken and not done yet (`/health`'s
/// pending writes count both).
#[derive(Debug)]
pub(super) struct Queue {
    jobs: mpsc::UnboundedReceiver<Job>,
    in_hand: usize,
}

impl Queue {
    pub(super) async fn recv(&mut self) -> Option<Job> {
        self.jobs.recv().await
    }

    pub(super) fn try_recv(&mut self) -> Option<Job> {
        self.jobs.try_recv().ok()
    }

    /// `n` jobs were taken to be done (0: all done).
    pub(super) fn in_hand(&mut self, n: usize) {
        self.in_hand = n;
    }

    fn pending(&self) -> usize {
        self.jobs.len() + self.in_hand
    }
}

/// `$step` (an expression ending in `.await`) run until the store takes it or refuses it: a
/// transient failure (the database away, busy or full) is waited out with the writer's
/// backoff and the step run again, so nothing the boards or an arbiter gave is dropped while
/// the database is down. The one retry loop of the writer. (A macro, not a method taking an
/// async closure: the writer's future must be `Send`, which such a closure's borrows do not
/// prove to today's compiler.)
macro_rules! retrying {
    ($writer:expr, $step:expr) => {
        loop {
            match $step {
                Ok(v) => {
                    $writer.stored_ok();
                    break Ok(v);
                }
                Err(e) if $crate::serve::writer::state::transient(&e) => {
                    $writer.store_failed(&e).await
                }
                Err(e) => break Err(e),
            }
        }
    };
}
pub(super) use retrying;

pub(super) fn transient(e: &StoreError) -> bool {
    e.is_transient()
}

impl Writer {
    pub fn new(
        parts: Handles,
        store: Store,
        commits: Option<SqliteCommits>,
        current: RoundInfo,
        slots: HashMap<String, Slot>,
        jobs: mpsc::UnboundedReceiver<Job>,
    ) -> Writer {
        let mut w = Writer {
            parts,
            store,
            commits,
            slots: Slots::default(),
            seqs: Seqs::default(),
            current,
            backoff: Backoff(Backoff::FIRST),
            jobs: Queue { jobs, in_hand: 0 },
            bundled: ClockBundle::default(),
        };
        for (serial, slot) in slots {
            w.bind(&serial, slot);
        }
        w
    }

    /// Boards this writer places by itself get numbers from `n` on (a hall of a
    /// several-hall event).
    pub fn first_board(mut self, n: u32) -> Writer {
        self.slots.set_first_board(n);
        self
    }

    pub(super) fn bind(&mut self, serial: &str, slot: Slot) {
        self.parts.boards.bind(
            serial,
            slot.game_id,
            slot.game_no,
            slot.board_no,
            slot.round_id,
        );
        self.slots.put(serial, slot);
        if let Some(view) = self.parts.boards.eboard(serial) {
            self.share_eboard(&view);
        }
    }

    /// Relays that read no boards show the e-boards this one reads (they read their states
    /// from the store; PostgreSQL only). Not worth holding the queue for: news of a board is
    /// rare, and a newer state is never overwritten by an older one.
    pub(super) fn share_eboard(&self, view: &EboardView) {
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

    pub(super) fn note_pending(&self) {
        self.parts
            .health
            .pending_writes
            .store(self.jobs.pending() as u64, Ordering::Relaxed);
    }

    pub(super) fn stored_ok(&mut self) {
        let h = &self.parts.health;
        if !h.store_ok.swap(true, Ordering::Relaxed) {
            tracing::info!("the database answers again");
        }
        h.store_down_since_ms.store(0, Ordering::Relaxed);
        self.backoff.reset();
    }

    pub(super) async fn store_failed(&mut self, e: &StoreError) {
        let h = &self.parts.health;
        self.parts.metrics.store_errors.inc();
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
        tokio::time::sleep(self.backoff.next()).await;
    }

    pub(super) fn seq(&self, round: RoundId) -> Seq {
        self.seqs.of(round)
    }

    pub(super) fn committed(&mut self, round: RoundId, seq: Seq) {
        self.seqs.raise(round, seq);
        self.parts.metrics.changes_committed.inc();
    }

    pub(super) fn update_slot(&mut self, serial: &str, slot: &Slot) {
        if let Some(s) = self.slots.get_mut(serial) {
            *s = slot.clone();
        }
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}
