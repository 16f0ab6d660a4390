//! How a game ends: mate or stalemate on the board, the drawing conditions the rules
//! recognise (flagged for the arbiter), results the board only proposes (kings in the centre,
//! a magic piece, a fallen flag), and results an arbiter gives or confirms.

use super::outcome::{DrawCondition, GameEnd, Outcome, ProposalReason};
use super::phase::Phase;
use super::state::Recorder;
use crate::game::{Game, GameResult};
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, Color, EnPassantMode, Position};

/// Gives `game` the result the board proposed, as an arbiter's confirmation would.
pub fn apply_proposal(game: &mut Game, result: GameResult, reason: ProposalReason) {
    if reason == ProposalReason::TimeForfeit {
        game.tags.set("Termination", "time forfeit");
    }
    game.result = result;
}

/// Whether `side` has too little material to ever mate (for a time forfeit, FIDE 6.9).
pub(super) fn pos_cannot_mate(pos: &Chess, side: Color) -> bool {
    pos.has_insufficient_material(side)
}

impl Recorder {
    pub(super) fn propose(&mut self, result: GameResult, reason: ProposalReason) -> Vec<Outcome> {
        if self.proposal == Some((result, reason)) {
            return Vec::new();
        }
        // A proposal, not an end: the game on the board may go on (players play on after a
        // flag fell until someone claims it), and every move the board shows is recorded
        // until an arbiter confirms a result or the next game is set up.
        self.proposal = Some((result, reason));
        vec![Outcome::ResultProposed { result, reason }]
    }

    /// Game end and drawing conditions after the last move.
    pub(super) fn after_move(&mut self) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(pos) = self.positions.last() else {
            return out;
        };
        if pos.is_checkmate() {
            let result = if pos.turn() == Color::White {
                GameResult::BlackWins
            } else {
                GameResult::WhiteWins
            };
            out.push(Outcome::GameOver {
                result,
                end: GameEnd::Checkmate,
            });
        } else if pos.is_stalemate() {
            out.push(Outcome::GameOver {
                result: GameResult::Draw,
                end: GameEnd::Stalemate,
            });
        }
        if let Some(Outcome::GameOver { result, .. }) = out.first() {
            self.phase = Phase::EndedOnBoard;
            if let Some(g) = self.game.as_mut() {
                g.result = *result;
            }
            return out;
        }
        let hash = |p: &Chess| p.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
        let now = hash(pos);
        let repeats = self.positions.iter().filter(|p| hash(p) == now).count();
        let mut conditions = Vec::new();
        if pos.is_insufficient_material() {
            conditions.push(DrawCondition::InsufficientMaterial);
        }
        if repeats >= 5 {
            conditions.push(DrawCondition::FivefoldRepetition);
        } else if repeats >= 3 {
            conditions.push(DrawCondition::ThreefoldRepetition);
        }
        if pos.halfmoves() >= 150 {
            conditions.push(DrawCondition::SeventyFiveMoves);
        } else if pos.halfmoves() >= 100 {
            conditions.push(DrawCondition::FiftyMoves);
        }
        for c in conditions {
            // Repetitions are flagged each time they occur; the others once.
            let repeatable = matches!(
                c,
                DrawCondition::ThreefoldRepetition | DrawCondition::FivefoldRepetition
            );
            if repeatable || !self.flagged.contains(&c) {
                self.flagged.push(c);
                out.push(Outcome::Draw { condition: c });
            }
        }
        out
    }

    /// Arbiter: the proposed result is right. A time forfeit is written with
    /// `[Termination "time forfeit"]` (PGN standard §9.8.1).
    pub fn confirm_proposal(&mut self) -> Option<GameResult> {
        let (result, reason) = self.proposal?;
        if let Some(g) = self.game.as_mut() {
            apply_proposal(g, result, reason);
        }
        self.set_result(result);
        Some(result)
    }

    /// Arbiter: a result is set or confirmed.
    pub fn set_result(&mut self, result: GameResult) {
        if let Some(g) = self.game.as_mut() {
            g.result = result;
        }
        self.phase = self.phase.with_result(result != GameResult::Ongoing);
        self.proposal = None;
    }
}
