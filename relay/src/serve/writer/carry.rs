//! Where each e-board's game is stored ([`Slot`]), and reading them all back at start-up
//! or when this relay takes over a port another relay was reading ([`load_carry`]).

use crate::serve::jobs::{Resume, parse_orientation};
use crate::serve::views::{GameStatus, stored_result};
use relay_core::game::GameResult;
use relay_store::{GameId, RoundId};
use relay_store::{Store, StoreError, StoredGame, StoredMove};
use std::collections::HashMap;

/// Where an e-board's game is stored, and what the store has of it.
#[derive(Debug, Clone)]
pub struct Slot {
    pub game_id: GameId,
    pub round_id: RoundId,
    pub board_no: u32,
    pub game_no: u64,
    pub moves: Vec<StoredMove>,
    pub result: GameResult,
    /// pending, live, finished (by the board) or confirmed (by an arbiter).
    pub status: GameStatus,
    pub orientation: Option<String>,
    /// Where the stored game starts (`None`: the standard position).
    pub start_fen: Option<String>,
}

impl Slot {
    /// The writer's picture of the stored game `g`, as the board's `game_no`-th game.
    pub fn stored(g: &StoredGame, game_no: u64) -> Slot {
        Slot {
            game_id: g.id,
            round_id: g.round_id,
            board_no: g.pairing.board_no,
            game_no,
            moves: g.moves.clone(),
            result: stored_result(&g.result),
            status: GameStatus::stored(&g.status),
            orientation: g.orientation.clone(),
            start_fen: g.start_fen.clone(),
        }
    }
}

/// Each e-board's game in the newest open round it is assigned in, as the writer's picture of
/// it and as what its recorder resumes from (at start-up, and when this relay takes over a
/// port another relay was reading).
pub async fn load_carry(
    store: &Store,
) -> Result<(HashMap<String, Slot>, HashMap<String, Resume>), StoreError> {
    let mut slots = HashMap::new();
    let mut resume = HashMap::new();
    let mut rounds: HashMap<RoundId, Vec<StoredGame>> = HashMap::new();
    for (round, board_no, serial) in store.open_assignments().await? {
        if slots.contains_key(&serial) {
            continue;
        }
        if let std::collections::hash_map::Entry::Vacant(e) = rounds.entry(round) {
            e.insert(store.round_games(round).await?);
        }
        let Some(g) = rounds
            .get(&round)
            .and_then(|gs| gs.iter().find(|g| g.pairing.board_no == board_no))
        else {
            continue;
        };
        slots.insert(serial.clone(), Slot::stored(g, 0));
        if let Some(o) = g.orientation.as_deref().and_then(parse_orientation) {
            resume.insert(
                serial,
                Resume {
                    game: relay_store::to_game(g, "", None, ""),
                    orientation: o,
                    moves: g.moves.clone(),
                },
            );
        }
    }
    Ok((slots, resume))
}

/// The writer's picture of every e-board's stored game, by serial, with the e-boards whose
/// recorder is taking another relay's edit (what they send before that is not stored) and
/// the lowest board number a board is placed on by itself (`--first-board`). Reached only
/// through these methods.
#[derive(Debug)]
pub(super) struct Slots {
    by_serial: HashMap<String, Slot>,
    adopting: std::collections::HashSet<String>,
    first_board: u32,
}

impl Default for Slots {
    fn default() -> Slots {
        Slots {
            by_serial: HashMap::new(),
            adopting: Default::default(),
            first_board: 1,
        }
    }
}

impl Slots {
    pub(super) fn get(&self, serial: &str) -> Option<&Slot> {
        self.by_serial.get(serial)
    }

    pub(super) fn get_mut(&mut self, serial: &str) -> Option<&mut Slot> {
        self.by_serial.get_mut(serial)
    }

    pub(super) fn contains(&self, serial: &str) -> bool {
        self.by_serial.contains_key(serial)
    }

    /// `serial` plays `slot`'s game now.
    pub(super) fn put(&mut self, serial: &str, slot: Slot) {
        self.by_serial.insert(serial.to_string(), slot);
    }

    /// Takes every e-board but `serial` off `game` (an arbiter put `serial` on it).
    pub(super) fn only_on(&mut self, game: GameId, serial: &str) {
        self.by_serial
            .retain(|s, slot| s == serial || slot.game_id != game);
    }

    /// The e-board whose stored game is `game`.
    pub(super) fn playing(&self, game: GameId) -> Option<String> {
        self.by_serial
            .iter()
            .find(|(_, s)| s.game_id == game)
            .map(|(k, _)| k.clone())
    }

    /// Forgets every e-board but those of `keep` (a take-over reads the others again).
    pub(super) fn keep_only(&mut self, keep: &[String]) {
        self.by_serial.retain(|serial, _| keep.contains(serial));
    }

    /// `serial`'s recorder is taking another relay's edit of its game.
    pub(super) fn adopt(&mut self, serial: &str) {
        self.adopting.insert(serial.to_string());
    }

    /// `serial`'s recorder has taken the edit: what it sends is stored again.
    pub(super) fn adopted(&mut self, serial: &str) {
        self.adopting.remove(serial);
    }

    pub(super) fn adopting(&self, serial: &str) -> bool {
        self.adopting.contains(serial)
    }

    pub(super) fn first_board(&self) -> u32 {
        self.first_board
    }

    pub(super) fn set_first_board(&mut self, n: u32) {
        self.first_board = n.max(1);
    }
}
