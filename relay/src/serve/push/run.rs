//! The pusher's loop, the same for every target. It owns what all targets share: the target's
//! line on `/health` ([`Slot`]), the duty that one relay of a cluster does at a time
//! ([`Duty`]: standing by, taking over), the wait for news, and the waits after failures. A
//! target says only what to send next and what an answer means ([`Target`]), so its rules
//! are tested without HTTP and without this loop.
//!
//! One round of the loop, "a look": wait for news (a commit, e-board news) or for the
//! target's timeout; keep looks the target's least time apart; ask the duty; then, unless a
//! wait after a failure still runs, the target reads the store ([`Target::look`]) and its
//! requests go out one at a time ([`Target::next`], [`Target::answered`]) until it has nothing
//! more or one fails. The requests are sent on tokio's blocking threads (`http::send`).

use super::http::{self, Post, Reply, Unanswered};
use super::status::{Slot, Targets};
use crate::serve::claims::Duty;
use crate::serve::lookup::Lookup;
use relay_store::{PushConflict, Store, now_ms};
use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// What a pusher works with.
#[derive(Clone, Debug)]
pub struct Pushing {
    /// The store's reads (what to send), the rounds' delays and the e-boards this relay
    /// reads.
    pub lookup: Lookup,
    /// The store, for what a pusher writes (the cloud's outbox) and its duty's lock.
    pub store: Store,
    /// Changes each time a change is committed or e-board news handed on.
    pub news: watch::Receiver<u64>,
    /// Where the pusher says how it goes.
    pub targets: Targets,
}

/// How often a target is looked at.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// A look comes with news, or after this long without (for what the feeds do not carry:
    /// a round edited, the e-boards' state, a delayed move coming due).
    pub news_within: Duration,
    /// Looks are at least this far apart.
    pub looks_apart: Duration,
}

/// A request a target wants sent, with what the target needs to read its answer.
#[derive(Debug)]
pub struct Request<C> {
    pub post: Post,
    pub carries: C,
}

/// What a target sends next in a look.
#[derive(Debug)]
pub enum Next<C> {
    Send(Request<C>),
    /// Nothing (more) this look: the next comes with news.
    Idle,
    /// Nothing more this look, but more is waiting: the next look comes at once.
    Again,
}

/// What an answer changes on `/health`.
#[derive(Debug, Default, PartialEq)]
pub struct Report {
    /// Changes (the cloud) or games (Lichess) the answer took.
    pub changes: u64,
    /// Every game the target holds back or refused, as of this answer.
    pub conflicts: Vec<PushConflict>,
    /// Changes still waiting, when the answer tells.
    pub queued: Option<i64>,
}

/// What an answer means to the target.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Taken, and more requests of the same delivery follow: a back-off running stands.
    Taken(Report),
    /// Delivered: the waits after failures are over.
    Delivered(Report),
    /// Nothing taken and nothing wrong (the cloud had newer batch numbers): the look ends and
    /// the waits after failures are over.
    Retry,
}

/// Why a look ended early, and how long nothing is sent then.
#[derive(Debug, PartialEq)]
pub struct Failure {
    /// For `/health` and the log.
    pub error: String,
    pub wait: Wait,
}

/// How long nothing is sent after a failure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wait {
    /// No longer than the next look.
    Usual,
    /// This long; a back-off after it doubles from here.
    For(Duration),
    /// The last wait doubled, at least `first` and at most `most`.
    BackOff { first: Duration, most: Duration },
    /// Until this moment (ms since the epoch), as the target asked; shown on `/health`. A
    /// back-off after it doubles from the wait before.
    Until(i64),
}

/// Why a target cannot be pushed yet (no round to push, the store not answering), in words
/// for `/health`; the loop asks again a second later.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotStarted(pub String);

impl From<String> for NotStarted {
    fn from(why: String) -> Self {
        NotStarted(why)
    }
}

impl From<&str> for NotStarted {
    fn from(why: &str) -> Self {
        NotStarted(why.to_string())
    }
}

/// A push target: what to send next and what an answer means. The loop ([`push`]) calls
/// [`look`](Target::look) once a look, then [`next`](Target::next) until it has nothing
/// more, sending each request and handing its answer to [`answered`](Target::answered).
pub trait Target: Send {
    /// `relay` or `lichess`, as `/health` shows it.
    const KIND: &'static str;
    const PACE: Pace;
    /// What a request carries for reading its answer.
    type Carries: Send;

    /// Where to, as `/health` shows it (never a token).
    fn name(&self) -> String;
    /// The lock the target is pushed under: one relay of a cluster pushes it at a time.
    fn duty(&self) -> String;
    /// What the target needs before its first look; asked again every second until it is
    /// there (why not, for `/health`).
    fn start(&mut self) -> impl Future<Output = Result<(), NotStarted>> + Send;
    /// Another relay pushes to the target now.
    fn standing_by(&mut self);
    /// This relay pushes again after another did: what that one sent is not known here.
    fn taken_over(&mut self);
    /// Reads the store for what to send now (`slot` for what waits, and for trouble that
    /// does not end the look).
    fn look(&mut self, slot: &Slot) -> impl Future<Output = Result<(), Failure>> + Send;
    /// The next request of this look.
    fn next(&mut self) -> impl Future<Output = Result<Next<Self::Carries>, Failure>> + Send;
    /// What the answer to a request means (`Err`: why there was none).
    fn answered(
        &mut self,
        carries: Self::Carries,
        answer: Result<Reply, Unanswered>,
    ) -> impl Future<Output = Result<Verdict, Failure>> + Send;
}

/// The waits after failures: the last one (a back-off doubles it) and until when nothing is
/// sent, on the monotonic clock (a wall clock set back while a link is down must not stop
/// the pushing for as long).
#[derive(Debug, Default, PartialEq)]
struct Waits {
    last: Duration,
    until: Option<Instant>,
}

impl Waits {
    /// Starts `wait` at `now`, which is `now_ms` on the wall clock (a target names a
    /// [`Wait::Until`] in wall-clock time, as `/health` shows it).
    fn after(&mut self, wait: Wait, now: Instant, now_ms: i64) {
        match wait {
            Wait::Usual => {}
            Wait::For(d) => {
                self.last = d;
                self.until = Some(now + d);
            }
            Wait::BackOff { first, most } => {
                self.last = (self.last * 2).clamp(first, most);
                self.until = Some(now + self.last);
            }
            Wait::Until(t) => {
                self.until =
                    Some(now + Duration::from_millis(u64::try_from(t - now_ms).unwrap_or(0)));
            }
        }
    }

    fn over(&mut self) {
        *self = Waits::default();
    }

    /// How long nothing is sent yet.
    fn left(&self, now: Instant) -> Duration {
        self.until
            .map_or(Duration::ZERO, |u| u.saturating_duration_since(now))
    }
}

/// Pushes to one target for the life of the service.
pub async fn push<T: Target>(pushing: Pushing, mut target: T) {
    let slot = pushing.targets.register(target.name(), T::KIND);
    while let Err(e) = target.start().await {
        slot.failed(e.0);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let store = pushing.store;
    let mut news = pushing.news;
    let mut duty = Duty::new(target.duty());
    let mut standing_by = false;
    let mut waits = Waits::default();
    let mut at_once = false;
    let mut looked: Option<Instant> = None;
    loop {
        if !at_once {
            // Whatever came meanwhile is in the store: news only says when to look. A wait
            // after a failure ends the wait for news when it is over.
            let left = waits.left(Instant::now());
            let within = if left.is_zero() {
                T::PACE.news_within
            } else {
                T::PACE.news_within.min(left)
            };
            let _ = tokio::time::timeout(within, news.changed()).await;
        }
        at_once = false;
        if let Some(since) = looked.map(|t| t.elapsed())
            && since < T::PACE.looks_apart
        {
            tokio::time::sleep(T::PACE.looks_apart - since).await;
        }
        looked = Some(Instant::now());
        news.mark_unchanged();
        if !duty.mine(&store).await {
            if !standing_by {
                target.standing_by();
                slot.edit(|t| t.standing_by = true);
                standing_by = true;
            }
            continue;
        }
        if standing_by {
            // The failures before standing by (a wait Lichess asked for included) were this
            // relay's, long ago.
            standing_by = false;
            waits.over();
            target.taken_over();
            slot.edit(|t| {
                t.standing_by = false;
                t.waiting_until_ms = None;
            });
        }
        if !waits.left(Instant::now()).is_zero() {
            continue;
        }
        at_once = look(&mut target, &slot, &mut waits).await;
    }
}

/// One look: the target reads the store, then its requests go out one at a time until it
/// has nothing more or one fails. True when the next look should come at once.
async fn look<T: Target>(target: &mut T, slot: &Slot, waits: &mut Waits) -> bool {
    let failure = match target.look(slot).await {
        Err(f) => f,
        Ok(()) => loop {
            let request = match target.next().await {
                Ok(Next::Send(r)) => r,
                Ok(Next::Idle) => return false,
                Ok(Next::Again) => return true,
                Err(f) => break f,
            };
            let answer = http::send(request.post).await;
            match target.answered(request.carries, answer).await {
                Ok(Verdict::Taken(r)) => report(slot, r),
                Ok(Verdict::Delivered(r)) => {
                    report(slot, r);
                    waits.over();
                }
                Ok(Verdict::Retry) => {
                    waits.over();
                    return false;
                }
                Err(f) => break f,
            }
        },
    };
    slot.failed(failure.error);
    if let Wait::Until(t) = failure.wait {
        slot.edit(|s| s.waiting_until_ms = Some(t));
    }
    waits.after(failure.wait, Instant::now(), now_ms());
    false
}

/// A request was taken: `/health` shows it.
fn report(slot: &Slot, r: Report) {
    slot.edit(|t| {
        t.last_ok_ms = Some(now_ms());
        t.delivered_batches += 1;
        t.delivered_changes += r.changes;
        t.conflicts = r.conflicts;
        if let Some(q) = r.queued {
            t.queued = q;
        }
        if t.last_error.is_some() {
            tracing::info!(to = %t.target, "pushing again");
        }
        t.last_error = None;
        t.waiting_until_ms = None;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_back_off_doubles_from_the_last_wait_within_its_bounds() {
        // Moments as ms from a start, on both clocks alike.
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let until_ms = |w: &Waits| w.until.map(|u| (u - t0).as_millis());
        let mut w = Waits::default();
        let back_off = Wait::BackOff {
            first: Duration::from_millis(250),
            most: 5 * S,
        };
        let mut seen = Vec::new();
        for _ in 0..7 {
            w.after(back_off, at(0), 0);
            seen.push(until_ms(&w).unwrap_or_default());
        }
        assert_eq!(seen, [250, 500, 1000, 2000, 4000, 5000, 5000]);
        // A fixed wait (a refusal) is the last wait a back-off doubles from.
        w.over();
        w.after(Wait::For(S), at(0), 0);
        w.after(back_off, at(10_000), 10_000);
        assert_eq!(until_ms(&w), Some(12_000));
        // A wait the target asked for leaves the back-off where it was.
        w.after(Wait::Until(100_000), at(20_000), 20_000);
        assert_eq!(w.left(at(40_000)), Duration::from_secs(60));
        w.after(back_off, at(100_000), 100_000);
        assert_eq!(until_ms(&w), Some(104_000));
        // A store error changes no wait: the next look tries again.
        w.after(Wait::Usual, at(100_500), 100_500);
        assert_eq!(until_ms(&w), Some(104_000));
        w.after(back_off, at(104_000), 104_000);
        assert_eq!(until_ms(&w), Some(109_000));
        w.over();
        assert_eq!(w, Waits::default());
    }
}
