//! How a game ends: mate or stalemate on the board, the drawing conditions the rules
//! recognise (flagged for the arbiter), results the board only proposes (kings in the centre,
//! a magic piece, a fallen flag), and results an arbiter gives or confirms.

use super::outcome::{DrawCondition, GameEnd, Outcome, ProposalReason};
use super::phase::Phase;
use super::state::Recorder;
use crate::game::{Game, GameResult};
use crate::infer::Inference;
use boards::protocol::{ClockReading, ClockSide, MagicPiece};
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
fn pos_cannot_mate(pos: &Chess, side: Color) -> bool {
    pos.has_insufficient_material(side)
}

impl Recorder {
    /// The result a magic piece on the board proposes (the first one read, if several).
    pub(super) fn magic_piece_result(&self) -> Option<GameResult> {
        let placement_magic = self.board.magic_pieces();
        let (_, magic) = placement_magic.first()?;
        Some(match magic {
            MagicPiece::Draw => GameResult::Draw,
            MagicPiece::WhiteWins => GameResult::WhiteWins,
            MagicPiece::BlackWins => GameResult::BlackWins,
        })
    }

    /// A fallen flag in the reading `r`: the other side wins, unless it cannot mate (then a
    /// draw). Proposed only while the game goes on and which side is White is known.
    pub(super) fn flag_fell(&mut self, r: &ClockReading) -> Vec<Outcome> {
        let mut out = Vec::new();
        for side in [ClockSide::Left, ClockSide::Right] {
            if r.side(side).flag_fallen
                && !self.phase.is_over()
                && let (Some(w), Some(pos)) = (self.clocks.white_side(), self.positions.last())
            {
                let loser = if side == w {
                    Color::White
                } else {
                    Color::Black
                };
                let winner = !loser;
                let result =
                    if pos.board().by_color(winner).count() == 1 || pos_cannot_mate(pos, winner) {
                        GameResult::Draw
                    } else if winner == Color::White {
                        GameResult::WhiteWins
                    } else {
                        GameResult::BlackWins
                    };
                out.extend(self.propose(result, ProposalReason::TimeForfeit));
            }
        }
        out
    }

    /// After a mate or stalemate on the board, whether `inference` undoes the end (and then
    /// the game goes on, its result taken back). Only the end can be undone: the mating move
    /// corrected or taken back (with the move before it at most). A board far back in the
    /// game after a mate is the next game being set up, never a takeback of the whole game.
    pub(super) fn reopen_end(&mut self, inference: &Inference) -> bool {
        let n = self.positions.len().saturating_sub(1);
        let near_end = |keep: usize| keep + 2 >= n;
        match inference {
            Inference::Correction(_) => {}
            Inference::Takeback { ply } if near_end(*ply) => {}
            Inference::Rewrite { keep, .. } if near_end(*keep) => {}
            _ => return false,
        }
        self.phase = Phase::Playing;
        if let Some(g) = self.game.as_mut() {
            g.result = GameResult::Ongoing;
        }
        true
    }

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
