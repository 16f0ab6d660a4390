//! The jobs that need the store's answer before the writer goes on (a board's change that
//! could not join a group, an arbiter's edit or assignment, another relay's edit, a
//! take-over's reload), each run on its own, retried while the store is down. Below the
//! loop (`run`) and the group commit (`group`), which both hand such jobs here.

use super::state::{Writer, retrying};
use crate::serve::jobs::{HallCommand, Job, Refusal};

impl Writer {
    pub(super) async fn apply(&mut self, job: Job) {
        match job {
            Job::Raws(_) | Job::Shutdown => {}
            Job::Touch { serial, port } => {
                // Not worth holding the queue for: the next touch will do.
                if let Err(e) = self.store.touch_eboard(&serial, &port).await {
                    tracing::debug!(error = %e, "e-board last-seen not noted");
                }
            }
            Job::Sync(snap) => {
                if let Err(e) = retrying!(self, self.sync(&snap).await) {
                    // Our picture of the stored game is off (a commit whose answer was
                    // lost): read the same game again, tell clients what it holds, and try
                    // once more.
                    tracing::warn!(serial = %snap.serial, error = %e, "re-reading the stored game");
                    if let Err(e) = self.reload_slot(&snap.serial).await {
                        tracing::error!(serial = %snap.serial, error = %e, "stored game not readable");
                    }
                    if let Err(e) = self.sync(&snap).await {
                        tracing::error!(serial = %snap.serial, error = %e, "game not stored");
                    }
                }
            }
            Job::Clock { serial, clock } => self.clock_reading(&serial, clock, true),
            Job::Eboard(view) => self.eboard_news(*view),
            Job::Edit(edit) => {
                let result = retrying!(self, self.edit(&edit).await);
                let _ = edit.reply.send(result.map_err(Refusal::from));
            }
            Job::Foreign { game } => {
                if let Err(e) = self.foreign(game, false).await {
                    tracing::warn!(%game, error = %e, "another relay's edit could not be read");
                }
            }
            Job::Adopted { serial } => {
                self.slots.adopted(&serial);
            }
            Job::Reload { keep, reply } => {
                let resume = self.reload(&keep).await;
                self.parts.hall.send(HallCommand::Resumed { resume, reply });
            }
            Job::Assign {
                round_id,
                board_no,
                serial,
                reply,
            } => {
                let result = retrying!(self, self.assign(round_id, board_no, &serial).await);
                let _ = reply.send(result.map_err(Refusal::from));
            }
        }
    }
}
