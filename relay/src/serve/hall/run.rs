//! The hall's loop: readings taken in turns, boards judged the moment their settle time ends,
//! arbiters' commands, and the readings handed to the writer for the black box.

use super::ports::PortInput;
use super::state::Hall;
use crate::serve::alarm::Alarm;
use crate::serve::jobs::{HallCommand, Job};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, watch};

/// How often every board is looked at besides the moments they are due to be judged: for a
/// board out of sync long enough to say so, and as a safety net.
const TICK_ALL: Duration = Duration::from_millis(250);
/// How long a reading waits in the hall, at most, before it goes to the writer for the black
/// box (moves and e-board news take the waiting readings with them at once).
const RAWS_EVERY: Duration = Duration::from_millis(100);
/// How often, at most, the hall takes in what the ports read (see [`Hall::run`]).
const PORTS_EVERY: Duration = Duration::from_millis(10);
/// How long the hall goes on taking readings once the service stops. A reader notices the
/// stop when its read returns, which for a quiet board is up to a second later; waiting for
/// every one made a relay reading 1000 ports take 1.1 s to end. A reader still in its read
/// holds nothing it has read, and whatever a board says after the stop is in its memory,
/// read back at the next start; a reading already read reaches the hall within this time.
const READERS_GRACE: Duration = Duration::from_millis(250);

impl Hall {
    /// Runs until the port channel closes (every reader stopped), or [`READERS_GRACE`] after
    /// `closing` says the service stops.
    pub async fn run(
        mut self,
        mut ports: mpsc::UnboundedReceiver<PortInput>,
        mut edits: mpsc::UnboundedReceiver<HallCommand>,
        mut closing: watch::Receiver<bool>,
    ) {
        // A still board is judged the moment its settle time has passed (`due`); every board
        // is looked at on a slower tick as well, for what has no moment of its own (a board
        // out of sync for long enough to say so).
        let mut tick = tokio::time::interval(TICK_ALL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut raws_tick = tokio::time::interval(RAWS_EVERY);
        raws_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Readings are taken in turns, at most one every PORTS_EVERY, each taking everything
        // read meanwhile: 1000 boards send about 3000 messages a second, and waking for each
        // (a reader thread unparking a runtime worker) cost more than reading it. A board is
        // judged from when its messages were received, not when they were taken in, so the
        // wait adds nothing to a move's time.
        let mut ports_open_at = tokio::time::Instant::now();
        // Boards are judged when their settle time ends, to the microsecond (see `alarm`);
        // tokio's timer, a little later, is the net under it.
        let alarm = Alarm::start();
        let net = if alarm.is_running() {
            Duration::from_millis(2)
        } else {
            Duration::ZERO
        };
        let mut ends_at = (*closing.borrow()).then(|| tokio::time::Instant::now() + READERS_GRACE);
        loop {
            let ports_open = tokio::time::Instant::now() >= ports_open_at;
            let next_due = self.due.next_ms().map(|at| {
                let since_epoch = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                std::time::Instant::now() + Duration::from_millis(at).saturating_sub(since_epoch)
            });
            alarm.set(next_due);
            let net_at = next_due.map(|t| tokio::time::Instant::from_std(t) + net);
            tokio::select! {
                _ = alarm.rung(), if next_due.is_some() => self.judge_due(),
                _ = tokio::time::sleep_until(net_at.unwrap_or_else(tokio::time::Instant::now)), if net_at.is_some() => self.judge_due(),
                _ = tokio::time::sleep_until(ports_open_at), if !ports_open => {}
                input = ports.recv(), if ports_open => match input {
                    Some(i) => {
                        self.on_port(i);
                        while let Ok(i) = ports.try_recv() {
                            self.on_port(i);
                        }
                        ports_open_at = tokio::time::Instant::now() + PORTS_EVERY;
                    }
                    None => break,
                },
                Some(cmd) = edits.recv() => match cmd {
                    HallCommand::Edit(edit) => self.on_edit(edit),
                    HallCommand::ContinueFromBoard { serial, white_to_move, reply } => {
                        let answer = self.continue_from_board(&serial, white_to_move);
                        let _ = reply.send(answer);
                    }
                    HallCommand::TakeOver { port, reply } => self.take_over(&port, reply),
                    HallCommand::Adopt { serial, game_id, moves, result } => {
                        self.adopt(&serial, game_id, &moves, result);
                        self.writer.send(Job::Adopted { serial });
                    }
                    HallCommand::Resumed { resume, reply } => {
                        for (serial, r) in resume {
                            if !self.desks.contains(&serial) {
                                self.resume.insert(serial, r);
                            }
                        }
                        let _ = reply.send(());
                    }
                },
                // The loop ends when every reader has stopped and its readings are taken
                // in, or READERS_GRACE after the stop: nothing read is left behind.
                _ = tick.tick() => self.tick_all(),
                _ = raws_tick.tick(), if self.writer.readings_waiting() => self.writer.send_readings(),
                _ = closing.changed(), if ends_at.is_none() => {
                    ends_at = Some(tokio::time::Instant::now() + READERS_GRACE);
                }
                _ = tokio::time::sleep_until(ends_at.unwrap_or_else(tokio::time::Instant::now)), if ends_at.is_some() => {
                    tracing::debug!("readers still in a read are left behind: the service stops");
                    break;
                }
            }
        }
        // Shutdown: what the recorders still hold (a last still board) is written too.
        for serial in self.desks.ids() {
            if let Some(d) = self.desks.get_mut(&serial) {
                let outs = d.recorder.flush();
                self.after(&serial, &outs);
            }
        }
        self.writer.send_readings();
    }

    /// Before reading `port`, which another relay may have been reading: its boards' desks
    /// are stale, so they go, and the writer reads from the store every game it has no board
    /// here for (the others are this relay's own, stored by it); the hall resumes from what
    /// it reads (`HallCommand::Resumed`), and then `reply` lets the port be opened.
    pub(super) fn take_over(&mut self, port: &str, reply: tokio::sync::oneshot::Sender<()>) {
        self.desks.close_port(port);
        self.ids.forget_port(port);
        let keep = self.desks.ids();
        self.writer.send(Job::Reload { keep, reply });
    }
}
