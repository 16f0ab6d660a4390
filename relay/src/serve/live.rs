//! The boards' live state, which the store does not hold: each e-board as the operator sees
//! it, each game's running clock, and which e-board is on which game. Written by the writer
//! (and the hall, for an e-board's last-seen time), by the follower for e-boards other relays
//! read, and by the cloud's push route for a venue's; read by HTTP, the views and the pushers.

use super::views::{ClockView, EboardView};
use parking_lot::RwLock;
use relay_store::{GameId, RoundId};
use std::collections::{BTreeMap, HashMap};

/// The boards' live state, which the store does not hold: each e-board as the operator sees
/// it, each game's running clock, and which e-board is on which game. Written by the writer
/// (and the hall, for an e-board's last-seen time); read by HTTP and the views.
#[derive(Debug, Default)]
pub struct Boards {
    eboards: RwLock<BTreeMap<String, EboardView>>,
    clocks: RwLock<HashMap<GameId, ClockView>>,
    /// Which e-board is on which game now (game id → serial).
    bound: RwLock<HashMap<GameId, String>>,
    /// The other way: e-board serial → (game id, the hall's game number it holds).
    games_of: RwLock<HashMap<String, (GameId, u64)>>,
    /// The round each e-board's news last went to (its view's round changes when it is put
    /// on a game, before the news is told).
    told: RwLock<HashMap<String, RoundId>>,
}

/// Why an e-board was not forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotForgotten {
    Unknown,
    Connected,
}

impl Boards {
    pub fn eboards(&self) -> Vec<EboardView> {
        self.eboards.read().values().cloned().collect()
    }

    pub fn eboard(&self, serial: &str) -> Option<EboardView> {
        self.eboards.read().get(serial).cloned()
    }

    /// Keeps an e-board's announced view; the board as read and the last-seen time stay as
    /// they are when the hall has since noted later ones (an announcement reaches the writer
    /// after the readings it came from are logged, which may be after newer readings).
    pub fn put_eboard(&self, mut view: EboardView) {
        let mut map = self.eboards.write();
        if let Some(old) = map.get(&view.serial)
            && old.last_seen_ms > view.last_seen_ms
        {
            view.last_seen_ms = old.last_seen_ms;
            view.board_fen.clone_from(&old.board_fen);
        }
        map.insert(view.serial.clone(), view);
    }

    /// Changes a known e-board's view; `false` when it is not known.
    pub fn edit_eboard(&self, serial: &str, f: impl FnOnce(&mut EboardView)) -> bool {
        match self.eboards.write().get_mut(serial) {
            Some(v) => {
                f(v);
                true
            }
            None => false,
        }
    }

    /// Notes that `serial`'s news goes to `round`; the round it went to before when that
    /// was another.
    pub fn tell_round(&self, serial: &str, round: RoundId) -> Option<RoundId> {
        self.told
            .write()
            .insert(serial.to_string(), round)
            .filter(|old| *old != round)
    }

    /// Forgets an e-board that is not connected.
    pub fn forget_eboard(&self, serial: &str) -> Result<(), NotForgotten> {
        let mut map = self.eboards.write();
        match map.get(serial) {
            None => Err(NotForgotten::Unknown),
            Some(e) if e.connected => Err(NotForgotten::Connected),
            Some(_) => {
                map.remove(serial);
                self.told.write().remove(serial);
                Ok(())
            }
        }
    }

    pub fn clock(&self, game: GameId) -> Option<ClockView> {
        self.clocks.read().get(&game).copied()
    }

    pub fn set_clock(&self, game: GameId, clock: ClockView) {
        self.clocks.write().insert(game, clock);
    }

    /// Every game's running clock, for building many views at once.
    pub fn all_clocks(&self) -> HashMap<GameId, ClockView> {
        self.clocks.read().clone()
    }

    /// The serial of the e-board on `game`.
    pub fn eboard_on(&self, game: GameId) -> Option<String> {
        self.bound.read().get(&game).cloned()
    }

    /// Which e-board is on which game, for building many views at once.
    pub fn all_bound(&self) -> HashMap<GameId, String> {
        self.bound.read().clone()
    }

    /// The game (and the hall's game number) an e-board is on.
    pub fn game_of(&self, serial: &str) -> Option<(GameId, u64)> {
        self.games_of.read().get(serial).copied()
    }

    /// Puts an e-board on a game (off any other).
    pub fn bind(&self, serial: &str, game: GameId, game_no: u64, board_no: u32, round: RoundId) {
        {
            let mut bound = self.bound.write();
            bound.retain(|_, s| s != serial);
            bound.insert(game, serial.to_string());
        }
        self.games_of
            .write()
            .insert(serial.to_string(), (game, game_no));
        if let Some(v) = self.eboards.write().get_mut(serial) {
            v.game_id = Some(game);
            v.board_no = Some(board_no);
            v.round_id = Some(round);
        }
    }
}
