//! The push targets' states (a cloud relay, Lichess rounds): written by the pushers, read by
//! `/health` and the console.

use parking_lot::Mutex;
use relay_store::{PushConflict, now_ms};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;

/// What `/health` and the console show of one push target.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct TargetStatus {
    /// Where to (a URL, or `lichess round ID`); never a token.
    pub target: String,
    /// `relay` or `lichess`.
    pub kind: &'static str,
    /// Changes committed here and not yet delivered.
    pub queued: i64,
    pub last_ok_ms: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_ms: Option<i64>,
    /// Requests that were answered with success.
    pub delivered_batches: u64,
    /// Changes delivered.
    pub delivered_changes: u64,
    /// Games the target did not take (the cloud: changed there by an arbiter; Lichess: its
    /// per-game errors).
    pub conflicts: Vec<PushConflict>,
    /// No request before this moment (Lichess asked us to slow down).
    pub waiting_until_ms: Option<i64>,
    /// Another relay on the same PostgreSQL pushes to this target; this one takes over if
    /// that relay goes (`claims::Duty`).
    pub standing_by: bool,
}

/// Every push target's state, as `/health` and the console show it; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Targets(Arc<Mutex<Vec<TargetStatus>>>);

impl Targets {
    /// A new target's entry.
    pub fn register(&self, target: String, kind: &'static str) -> Slot {
        let mut all = self.0.lock();
        all.push(TargetStatus {
            target,
            kind,
            ..Default::default()
        });
        Slot {
            targets: self.clone(),
            index: all.len() - 1,
        }
    }

    /// Every target's state now.
    pub fn all(&self) -> Vec<TargetStatus> {
        self.0.lock().clone()
    }
}

/// One push target's entry in [`Targets`].
#[derive(Clone, Debug)]
pub struct Slot {
    targets: Targets,
    index: usize,
}

impl Slot {
    pub fn edit(&self, f: impl FnOnce(&mut TargetStatus)) {
        if let Some(t) = self.targets.0.lock().get_mut(self.index) {
            f(t);
        }
    }

    /// The target's state now (the tests read it; `/health` reads every target's).
    #[cfg(test)]
    pub fn status(&self) -> TargetStatus {
        self.targets
            .0
            .lock()
            .get(self.index)
            .cloned()
            .unwrap_or_default()
    }

    pub fn failed(&self, error: String) {
        self.edit(|t| {
            if t.last_error.as_deref() != Some(error.as_str()) {
                tracing::warn!(target = %t.target, error = %error, "push failed; trying again");
            }
            t.last_error = Some(error);
            t.last_error_ms = Some(now_ms());
        });
    }
}
