//! The sources this relay polls and what each poll found, which the routes read; and what
//! polling needs of the service.

use crate::serve::id::RoundId;
use crate::serve::jobs::ToHall;
use crate::serve::live::Boards;
use parking_lot::Mutex;
use relay_store::Store;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::watch;

/// A source as the arbiter sees it: what it is and what its polls found.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct SourceState {
    pub id: i64,
    pub round_id: i64,
    pub url: String,
    /// The boards it may fill ("" for any).
    pub boards: String,
    /// When it was last asked (ms since the epoch), and what came back: "200", "304", or the
    /// error.
    pub last_poll_ms: Option<i64>,
    pub last_status: String,
    pub polls: u64,
    /// Polls that failed, and the last failure's words.
    pub errors: u64,
    pub last_error: Option<String>,
    /// Games of the last PGN read, and those placed on a board of the round.
    pub games: usize,
    pub matched: usize,
    /// Moves it has given the round so far.
    pub moves: u64,
    /// Where the source and the round disagree and the round's game was kept (an e-board's
    /// game, a game changed by hand), one line each, as of the last poll.
    pub clashes: Vec<String>,
    /// Games of the PGN no board took, by their players, as of the last poll.
    pub unmatched: Vec<String>,
}

/// What polling a source needs of the service: the store (the round's games), the boards
/// (which games an e-board plays), the hall (where the changes go), the registry and the
/// service's end.
#[derive(Clone, Debug)]
pub struct Polling {
    pub store: Store,
    pub boards: Arc<Boards>,
    pub hall: ToHall,
    pub sources: Arc<Sources>,
    pub closing: watch::Receiver<bool>,
}

/// The sources this relay polls.
#[derive(Default)]
pub struct Sources {
    pub(super) states: Mutex<HashMap<i64, SourceState>>,
    pub(super) stops: Mutex<HashMap<i64, Arc<AtomicBool>>>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("polled", &self.states.lock().len())
            .finish()
    }
}

impl Sources {
    /// The sources of `round`, oldest first.
    pub fn of_round(&self, round: RoundId) -> Vec<SourceState> {
        let mut list: Vec<SourceState> = self
            .states
            .lock()
            .values()
            .filter(|s| s.round_id == round.get())
            .cloned()
            .collect();
        list.sort_by_key(|s| s.id);
        list
    }

    /// Stops polling a source.
    pub fn stop(&self, id: i64) {
        if let Some(flag) = self.stops.lock().remove(&id) {
            flag.store(true, Ordering::Relaxed);
        }
        self.states.lock().remove(&id);
    }

    pub(super) fn update(&self, id: i64, f: impl FnOnce(&mut SourceState)) {
        if let Some(s) = self.states.lock().get_mut(&id) {
            f(s);
        }
    }
}
