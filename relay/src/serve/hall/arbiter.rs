//! What arbiters ask of the hall: a game going on from the position on the board, an edit
//! of a game an e-board plays (its recorder carries on from the edited game), and another
//! relay's edit adopted.

use super::desk::{Desk, snapshot};
use super::state::Hall;
use crate::serve::jobs::{EditAction, GameEdit, Job, Refusal};
use relay_core::game::GameResult;
use relay_core::recorder::Outcome;
use relay_store::GameId;
use relay_store::StoredMove;

impl Hall {
    /// An arbiter says the game goes on from what the board shows (a game joined in the
    /// middle, or one the recorder lost track of).
    pub(super) fn continue_from_board(
        &mut self,
        serial: &str,
        white_to_move: bool,
    ) -> Result<(), Refusal> {
        let Some(d) = self.desks.get_mut(serial) else {
            return Err(Refusal::NotFound(format!(
                "e-board {serial} has not been seen"
            )));
        };
        let turn = if white_to_move {
            shakmaty::Color::White
        } else {
            shakmaty::Color::Black
        };
        let outs = (d.recorder.continue_from_board(turn)).map_err(Refusal::Conflict)?;
        tracing::info!(%serial, "arbiter: game continues from the board's position");
        // The same game goes on (not a new one): its start changes and its moves start over.
        d.sent.clear();
        d.sent_result = GameResult::Ongoing;
        let rest: Vec<Outcome> = outs
            .into_iter()
            .filter(|o| !matches!(o, Outcome::NewGame { .. }))
            .collect();
        if let Some(snap) = snapshot(serial, d) {
            self.writer.send(Job::Sync(Box::new(snap)));
        }
        self.after(serial, &rest);
        Ok(())
    }

    /// An arbiter changed a game: if an e-board is on it, its recorder carries on from the
    /// changed game; then the writer stores the change.
    pub(super) fn on_edit(&mut self, edit: GameEdit) {
        // The recorder is touched only if its game is the edited one (a new game set up on
        // the board may not be stored yet).
        let cfg = self.cfg.clone();
        if let Some(serial) = self.boards.eboard_on(edit.game_id)
            && let Some(d) = self.desk_playing(&serial, edit.game_id)
        {
            match &edit.action {
                EditAction::Result { result, .. } => {
                    // Only the result changes; moves the recorder has stay as they are.
                    if d.recorder.game().is_some() {
                        d.recorder.set_result(*result);
                        d.sent_result = *result;
                    }
                }
                // The board may still show what the arbiter removed; the recorder will say
                // so (out of sync) until the board is put right.
                _ => d.carry_on_from(cfg, &edit.moves, None),
            }
            d.view.proposal = None;
        }
        self.writer.send(Job::Edit(edit));
    }

    /// Another relay's arbiter changed the game `serial` plays: its recorder carries on from
    /// the stored game (as after an edit made here, but nothing is sent to be stored).
    pub(super) fn adopt(
        &mut self,
        serial: &str,
        game_id: GameId,
        moves: &[StoredMove],
        result: GameResult,
    ) {
        let cfg = self.cfg.clone();
        if let Some(d) = self.desk_playing(serial, game_id) {
            d.carry_on_from(cfg, moves, Some(result));
            d.view.proposal = None;
        }
    }

    /// The desk of `serial` when its recorder's game is `game_id` (a new game set up on the
    /// board may not be stored yet, and is not that game).
    pub(super) fn desk_playing(&mut self, serial: &str, game_id: GameId) -> Option<&mut Desk> {
        let on = self.boards.game_of(serial);
        self.desks
            .get_mut(serial)
            .filter(|d| on == Some((game_id, d.game_no)) && d.recorder.game().is_some())
    }
}
