//! The running-clock readings of each round waiting for its next `clocks` message (see
//! `clocks`): the latest reading of each game, announced together every 10 s.

use crate::serve::views::ClockView;
use relay_store::{GameId, RoundId};
use std::collections::{BTreeMap, HashMap};

/// The running-clock readings waiting for their round's next `clocks` message: the latest of
/// each game, per round.
#[derive(Debug, Default)]
pub(super) struct ClockBundle(HashMap<RoundId, BTreeMap<GameId, ClockView>>);

impl ClockBundle {
    /// Keeps `clock` as `game`'s reading in the round's next message (replacing an older one).
    pub(super) fn hold(&mut self, round: RoundId, game: GameId, clock: ClockView) {
        self.0.entry(round).or_default().insert(game, clock);
    }

    /// Drops `game`'s waiting reading (a newer one was announced on its own).
    pub(super) fn drop_game(&mut self, round: RoundId, game: GameId) {
        if let Some(b) = self.0.get_mut(&round) {
            b.remove(&game);
        }
    }

    /// Every round's waiting readings, in game order, leaving none.
    pub(super) fn take(&mut self) -> Vec<(RoundId, Vec<(GameId, ClockView)>)> {
        std::mem::take(&mut self.0)
            .into_iter()
            .filter(|(_, clocks)| !clocks.is_empty())
            .map(|(round, clocks)| (round, clocks.into_iter().collect()))
            .collect()
    }
}
