//! A still board read into the game: what [`infer`](crate::infer) makes of it (a move, moves
//! missed, a takeback, a correction, a board it cannot explain) applied to the moves, and the
//! game's position to restore when the board has left it.

use super::beginning::reaches;
use super::clocks::Clocks;
use super::outcome::{Outcome, ProposalReason};
use super::phase::Phase;
use super::state::Recorder;
use crate::game::{Game, GameResult};
use crate::infer::{History, Inference, infer};
use boards::protocol::MagicPiece;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Board, CastlingMode, EnPassantMode, Move, Position};

/// The most plies taken back to the start position as a false start; the start position
/// after a longer game is the next game.
const MAX_FALSE_START: usize = 2;

impl Recorder {
    pub(super) fn evaluate(&mut self) -> Vec<Outcome> {
        let mut out = Vec::new();
        // A new game: the start position set up with no game yet, after a finished one, after
        // one whose result the board proposed, or after one of more than two plies (players
        // who resign set the pieces up again; taking back a whole game is not done, and
        // reading it so would wipe the game: it keeps its moves for the arbiter's result).
        // Only a false start of a ply or two goes back to the start as a takeback.
        // (A start position the game's own moves lead to, knights going back home, is moves.)
        let ended = self.game.is_none() || self.phase.is_over() || self.proposal.is_some();
        let long_game = self
            .game
            .as_ref()
            .is_some_and(|g| g.moves.len() > MAX_FALSE_START);
        if (ended || long_game)
            && let Some((orientation, start, chess960)) = self.start_position()
            && (ended
                || !self
                    .positions
                    .last()
                    .is_some_and(|p| reaches(p, start.board(), 2)))
        {
            let fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
            let game = Game {
                start,
                castling_mode: if chess960 {
                    CastlingMode::Chess960
                } else {
                    CastlingMode::Standard
                },
                ..Game::default()
            };
            self.orientation = Some(orientation);
            self.replaced = self.game.take().filter(|g| !g.moves.is_empty());
            self.replaced_proposal = self.proposal.filter(|_| self.replaced.is_some());
            self.set_game(game);
            self.phase = Phase::Playing;
            self.proposal = None;
            self.flagged.clear();
            // A new game keeps the last reading and whose turn began when (the clock may
            // already run), and forgets everything tied to the old game's moves.
            self.clocks = Clocks {
                last: self.clocks.last,
                turn_start: self.clocks.turn_start,
                start_reading: self.clocks.last,
                ..Clocks::default()
            };
            self.seen.clear();
            out.push(Outcome::NewGame {
                orientation,
                chess960,
                fen,
            });
            return out;
        }
        if self.game.is_none() {
            return self.join_late();
        }
        let placement_magic = self.board.magic_pieces();
        if let Some((_, magic)) = placement_magic.first() {
            let result = match magic {
                MagicPiece::Draw => GameResult::Draw,
                MagicPiece::WhiteWins => GameResult::WhiteWins,
                MagicPiece::BlackWins => GameResult::BlackWins,
            };
            out.extend(self.propose(result, ProposalReason::MagicPiece));
            return out;
        }
        // After a result (proposed or set), pieces are put away or set up again: nothing to
        // record. After a mate or stalemate on the board, the last move can still turn out to
        // be another one (a queen slid past its square), so corrections and takebacks count.
        if matches!(self.phase, Phase::Finished { .. }) {
            return out;
        }
        let board = self.board.to_board(self.orientation.unwrap_or_default());
        let Some(game) = self.game.as_ref() else {
            return out;
        };
        let moves: Vec<Move> = game.moves.iter().map(|m| m.mv).collect();
        let presses_ahead = self.clocks.presses_ahead();
        // A clock stopped in the middle of a game (not by a flag) is an arbiter at the board
        // (an illegal move being put right): nobody plays, and a board half put back must
        // not be read as moves the presses do not account for.
        let stopped_mid_game = self.clocks.last.is_some_and(|r| {
            r.running_side().is_none() && !r.left.flag_fallen && !r.right.flag_fallen
        }) && !self.clocks.presses.is_empty();
        let clock_watched =
            self.clocks.last.is_some_and(|r| r.running_side().is_some()) || stopped_mid_game;
        let clock_watched = clock_watched && !self.readings_missed;
        let bridge_limit = if clock_watched {
            presses_ahead + 1
        } else {
            self.cfg.max_bridge
        };
        let orientation = self.orientation.unwrap_or_default();
        let seen: Vec<Board> = self.seen.iter().map(|p| p.to_board(orientation)).collect();
        let history = History {
            positions: &self.positions,
            moves: &moves,
            presses_ahead,
            bridge_limit,
            seen: &seen,
        };
        let inference = infer(&history, &board, self.cfg.max_bridge);
        if self.phase == Phase::EndedOnBoard {
            // Only the end can be undone: the mating move corrected or taken back (with the
            // move before it at most). A board far back in the game after a mate is the next
            // game being set up, never a takeback of the whole game.
            let n = self.positions.len().saturating_sub(1);
            let near_end = |keep: usize| keep + 2 >= n;
            match inference {
                Inference::Correction(_) => {}
                Inference::Takeback { ply } if near_end(ply) => {}
                Inference::Rewrite { keep, .. } if near_end(keep) => {}
                _ => return out,
            }
            self.phase = Phase::Playing;
            if let Some(g) = self.game.as_mut() {
                g.result = GameResult::Ongoing;
            }
        }
        if !matches!(inference, Inference::OutOfSync { .. }) {
            self.readings_missed = false;
            // Explained: the way here no longer matters.
            self.seen.clear();
        }
        let was_out = self.phase.is_out_of_sync();
        self.phase = self.phase.in_sync();
        match inference {
            Inference::Unchanged => {}
            Inference::Move(m) => out.extend(self.play(m)),
            Inference::Bridge(ms) => {
                for m in ms {
                    out.extend(self.play(m));
                }
            }
            Inference::Takeback { ply } => out.extend(self.truncate(ply)),
            Inference::Rewrite { keep, moves } => {
                // Moves the rewrite keeps as they were stay untouched (with their clocks).
                let n = self.positions.len() - 1;
                let mut k = keep;
                let mut rest = moves.into_iter().peekable();
                while k < n
                    && rest
                        .peek()
                        .is_some_and(|m| self.game.as_ref().is_some_and(|g| g.moves[k].mv == *m))
                {
                    rest.next();
                    k += 1;
                }
                out.extend(self.truncate(k));
                for m in rest {
                    out.extend(self.play(m));
                }
            }
            Inference::Correction(m) => {
                let ply = self.positions.len() - 1;
                let prev = self.positions[ply - 1].clone();
                let san = SanPlus::from_move(prev.clone(), m);
                let mut after = prev;
                after.play_unchecked(m);
                let mut replaced = String::new();
                if let Some(g) = self.game.as_mut()
                    && let Some(last) = g.moves.last_mut()
                {
                    replaced = last.san.to_string();
                    // The press (if any) belongs to whatever move was finally made.
                    last.mv = m;
                    last.san = san;
                }
                self.positions[ply] = after;
                out.push(Outcome::Correction {
                    ply,
                    san: san.to_string(),
                    replaced,
                });
                out.extend(self.after_move());
            }
            Inference::KingsInCentre(result) => {
                out.extend(self.propose(result, ProposalReason::KingsInCentre))
            }
            Inference::OutOfSync { candidates } => {
                self.phase = Phase::OutOfSync;
                let game_fen = self
                    .positions
                    .last()
                    .map(|p| p.board().board_fen().to_string())
                    .unwrap_or_default();
                if !was_out {
                    out.push(Outcome::OutOfSync {
                        board_fen: board.board_fen().to_string(),
                        game_fen,
                        candidates,
                    });
                }
                return out;
            }
        }
        if was_out {
            out.insert(0, Outcome::InSync);
        }
        out
    }

    /// Takes the game back to `ply` moves. The presses of the removed moves are free again:
    /// the moves that replace them were ended by the same presses.
    pub(super) fn truncate(&mut self, ply: usize) -> Vec<Outcome> {
        let n = self.positions.len() - 1;
        if ply >= n {
            return Vec::new();
        }
        if let Some(g) = self.game.as_mut() {
            g.moves.truncate(ply);
        }
        self.positions.truncate(ply + 1);
        self.clocks.pending.retain(|(p, _)| *p <= ply);
        for i in self.clocks.assigned.iter().skip(ply).flatten() {
            if let Some(p) = self.clocks.presses.get_mut(*i) {
                p.used = false;
            }
        }
        self.clocks.assigned.truncate(ply);
        vec![Outcome::Takeback { ply }]
    }

    pub(super) fn play(&mut self, m: Move) -> Vec<Outcome> {
        let Some(pos) = self.positions.last().cloned() else {
            return Vec::new();
        };
        let mover = pos.turn();
        let mode = self
            .game
            .as_ref()
            .map_or(CastlingMode::Standard, |g| g.castling_mode);
        let uci = m.to_uci(mode).to_string();
        let mut after = pos.clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, m);
        if let Some(g) = self.game.as_mut() {
            g.push(m, None, None);
        }
        self.positions.push(after);
        let ply = self.positions.len() - 1;
        self.clocks.pending.push((ply, mover));
        let mut out = vec![Outcome::Move {
            ply,
            san: san.to_string(),
            uci,
        }];
        out.extend(self.after_move());
        out.extend(self.assign_clocks());
        out
    }

    /// Arbiter: the pieces are being put back to the game's position; returns it (FEN
    /// placement) so the arbiter can set it. The game resumes when the board matches.
    pub fn position_to_restore(&self) -> Option<String> {
        self.positions
            .last()
            .map(|p| p.board().board_fen().to_string())
    }
}
