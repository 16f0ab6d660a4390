//! The writer's loop: it takes every job waiting (up to 2000), lets readings wait a little
//! for company, and puts them through one group commit; jobs that need the store's answer
//! first run on their own, in order.

use super::clocks::CLOCK_READINGS_EVERY;
use super::group::{After, Group, only_clocks};
use super::state::Writer;
use crate::serve::jobs::Job;
use relay_core::game::GameResult;
use std::time::Duration;

/// How long readings with no move among them wait for more before they are committed.
const READINGS_LINGER: Duration = Duration::from_millis(100);

/// How long the clock of a move already announced (its lever press, seen after the move was
/// judged) waits for company before it is committed. With 1000 boards another board's move
/// comes within about 10 ms and the two share one commit: a separate commit for each move's
/// clock was a third of all commits. A press shown 50 ms later is still well within the
/// second that clocks display.
const MOVE_CLOCK_LINGER: Duration = Duration::from_millis(50);

/// How long the first change of an e-board the writer has not placed yet waits for others.
/// At a hall's start the boards' first positions come one every few milliseconds, as the
/// ports answer; placed one by one (two commits each) they kept pace with the writer and
/// never gathered, and 1000 boards stood on their boards 1–2 s after the last was read.
/// Waiting this long lets them be placed together (`place_newcomers`), one commit for many.
const NEWCOMER_LINGER: Duration = Duration::from_millis(100);

impl Writer {
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
                    (Some(j), _) => j,
                    (None, None) => break,
                    (None, Some(w)) => {
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
            self.jobs.in_hand(batch.len());
            self.note_pending();
            // The e-boards first seen among the jobs are placed first, together.
            self.place_newcomers(&batch).await;
            // Group commit: the readings and the board games' changes of everything waiting go
            // to the store in one transaction (one fsync, however many boards), and are
            // announced after it. Jobs that need the store's answer before going on (a new
            // game, an arbiter's edit, an assignment) close the group first and run on their
            // own, in order.
            let mut group = Group::default();
            for job in batch {
                match job {
                    Job::Raws(mut e) => group.raws.append(&mut e),
                    Job::Sync(snap) if self.slots.adopting(&snap.serial) => {
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
            self.jobs.in_hand(0);
            self.note_pending();
        }
    }

    /// How long the job may wait for others to share its commit (`None`: not at all).
    /// [`READINGS_LINGER`] for black-box readings and for clock readings that are only kept
    /// for the round's next bundle (a tick while the same side runs: about one a second per
    /// board, which made every commit's wait end at once with 1000 boards);
    /// [`MOVE_CLOCK_LINGER`] for a board's change that only adds clocks to moves already
    /// stored; [`NEWCOMER_LINGER`] for the first change of an e-board not yet placed. Not
    /// moves, results, lever presses on their own or anything an arbiter waits for.
    pub(super) fn may_wait(&self, job: &Job) -> Option<Duration> {
        match job {
            Job::Raws(_) | Job::Touch { .. } => Some(READINGS_LINGER),
            Job::Clock { serial, clock } => self
                .slots
                .get(serial)
                .is_none_or(|s| {
                    s.result != GameResult::Ongoing || !self.side_changed(s.game_id, clock.running)
                })
                .then_some(READINGS_LINGER),
            Job::Sync(snap) => match self.slots.get(&snap.serial) {
                Some(slot) => only_clocks(slot, snap).then_some(MOVE_CLOCK_LINGER),
                None => Some(NEWCOMER_LINGER),
            },
            _ => None,
        }
    }
}
