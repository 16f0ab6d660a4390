//! Arbiters' edits of games: each committed under the guard of the edit count it was made
//! on (another arbiter's edit first: refused, and the board's recorder takes the stored game
//! back), then announced; and the moves, takebacks and results typed for boards without
//! e-boards, which go the same way without the guard.

use super::state::Writer;
use crate::serve::events::Event;
use crate::serve::jobs::{EditAction, GameEdit};
use crate::serve::wire::ServerMessage;
use relay_store::{Op, Seq, Store, StoreError};

/// An arbiter's change committed with its guard: refused when the game's edit count is no
/// longer the one the change was made on. Returns the change's number.
async fn guarded(store: &Store, edit: &GameEdit, op: Op) -> Result<Seq, StoreError> {
    let game = op.game();
    let ops = match edit.edits {
        Some(edits) => vec![Op::Guard { game, edits }, op],
        None => vec![op],
    };
    store
        .commit(&[], &ops)
        .await?
        .last()
        .copied()
        .flatten()
        .map(Seq::from)
        .ok_or_else(|| StoreError::Conflict(format!("game {game}: the change was not stored")))
}

impl Writer {
    pub(super) async fn edit(&mut self, edit: &GameEdit) -> Result<Seq, StoreError> {
        match self.edit_stored(edit).await {
            Err(StoreError::Conflict(m)) => {
                // Another arbiter's edit came first: the hall has already given the board's
                // recorder this one, so it takes the stored game back.
                if let Err(e) = self.foreign(edit.game_id, true).await {
                    tracing::warn!(game = %edit.game_id, error = %e, "stored game not re-read after a conflict");
                }
                Err(StoreError::Conflict(m))
            }
            other => other,
        }
    }

    pub(super) async fn edit_stored(&mut self, edit: &GameEdit) -> Result<Seq, StoreError> {
        let store = self.store.clone();
        let g = store.game(edit.game_id).await?;
        let (game, round) = (g.id, g.round_id);
        let seq = match &edit.action {
            EditAction::Truncate { from_ply } => {
                let seq = guarded(
                    &store,
                    edit,
                    Op::Truncate {
                        game,
                        from_ply: *from_ply,
                        actor: "arbiter".into(),
                        reason: "truncated by the arbiter".into(),
                    },
                )
                .await?;
                self.parts.publisher.publish(Event::new(
                    round,
                    Some(game),
                    seq,
                    &ServerMessage::Truncate {
                        seq,
                        game_id: game,
                        from_ply: *from_ply,
                    },
                ));
                seq
            }
            EditAction::Typed => {
                let m = edit.moves.last().cloned().ok_or_else(|| {
                    StoreError::Conflict(format!("game {game}: a typed move without its move"))
                })?;
                let op = Op::Move { game, m };
                let record = op.record();
                // A ply stored meanwhile (the same move sent twice at once) is refused here.
                let seq = guarded(&store, edit, op).await?;
                if let Some(message) = ServerMessage::from_change(seq, game, record) {
                    self.parts.metrics.moves_committed.inc();
                    self.parts
                        .publisher
                        .publish(Event::new(round, Some(game), seq, &message));
                }
                seq
            }
            EditAction::Replace { what } => {
                let seq = store
                    .replace_moves_on(game, edit.edits, &edit.moves, "arbiter")
                    .await?;
                tracing::info!(%game, %what, "game corrected by the arbiter");
                self.publish_game(game, seq, true).await?;
                seq
            }
            EditAction::Result {
                result,
                termination,
                status,
            } => {
                let seq = guarded(
                    &store,
                    edit,
                    Op::Result {
                        game,
                        result: result.to_string(),
                        termination: termination.clone(),
                        status: status.to_string(),
                        actor: "arbiter".into(),
                    },
                )
                .await?;
                self.parts.publisher.publish(Event::new(
                    round,
                    Some(game),
                    seq,
                    &ServerMessage::Result {
                        seq,
                        game_id: game,
                        result: *result,
                        termination: termination.clone(),
                        status: *status,
                    },
                ));
                seq
            }
        };
        self.committed(round, seq);
        if let Some(serial) = self.slots.playing(game) {
            match &edit.action {
                EditAction::Result { result, status, .. } => {
                    if let Some(s) = self.slots.get_mut(&serial) {
                        s.result = *result;
                        s.status = *status;
                    }
                }
                // The store is the truth after a change of moves.
                _ => {
                    let g = store.game(game).await?;
                    if let Some(s) = self.slots.get_mut(&serial) {
                        s.moves = g.moves;
                    }
                }
            }
        }
        Ok(seq)
    }
}
