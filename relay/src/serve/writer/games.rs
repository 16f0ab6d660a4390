//! Syncing e-boards to games: which stored game an e-board's moves go to (its assignment,
//! the next free board, the next round after a game), a new game or start position stored
//! before its moves, an arbiter's assignment, and another relay's change of a game one of
//! this relay's boards plays.

use super::carry::{Slot, load_carry};
use super::group::Group;
use super::state::{Writer, retrying};
use crate::serve::events::Event;
use crate::serve::jobs::{HallCommand, Resume, Snapshot};
use crate::serve::views::{GameStatus, game_view, stored_result};
use crate::serve::wire::ServerMessage;
use relay_core::game::GameResult;
use relay_store::{GameId, RoundId, Seq};
use relay_store::{StoreError, StoredGame};
use serde_json::json;
use std::collections::HashMap;

/// What the board's game needs stored before its moves, against the stored game `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Setup {
    /// Nothing: the same game, from the same position, the board's way known.
    None,
    /// Where the game starts or how the board lies, on the same stored game (nothing on it
    /// yet, or the same game going on).
    Start,
    /// A new game after one with moves or a result: it is the next round's, then its start.
    NextGame,
    /// The same game going on from another position: its moves so far go, then its start.
    Restart,
}

pub(super) fn setup(slot: &Slot, snap: &Snapshot) -> Setup {
    let new_game = slot.game_no != snap.game_no;
    let new_start = slot.start_fen != snap.start_fen;
    let orientation_known = slot.orientation.is_none() && snap.orientation.is_some();
    if new_game && (!slot.moves.is_empty() || slot.result != GameResult::Ongoing) {
        Setup::NextGame
    } else if !new_game && new_start && !slot.moves.is_empty() {
        Setup::Restart
    } else if new_game || new_start || orientation_known {
        Setup::Start
    } else {
        Setup::None
    }
}

impl Writer {
    /// The stored game an e-board's moves go to: its assignment in the current round, else
    /// the next free board number there.
    pub(super) async fn slot_for(&mut self, serial: &str, port: &str) -> Result<Slot, StoreError> {
        if let Some(s) = self.slots.get(serial) {
            return Ok(s.clone());
        }
        let store = self.store.clone();
        // An arbiter may have opened a new round or closed this one since.
        if let Some(r) = store.current_round().await? {
            self.current = r;
        }
        let round = self.current.id;
        let board_no = match store
            .assignments(round)
            .await?
            .into_iter()
            .find(|(_, s)| s == serial)
        {
            Some((b, _)) => b,
            None => store.free_board_no(round, self.slots.first_board()).await?,
        };
        let (game, seq) = store.assign(round, board_no, serial, Some(port)).await?;
        self.committed(round, seq);
        tracing::info!(%serial, board_no, %round, "e-board placed on a board");
        let slot = Slot::stored(&store.game(game).await?, 0);
        self.bind(serial, slot.clone());
        self.publish_game(game, seq, true).await?;
        Ok(slot)
    }

    /// Stores what the board's game has that the stored one lacks: first, when the board
    /// was set up for a new game or from another position, where the game starts (in the
    /// next round, after a finished game); then its moves, clocks and result as a group
    /// commit of this one game would.
    pub(super) async fn sync(&mut self, snap: &Snapshot) -> Result<(), StoreError> {
        let store = self.store.clone();
        let mut slot = self.slot_for(&snap.serial, &snap.port).await?;
        let before = setup(&slot, snap);
        if before == Setup::NextGame {
            if slot.result == GameResult::Ongoing
                && matches!(slot.status, GameStatus::Pending | GameStatus::Live)
            {
                // Its board began a new game: this one is over, its result awaited from the
                // arbiter. It is no longer live for spectators.
                let seq = store
                    .set_result(slot.game_id, "*", None, "finished", "recorder")
                    .await?;
                self.committed(slot.round_id, seq);
                tracing::info!(serial = %snap.serial, game = %slot.game_id, "the board began a new game: the last one awaits its result");
            }
            // The board was set up again after a game: the new game is the next round's.
            slot = self.next_round_slot(&slot, snap).await?;
        } else if before == Setup::Restart {
            // The game goes on from another position (an arbiter had it continue from the
            // board): its moves so far were from the old one.
            let seq = store
                .truncate_moves(
                    slot.game_id,
                    1,
                    "recorder",
                    "the game continues from the position on the board",
                )
                .await?;
            self.committed(slot.round_id, seq);
            slot.moves.clear();
            self.update_slot(&snap.serial, &slot);
        }
        if before != Setup::None {
            self.start_game(&mut slot, snap).await?;
        }
        // What differs from the stored game, as in a group commit of this one game.
        let mut group = Group::default();
        self.plan(Box::new(snap.clone()), &mut group);
        let seqs = if group.ops.is_empty() {
            Vec::new()
        } else {
            store.commit(&[], &group.ops).await?
        };
        // A lone board game has no jobs waiting on it.
        let rest = self.announce(group.shadows, group.after, &group.ops, &seqs);
        debug_assert!(rest.is_empty());
        Ok(())
    }

    /// The e-board's game in the round after `slot`'s: its board there if it has one, else
    /// the same board number when free, else the next free one.
    async fn next_round_slot(&mut self, slot: &Slot, snap: &Snapshot) -> Result<Slot, StoreError> {
        let store = self.store.clone();
        let next = store.next_round(slot.round_id).await?;
        let taken = store.assignments(next.id).await?;
        let board_no = match taken.iter().find(|(_, s)| *s == snap.serial) {
            Some((b, _)) => *b,
            None if !taken.iter().any(|(b, _)| *b == slot.board_no) => slot.board_no,
            None => {
                store
                    .free_board_no(next.id, self.slots.first_board())
                    .await?
            }
        };
        let (game, seq) = store
            .assign(next.id, board_no, &snap.serial, Some(&snap.port))
            .await?;
        self.committed(next.id, seq);
        tracing::info!(serial = %snap.serial, round = %next.number, board_no, "new game on the e-board: next round");
        if next.id > self.current.id {
            self.current = next.clone();
        }
        Ok(Slot::stored(&store.game(game).await?, snap.game_no))
    }

    /// Stores where the board's game starts and which way the board stands, takes the game
    /// as the e-board's, and tells clients the game whole.
    async fn start_game(&mut self, slot: &mut Slot, snap: &Snapshot) -> Result<(), StoreError> {
        let seq = self
            .store
            .start_game(
                slot.game_id,
                snap.start_fen.as_deref(),
                snap.chess960,
                snap.orientation,
            )
            .await?;
        self.committed(slot.round_id, seq);
        slot.game_no = snap.game_no;
        slot.orientation = snap.orientation.map(str::to_string);
        slot.start_fen = snap.start_fen.clone();
        self.bind(&snap.serial, slot.clone());
        self.publish_game(slot.game_id, seq, true).await
    }

    pub(super) async fn publish_game(
        &mut self,
        game: GameId,
        seq: Seq,
        fresh: bool,
    ) -> Result<(), StoreError> {
        let g = self.store.game(game).await?;
        self.publish_stored(&g, seq, fresh);
        Ok(())
    }

    /// Tells clients a game whole as `g` has it (read after change `seq`).
    pub(super) fn publish_stored(&self, g: &StoredGame, seq: Seq, fresh: bool) {
        let serial = self.parts.boards.eboard_on(g.id);
        let view = game_view(g, None, serial.as_deref(), None);
        let mut e = Event::new(
            g.round_id,
            Some(g.id),
            seq,
            &ServerMessage::Game {
                seq,
                game: Box::new(view),
            },
        );
        // A game re-read after a surprise carries no new change number; it must reach
        // clients that already have that number.
        e.change = fresh;
        self.parts.publisher.publish(e);
    }

    /// Puts an e-board on a board: its moves go to that game from now on (the recorder's
    /// whole game is written there at its next change), and an e-board that was on the
    /// board is taken off it.
    pub(super) async fn assign(
        &mut self,
        round: RoundId,
        board_no: u32,
        serial: &str,
    ) -> Result<GameId, StoreError> {
        let store = self.store.clone();
        let (game, seq) = store.assign(round, board_no, serial, None).await?;
        self.committed(round, seq);
        store
            .audit(
                "arbiter",
                "assign",
                Some(game),
                &json!({"round": round, "board_no": board_no, "serial": serial}).to_string(),
            )
            .await?;
        self.slots.only_on(game, serial);
        let g = store.game(game).await?;
        let game_no = self.slots.get(serial).map_or(0, |s| s.game_no);
        self.bind(serial, Slot::stored(&g, game_no));
        if round > self.current.id {
            self.current = store.round(round).await?;
        }
        self.publish_game(game, seq, true).await?;
        Ok(game)
    }

    /// Reads an e-board's game back from the store (same game, same game number) and
    /// announces it whole.
    pub(super) async fn reload_slot(&mut self, serial: &str) -> Result<(), StoreError> {
        let Some(mut slot) = self.slots.get(serial).cloned() else {
            return Ok(());
        };
        let g = self.store.game(slot.game_id).await?;
        slot.moves = g.moves;
        slot.result = stored_result(&g.result);
        slot.status = GameStatus::stored(&g.status);
        slot.orientation = g.orientation;
        slot.start_fen = g.start_fen;
        self.bind(serial, slot.clone());
        let seq = self.store.round(slot.round_id).await?.seq;
        self.publish_game(slot.game_id, seq, false).await
    }

    /// Every e-board's stored game but those of `keep`, read again (see `Job::Reload`);
    /// returns what their recorders resume from.
    pub(super) async fn reload(&mut self, keep: &[String]) -> HashMap<String, Resume> {
        let loaded = retrying!(self, load_carry(&self.store).await);
        let (slots, mut resume) = loaded.unwrap_or_else(|e| {
            tracing::error!(error = %e, "stored games not readable for the take-over");
            Default::default()
        });
        self.slots.keep_only(keep);
        let mut out = HashMap::new();
        for (serial, slot) in slots {
            if self.slots.contains(&serial) {
                continue;
            }
            if let Some(r) = resume.remove(&serial) {
                out.insert(serial.clone(), r);
            }
            self.bind(&serial, slot);
        }
        out
    }

    /// A change to `game` committed by another relay: when one of our boards plays the game
    /// and the store no longer holds what we stored (an arbiter corrected it there), our
    /// picture takes the stored game and the board's recorder carries on from it.
    pub(super) async fn foreign(&mut self, game: GameId, force: bool) -> Result<(), StoreError> {
        let Some(serial) = self.slots.playing(game) else {
            return Ok(());
        };
        let g = self.store.game(game).await?;
        let Some(slot) = self.slots.get_mut(&serial) else {
            return Ok(());
        };
        let same_moves = slot.moves.len() == g.moves.len()
            && slot.moves.iter().zip(&g.moves).all(|(a, b)| a.uci == b.uci);
        let (result, status) = (stored_result(&g.result), GameStatus::stored(&g.status));
        if !force && same_moves && slot.result == result && slot.status == status {
            // Our own change, read back before we announced it.
            return Ok(());
        }
        tracing::info!(%game, %serial, "another relay changed this board's game: the board carries on from the stored game");
        slot.moves = g.moves.clone();
        slot.result = result;
        slot.status = status;
        self.slots.adopt(&serial);
        if !self.parts.hall.send(HallCommand::Adopt {
            serial: serial.clone(),
            game_id: game,
            moves: g.moves,
            result: stored_result(&g.result),
        }) {
            self.slots.adopted(&serial);
        }
        Ok(())
    }
}
