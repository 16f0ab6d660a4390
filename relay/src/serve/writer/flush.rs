//! A group committed: its readings and board changes in one transaction (retried while the
//! store is down), then announced, then the jobs that waited for it run in order. Above
//! `apply` (those jobs) and `group` (what a group holds and how a change joins it), which
//! know nothing of this file.

use super::group::{After, Group};
use super::state::{Writer, retrying};
use crate::serve::jobs::Job;
use relay_store::StoreError;

impl Writer {
    /// One try at committing a group, timed for `/metrics`.
    async fn commit_group(&mut self, g: &Group) -> Result<Vec<Option<i64>>, StoreError> {
        let started = std::time::Instant::now();
        // On a SQLite file, SQLite is called on this thread (it blocks for the commit, about
        // a millisecond with 1000 boards): no hand-off to sqlx's worker thread and back for
        // each statement.
        let seqs = match &mut self.commits {
            Some(c) => c.commit(&g.raws, &g.ops),
            None => self.store.commit(&g.raws, &g.ops).await,
        }?;
        (self.parts.metrics.group_commit).observe(started.elapsed().as_secs_f64());
        Ok(seqs)
    }

    /// Commits the group (retrying while the store is down), then announces its changes and
    /// runs the jobs that waited for it, in order. When the store refuses the group (our
    /// picture of a stored game is off), each board's game goes through the careful one-by-one
    /// path instead, which reads the game back and tries again.
    pub(super) async fn flush(&mut self, group: &mut Group) {
        let g = std::mem::take(group);
        if g.raws.is_empty() && g.ops.is_empty() && g.after.is_empty() {
            return;
        }
        let committed = if g.raws.is_empty() && g.ops.is_empty() {
            Some(Vec::new())
        } else {
            let done = retrying!(self, self.commit_group(&g).await);
            match done {
                Ok(seqs) => Some(seqs),
                Err(e) => {
                    tracing::warn!(error = %e, "group commit refused; storing its games one by one");
                    None
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
        self.parts.metrics.raw_logged.inc_by(g.raws.len() as u64);
        for job in self.announce(g.shadows, g.after, &g.ops, &seqs) {
            self.apply(job).await;
        }
    }
}
