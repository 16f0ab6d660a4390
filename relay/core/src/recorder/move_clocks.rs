//! Each move's clock: the press that ended its mover's turn gives its `clk` (the time left)
//! and `emt` (the time it took); after a gap in the readings, which moves' presses were seen
//! at all is worked out first.

use super::clocks::START_VOTE;
use super::outcome::Outcome;
use super::state::Recorder;
use crate::clock_time::ClockTime;
use boards::protocol::{ClockSide, Placement};
use shakmaty::{Color, Position};

impl Recorder {
    /// Gives each move waiting for its clock the press that ended its mover's turn.
    pub(super) fn assign_clocks(&mut self) -> Vec<Outcome> {
        // A press made in place of a move now made (an illegal move before it) is on the
        // record first, and ends no move.
        let mut out = if self.clocks.checks.is_empty() {
            Vec::new()
        } else {
            self.confirm_presses(None)
        };
        if self.clocks.gap.is_some() {
            match self.settle_gap() {
                Some(o) => out.extend(o),
                None => return out,
            }
        }
        let pending = std::mem::take(&mut self.clocks.pending);
        let mut still = Vec::new();
        for (ply, mover) in pending {
            let side = self.clocks.side_of(mover);
            match self.press_ending(ply, side) {
                Some(i) => out.push(self.give_clock(ply, mover, side, i)),
                None => still.push((ply, mover)),
            }
        }
        // A move whose mover has pressed again since (a clock two plies later is placed)
        // cannot get a press any more: its clock stays unknown rather than borrowed.
        let newest_ply = self
            .clocks
            .assigned
            .iter()
            .rposition(Option::is_some)
            .map(|i| i + 1);
        still.retain(|&(ply, _)| newest_ply.is_none_or(|q| q < ply + 2));
        self.clocks.pending = still;
        out
    }

    /// The press that ended the move at `ply`, made on the clock side `side` (`None`: which
    /// side is White is not known yet), as an index in `presses`.
    fn press_ending(&self, ply: usize, side: Option<ClockSide>) -> Option<usize> {
        // The first unused press by the mover's side after the press that ended an
        // earlier move: presses and moves happen in the same order, but a fast player may
        // press before the board settles, and moves bridged after missed readings arrive
        // after several presses.
        let after = self
            .clocks
            .assigned
            .iter()
            .take(ply - 1)
            .rev()
            .find_map(|a| *a);
        // A press from a bus board's log shows the board it was made on: it belongs to
        // the move whose position that is, and to no other. So a press that was never
        // seen costs its own move's clock only, and the next press puts the game back in
        // step.
        let expected = self
            .orientation
            .zip(self.positions.get(ply))
            .map(|(o, pos)| Placement::from_board(pos.board(), o));
        self.clocks
            .presses
            .iter()
            .enumerate()
            .find(|(i, p)| {
                !p.used
                    && *i >= self.clocks.press_floor
                    && after.is_none_or(|a| *i > a)
                    && match side {
                        Some(side) => p.side == side && p.board.is_none_or(|b| Some(b) == expected),
                        // Which side is White is not known yet: only a press made on
                        // this very position can say whose it was.
                        None => p.board.is_some() && p.board == expected,
                    }
            })
            .map(|(i, _)| i)
    }

    /// The press `presses[i]` ended the move at `ply` by `mover` (on the clock side `side`,
    /// if known): the move gets its `clk` and `emt`.
    fn give_clock(
        &mut self,
        ply: usize,
        mover: Color,
        side: Option<ClockSide>,
        i: usize,
    ) -> Outcome {
        if side.is_none() {
            // That press is the strongest evidence there is for the sides.
            let pressed = self.clocks.presses[i].side;
            self.clocks.vote(pressed, mover == Color::White, START_VOTE);
        }
        let p = &mut self.clocks.presses[i];
        p.used = true;
        let clk = ClockTime(p.after_ms);
        let emt = p
            .turn_start_ms
            .zip(p.before_ms)
            .map(|(s, b)| ClockTime(s.saturating_sub(b)));
        if self.clocks.assigned.len() < ply {
            self.clocks.assigned.resize(ply, None);
        }
        self.clocks.assigned[ply - 1] = Some(i);
        if let Some(m) = self.game.as_mut().and_then(|g| g.moves.get_mut(ply - 1)) {
            m.clk = Some(clk);
            m.emt = emt;
        }
        Outcome::MoveClock { ply, clk, emt }
    }

    /// After a gap in the readings, works out which moves' presses fell into it, once the
    /// board is in sync and still and which clock side is White is sure. The presses seen
    /// since the first reading after the gap belong, in order, to the moves from the one
    /// whose turn that reading showed running; every earlier move without a clock keeps none
    /// (its press was not seen), except the one just before, whose time the halted side of
    /// that reading still showed. `None`: not yet.
    fn settle_gap(&mut self) -> Option<Vec<Outcome>> {
        let gap = self.clocks.gap?;
        let first = gap.first?;
        if self.readings_missed || self.phase.is_out_of_sync() || self.awaiting_judgement() {
            return None;
        }
        let mut out = Vec::new();
        let white = self.clocks.white_side_sure()?;
        let pos = self.positions.last()?;
        let plies = self.positions.len() - 1;
        let colour = |side: ClockSide| {
            if side == white {
                Color::White
            } else {
                Color::Black
            }
        };
        // The ply whose turn the clock shows running now: the next move when the side to
        // move runs, the last move (made, not yet pressed) when the other side does.
        let now_turn = match self.clocks.last.and_then(|r| r.running_side()) {
            Some(side) if colour(side) != pos.turn() => plies,
            _ => plies + 1,
        };
        let seen = self.clocks.presses.len().saturating_sub(gap.floor);
        let first_turn = now_turn.saturating_sub(seen);
        self.clocks.gap = None;
        self.clocks.press_floor = gap.floor;
        // The move before the turn that was running at the first reading: its mover's clock
        // has stood still since that press.
        if let Some(halted) = first.running_side().map(ClockSide::other)
            && first_turn >= 2
        {
            let ply = first_turn - 1;
            let mover = self.positions.get(ply - 1).map(|p| p.turn());
            let clk = ClockTime(u64::from(first.side(halted).seconds) * 1000);
            if mover == Some(colour(halted))
                && let Some(m) = self.game.as_mut().and_then(|g| g.moves.get_mut(ply - 1))
                && m.clk.is_none()
            {
                m.clk = Some(clk);
                m.emt = None;
                out.push(Outcome::MoveClock {
                    ply,
                    clk,
                    emt: None,
                });
            }
        }
        self.clocks.pending.retain(|&(ply, _)| ply >= first_turn);
        Some(out)
    }
}
