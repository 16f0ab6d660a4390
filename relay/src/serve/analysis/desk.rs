//! The analysis desk: hears the positions games reach, asks the store which it already knows,
//! hands the others to workers as they ask ([`Analysis::next`], a long poll), keeps what they
//! answer, and sends each evaluation to the spectators of every game that reached the
//! position, once it is public, in one `eval` message per round at most every second.

use super::intake::{Intake, News};
use super::queue::{Counts, Owed, Queue, Task};
use crate::serve::events::Event;
use crate::serve::lookup::Lookup;
use crate::serve::publish::Publisher;
use crate::serve::views::EvalView;
use crate::serve::wire::{EvalEntry, ServerMessage};
use parking_lot::Mutex;
use relay_store::RoundId;
use relay_store::{Score, Store, StoreError, StoredEval, now_ms};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};

/// How a position is to be evaluated, told to every worker with its task.
#[derive(Clone, Copy, Debug)]
pub struct EvalTerms {
    /// The engine's thinking time per position.
    pub movetime_ms: u64,
}

impl EvalTerms {
    /// The thinking time for a position handed out with `behind` others waiting: the full
    /// time when the engines keep up, less as a backlog grows (down to a sixth, and never
    /// under 50 ms), so an evaluation comes within about a second of its move in a busy hall
    /// too, a little shallower.
    pub fn movetime_for(self, behind: usize) -> u64 {
        let floor = (self.movetime_ms / 6).max(50).min(self.movetime_ms);
        let shared = self.movetime_ms / (1 + behind as u64);
        shared.max(floor)
    }

    /// How long a worker may take before its position goes to another: the thinking time
    /// three times over and five seconds for the round trip and a slow start.
    pub fn lease_ms(self) -> i64 {
        i64::try_from(self.movetime_ms.saturating_mul(3)).unwrap_or(i64::MAX / 2) + 5_000
    }
}

/// A round's evaluations go out at most this often (one frame for every spectator each time:
/// at 200 boards, about a tenth of a frame per move).
const SEND_EVERY_MS: i64 = 500;
/// The desk looks at the queue this often: public times come, leases run out.
const TICK: Duration = Duration::from_millis(100);

/// The desk's state, shared with the routes workers call.
#[derive(Debug)]
pub struct Analysis {
    queue: Mutex<Queue>,
    /// New work may be there: waiting workers look again.
    work: Notify,
    /// An answer came: the desk sends what is owed without waiting for its tick.
    answered: Notify,
    pub terms: EvalTerms,
    lookup: Lookup,
    /// Where the answers are kept (the lookup only reads).
    store: Store,
    /// Positions evaluated by workers since the start (the benchmark's rate).
    pub evaluated: AtomicU64,
}

/// What a worker hands back for a position.
#[derive(Clone, Debug)]
pub struct Answer {
    pub fen: String,
    pub score: Score,
    pub depth: u32,
    pub line: Vec<String>,
    pub engine: String,
}

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{0}")]
    Bad(String),
    #[error("no game here reached that position")]
    Unplayed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Analysis {
    /// The next position for a worker, waiting up to `wait` for one.
    pub async fn next(&self, wait: Duration) -> Option<Task> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.work.notified();
            if let Some(t) = self.queue.lock().next(now_ms()) {
                return Some(t);
            }
            // Public times and lapsed leases come without news: look again each tick.
            let until = (tokio::time::Instant::now() + TICK * 2).min(deadline);
            if tokio::time::timeout_at(until, notified).await.is_err()
                && tokio::time::Instant::now() >= deadline
            {
                return None;
            }
        }
    }

    /// A worker's evaluation: checked, kept in the store (where a deeper one stays), and owed
    /// to the games that reached the position. `Ok(false)`: a deeper one was known already.
    pub async fn answer(&self, a: Answer) -> Result<bool, Refused> {
        let fen: shakmaty::fen::Fen = a
            .fen
            .parse()
            .map_err(|e| Refused::Bad(format!("fen: {e}")))?;
        let out_of_range = match a.score {
            Score::Cp(cp) => cp.abs() > 100_000,
            Score::Mate(m) => m.abs() > 500,
        };
        if out_of_range {
            return Err(Refused::Bad("the score is out of range".into()));
        }
        if a.depth == 0 || a.depth > 245 || a.engine.trim().is_empty() || a.engine.len() > 100 {
            return Err(Refused::Bad(
                "depth (1-245) and engine name (1-100 characters) are required".into(),
            ));
        }
        let fen_text = fen.to_string();
        let line: Vec<String> = a.line.into_iter().take(64).collect();
        // Only moves that are legal from the position are kept.
        let legal = relay_core::game::line_san(&fen_text, &line).len();
        let eval = StoredEval {
            position: relay_store::position_key(&fen_text),
            score: a.score,
            depth: a.depth,
            line: line.into_iter().take(legal).collect(),
            engine: a.engine.trim().to_string(),
        };
        let played = {
            let q = self.queue.lock();
            q.plays(&eval.position)
        };
        if !played {
            return Err(Refused::Unplayed);
        }
        self.store.save_eval(&eval).await?;
        let taken = self.queue.lock().done(eval);
        self.evaluated.fetch_add(1, Ordering::Relaxed);
        self.answered.notify_one();
        Ok(taken)
    }

    /// A position handed back unfinished: another worker may take it at once.
    pub fn give_back(&self, lease: u64) {
        self.queue.lock().give_back(lease);
        self.work.notify_waiters();
    }

    pub fn counts(&self) -> Counts {
        self.queue.lock().counts(now_ms())
    }
}

/// Starts the desk (on the current runtime): the publisher's news of positions comes to it
/// from now on. Its handle is for the routes workers call.
pub fn start(
    publisher: Publisher,
    lookup: Lookup,
    store: Store,
    intake: &Intake,
    terms: EvalTerms,
) -> Arc<Analysis> {
    let (tx, rx) = mpsc::unbounded_channel();
    intake.connect(tx);
    let analysis = Arc::new(Analysis {
        queue: Mutex::new(Queue::new(terms.lease_ms())),
        work: Notify::new(),
        answered: Notify::new(),
        terms,
        lookup,
        store,
        evaluated: AtomicU64::new(0),
    });
    tokio::spawn(run(analysis.clone(), publisher, rx));
    analysis
}

async fn run(a: Arc<Analysis>, publisher: Publisher, mut rx: mpsc::UnboundedReceiver<News>) {
    let mut owed: HashMap<RoundId, Vec<Owed>> = HashMap::new();
    let mut sent_at: HashMap<RoundId, i64> = HashMap::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            news = rx.recv() => {
                let Some(first) = news else { return };
                let mut batch = vec![first];
                while let Ok(n) = rx.try_recv() {
                    batch.push(n);
                }
                take_news(&a, batch).await;
            }
            _ = tick.tick() => {}
            _ = a.answered.notified() => {}
        }
        let now = now_ms();
        for o in a.queue.lock().due(now) {
            owed.entry(o.round).or_default().push(o);
        }
        for (round, list) in owed.iter_mut() {
            if list.is_empty() || sent_at.get(round).is_some_and(|t| now - t < SEND_EVERY_MS) {
                continue;
            }
            sent_at.insert(*round, now);
            // Owed up to a second ago: only what still stands (a takeback may have come).
            let mut list = std::mem::take(list);
            {
                let q = a.queue.lock();
                list.retain(|o| q.stands(o.game, o.ply, &o.fen));
            }
            if !list.is_empty() {
                send(&publisher, *round, list);
            }
        }
        owed.retain(|_, l| !l.is_empty());
    }
}

/// Puts news of positions in the queue, with each round's public delay, and asks the store
/// which of the new positions it knows.
async fn take_news(a: &Analysis, batch: Vec<News>) {
    let mut delays: HashMap<RoundId, i64> = HashMap::new();
    for n in batch {
        match n {
            // Mate or stalemate: the result says it all, an engine has nothing to add.
            News::Reached(r) if relay_core::game::no_moves(&r.fen) => {
                a.queue.lock().cut(r.game, r.ply);
            }
            News::Reached(r) => {
                let delay = match delays.get(&r.round) {
                    Some(d) => *d,
                    None => match a.lookup.spectator_delay(r.round).await {
                        Ok(d) => {
                            delays.insert(r.round, d);
                            d
                        }
                        Err(e) => {
                            // Without the delay nothing may go out: the position waits for
                            // the next move of its game.
                            tracing::warn!(round = %r.round, error = %e, "round delay not read; position not queued for evaluation");
                            continue;
                        }
                    },
                };
                let public_at = r.at_ms + delay;
                a.queue.lock().reached(r, public_at);
            }
            News::Cut { game, from_ply } => a.queue.lock().cut(game, from_ply),
        }
    }
    let keys = a.queue.lock().unchecked();
    if keys.is_empty() {
        return;
    }
    match a.lookup.store.evals_of(&keys).await {
        Ok(found) => a.queue.lock().checked(&keys, found),
        // Asked again with the next news.
        Err(e) => tracing::warn!(error = %e, "evaluations not read"),
    }
    a.work.notify_waiters();
}

/// One `eval` message for a round's owed evaluations. It carries the change number and time
/// of its newest move, so a delayed feed's line passes it on right after that move, never
/// before.
fn send(publisher: &Publisher, round: RoundId, list: Vec<Owed>) {
    let seq = list.iter().map(|o| o.seq).max().unwrap_or_default();
    let at_ms = list.iter().map(|o| o.at_ms).max().unwrap_or(0);
    let evals = list
        .iter()
        .map(|o| EvalEntry {
            game_id: o.game,
            ply: o.ply,
            eval: EvalView::of(&o.eval, &o.fen),
        })
        .collect();
    let mut e = Event::new(round, None, seq, &ServerMessage::Eval { seq, evals });
    e.change = false;
    e.at_ms = at_ms;
    publisher.push_to_feed(e);
}

#[cfg(test)]
mod tests {
    use super::EvalTerms;

    #[test]
    fn thinking_time_shrinks_with_the_backlog_down_to_a_sixth() {
        let t = EvalTerms { movetime_ms: 600 };
        assert_eq!(t.movetime_for(0), 600);
        assert_eq!(t.movetime_for(1), 300);
        assert_eq!(t.movetime_for(100), 100);
        let short = EvalTerms { movetime_ms: 120 };
        assert_eq!(short.movetime_for(5), 50, "never under 50 ms");
        let tiny = EvalTerms { movetime_ms: 40 };
        assert_eq!(tiny.movetime_for(9), 40, "never over the time asked for");
        assert_eq!(t.lease_ms(), 6_800);
    }
}
