//! What the analysis desk hears of the games: each position a move reaches, and moves taken
//! back. The publisher tells it as the live feeds get their events (after the commit), so a
//! position is never evaluated before it is stored.

use relay_store::{GameId, RoundId, Seq};
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;

/// A position a game reached: the position after move `ply`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reached {
    pub round: RoundId,
    pub game: GameId,
    pub ply: u32,
    pub fen: String,
    /// When the move went out live (the event's time): a delayed feed shows it `delay` after.
    pub at_ms: i64,
    /// The round's change number of the move.
    pub seq: Seq,
}

/// News of a game's positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum News {
    Reached(Reached),
    /// The moves from `from_ply` on are gone.
    Cut {
        game: GameId,
        from_ply: u32,
    },
}

/// The way to the desk; does nothing until a desk is connected (evaluation is off unless
/// workers are wanted). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Intake(Arc<OnceLock<mpsc::UnboundedSender<News>>>);

impl Intake {
    /// From now on news goes to `tx` (the first connection stays).
    pub fn connect(&self, tx: mpsc::UnboundedSender<News>) {
        let _ = self.0.set(tx);
    }

    pub fn is_on(&self) -> bool {
        self.0.get().is_some()
    }

    pub fn tell(&self, news: News) {
        if let Some(tx) = self.0.get() {
            let _ = tx.send(news);
        }
    }
}
