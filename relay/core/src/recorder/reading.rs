//! A still board read into the game: what [`infer`](crate::infer) makes of it (a move, moves
//! missed, a takeback, a correction, a board it cannot explain) applied to the moves, and the
//! game's position to restore when the board has left it.

use super::outcome::{Outcome, ProposalReason};
use super::phase::Phase;
use super::state::Recorder;
use crate::infer::{History, Inference, infer};
use shakmaty::san::SanPlus;
use shakmaty::{Board, CastlingMode, Move, Position};

impl Recorder {
    /// The board has been still for the settle time: what it means for the game, in order of
    /// precedence — a new game set up, a game joined late, a result proposed by a magic
    /// piece, nothing after a result, and otherwise what inference makes of it.
    pub(super) fn evaluate(&mut self) -> Vec<Outcome> {
        if let Some((orientation, start, chess960)) = self.new_game_on_board() {
            return vec![self.begin_game(orientation, start, chess960)];
        }
        if self.game.is_none() {
            return self.join_late();
        }
        if let Some(result) = self.magic_piece_result() {
            return self.propose(result, ProposalReason::MagicPiece);
        }
        // After a result (proposed or set), pieces are put away or set up again: nothing to
        // record. After a mate or stalemate on the board, the last move can still turn out to
        // be another one (a queen slid past its square), so corrections and takebacks count.
        if matches!(self.phase, Phase::Finished { .. }) {
            return Vec::new();
        }
        let board = self.board.to_board(self.orientation.unwrap_or_default());
        let Some(inference) = self.infer_board(&board) else {
            return Vec::new();
        };
        if self.phase == Phase::EndedOnBoard && !self.reopen_end(&inference) {
            return Vec::new();
        }
        self.apply(inference, &board)
    }

    /// What inference makes of the still `board` (in real squares), given the game, the
    /// boards seen since its position was last confirmed and the presses the clock shows.
    /// `None`: no game.
    fn infer_board(&self, board: &Board) -> Option<Inference> {
        let game = self.game.as_ref()?;
        let moves: Vec<Move> = game.moves.iter().map(|m| m.mv).collect();
        let presses_ahead = self.clocks.presses_ahead();
        let orientation = self.orientation.unwrap_or_default();
        let seen: Vec<Board> = self.seen.iter().map(|p| p.to_board(orientation)).collect();
        let history = History {
            positions: &self.positions,
            moves: &moves,
            presses_ahead,
            bridge_limit: self.bridge_limit(presses_ahead),
            seen: &seen,
        };
        Some(infer(&history, board, self.cfg.max_bridge))
    }

    /// The most moves a still board may add at once. While the clock is watched, the presses
    /// it shows say how many moves were made; otherwise up to the configured bridge.
    fn bridge_limit(&self, presses_ahead: usize) -> usize {
        // A clock stopped in the middle of a game (not by a flag) is an arbiter at the board
        // (an illegal move being put right): nobody plays, and a board half put back must
        // not be read as moves the presses do not account for.
        let stopped_mid_game = self.clocks.last.is_some_and(|r| {
            r.running_side().is_none() && !r.left.flag_fallen && !r.right.flag_fallen
        }) && !self.clocks.presses.is_empty();
        let clock_watched =
            self.clocks.last.is_some_and(|r| r.running_side().is_some()) || stopped_mid_game;
        let clock_watched = clock_watched && !self.readings_missed;
        if clock_watched {
            presses_ahead + 1
        } else {
            self.cfg.max_bridge
        }
    }

    /// Applies what inference made of the still `board` to the game.
    fn apply(&mut self, inference: Inference, board: &Board) -> Vec<Outcome> {
        if !matches!(inference, Inference::OutOfSync { .. }) {
            self.readings_missed = false;
            // Explained: the way here no longer matters.
            self.seen.clear();
        }
        let was_out = self.phase.is_out_of_sync();
        self.phase = self.phase.in_sync();
        let mut out = match inference {
            Inference::Unchanged => Vec::new(),
            Inference::Move(m) => self.play(m),
            Inference::Bridge(ms) => {
                let mut out = Vec::new();
                for m in ms {
                    out.extend(self.play(m));
                }
                out
            }
            Inference::Takeback { ply } => self.truncate(ply),
            Inference::Rewrite { keep, moves } => self.rewrite(keep, moves),
            Inference::Correction(m) => self.correct(m),
            Inference::KingsInCentre(result) => self.propose(result, ProposalReason::KingsInCentre),
            Inference::OutOfSync { candidates } => {
                return self.lost_sync(board, candidates, was_out);
            }
        };
        if was_out {
            out.insert(0, Outcome::InSync);
        }
        out
    }

    /// The moves after the first `keep` replaced by `moves`.
    fn rewrite(&mut self, keep: usize, moves: Vec<Move>) -> Vec<Outcome> {
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
        let mut out = self.truncate(k);
        for m in rest {
            out.extend(self.play(m));
        }
        out
    }

    /// The last move was `m`, not the one recorded (a piece put down on its square late).
    fn correct(&mut self, m: Move) -> Vec<Outcome> {
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
        let mut out = vec![Outcome::Correction {
            ply,
            san: san.to_string(),
            replaced,
        }];
        out.extend(self.after_move());
        out
    }

    /// The still `board` is nothing the game explains: the game waits for it, said once
    /// (`was_out`: it was said already).
    fn lost_sync(&mut self, board: &Board, candidates: usize, was_out: bool) -> Vec<Outcome> {
        self.phase = Phase::OutOfSync;
        let game_fen = self
            .positions
            .last()
            .map(|p| p.board().board_fen().to_string())
            .unwrap_or_default();
        if was_out {
            return Vec::new();
        }
        vec![Outcome::OutOfSync {
            board_fen: board.board_fen().to_string(),
            game_fen,
            candidates,
        }]
    }

    /// Takes the game back to `ply` moves. The presses of the removed moves are free again:
    /// the moves that replace them were ended by the same presses.
    fn truncate(&mut self, ply: usize) -> Vec<Outcome> {
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
