//! A wake-up at a moment given to the microsecond, for the hall's judgements.
//!
//! tokio's timers count whole milliseconds and round a deadline up, and the runtime parks
//! with a millisecond timeout: a board whose settle time ended was judged 1.5 ms late at the
//! median, 2.9 ms at p99 (1000 boards, `relay bench`). A thread sleeping on a condition
//! variable until the deadline wakes within tens of microseconds, and waking a task from it
//! is immediate.

use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;

#[derive(Debug, Default)]
struct State {
    /// When to ring next (`None`: not set).
    at: Option<Instant>,
    /// The owner is gone: the thread ends.
    stop: bool,
}

/// One alarm with one deadline at a time, rung on its own thread. Dropping it ends the
/// thread.
#[derive(Debug)]
pub struct Alarm {
    state: Arc<(Mutex<State>, Condvar)>,
    ring: Arc<Notify>,
    /// Whether the thread runs (when it could not be started, `set` does nothing and the
    /// owner's own timer is all there is).
    running: bool,
}

impl Alarm {
    pub fn start() -> Alarm {
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let ring = Arc::new(Notify::new());
        let (s, r) = (state.clone(), ring.clone());
        let running = std::thread::Builder::new()
            .name("relay-alarm".into())
            .spawn(move || ring_when_due(&s, &r))
            .is_ok();
        if !running {
            tracing::warn!("the hall's alarm thread did not start: judging on tokio's timer");
        }
        Alarm {
            state,
            ring,
            running,
        }
    }

    /// Rings at `at` (or never, for `None`) instead of any earlier setting.
    pub fn set(&self, at: Option<Instant>) {
        if !self.running {
            return;
        }
        let (lock, wake) = &*self.state;
        let mut s = lock.lock();
        if s.at != at {
            s.at = at;
            wake.notify_one();
        }
    }

    /// Whether the alarm's thread runs.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Completes once the alarm has rung (at once when it rang since the last call).
    pub async fn rung(&self) {
        self.ring.notified().await;
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        let (lock, wake) = &*self.state;
        lock.lock().stop = true;
        wake.notify_one();
    }
}

fn ring_when_due(state: &(Mutex<State>, Condvar), ring: &Notify) {
    let (lock, wake) = state;
    let mut s = lock.lock();
    loop {
        if s.stop {
            return;
        }
        match s.at {
            None => wake.wait(&mut s),
            Some(at) => {
                if at <= Instant::now() {
                    s.at = None;
                    // Kept as a permit when the owner is not waiting yet.
                    ring.notify_one();
                    continue;
                }
                wake.wait_until(&mut s, at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn rings_once_its_moment_has_come_and_not_before() {
        let alarm = Alarm::start();
        let at = Instant::now() + Duration::from_millis(30);
        alarm.set(Some(at));
        alarm.rung().await;
        assert!(Instant::now() >= at, "rang before its moment");
    }

    #[tokio::test]
    async fn a_later_setting_replaces_the_earlier_one_and_none_cancels() {
        let alarm = Alarm::start();
        alarm.set(Some(Instant::now() + Duration::from_millis(20)));
        let later = Instant::now() + Duration::from_millis(60);
        alarm.set(Some(later));
        alarm.rung().await;
        assert!(Instant::now() >= later, "rang at the replaced moment");

        alarm.set(Some(Instant::now() + Duration::from_millis(20)));
        alarm.set(None);
        let rang = tokio::time::timeout(Duration::from_millis(100), alarm.rung()).await;
        assert!(rang.is_err(), "a cancelled alarm rang");
    }
}
