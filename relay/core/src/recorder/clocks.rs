//! The clock's bookkeeping, apart from the game: the last reading, the votes for which clock
//! side is White, every lever press and which move it ended, and the stretches without
//! readings. Nothing here reads the game or what the board shows; the recorder's clock files
//! fill it and read it.

use boards::protocol::{ClockReading, ClockSide, Placement};
use shakmaty::Color;

/// Weight of the start-of-game evidence for which clock side is White, against one vote per
/// steady reading.
pub(super) const START_VOTE: u32 = 1_000;

/// A lever press seen in the clock readings.
#[derive(Clone, Copy, Debug)]
pub(super) struct Press {
    pub(super) side: ClockSide,
    /// The side's time right after the press (increment included).
    pub(super) after_ms: u64,
    /// The side's time in the last reading while it ran (unknown when other presses came
    /// between that reading and this press).
    pub(super) before_ms: Option<u64>,
    /// The side's time when its turn began.
    pub(super) turn_start_ms: Option<u64>,
    pub(super) used: bool,
    /// The board as read at the press, when the press came from a bus board's change log
    /// (which places it exactly after the squares of its move); `None` for a press seen in
    /// two clock readings, which says only that it happened between them.
    pub(super) board: Option<Placement>,
}

/// Clock bookkeeping.
#[derive(Clone, Debug, Default)]
pub(super) struct Clocks {
    pub(super) last: Option<ClockReading>,
    /// Readings voting for "the running side is White" per side: [left, right].
    pub(super) white_votes: [u32; 2],
    pub(super) black_votes: [u32; 2],
    pub(super) turn_start: [Option<u64>; 2],
    /// Every press of the game, in order.
    pub(super) presses: Vec<Press>,
    /// For each move (index = ply - 1), the press that ended it.
    pub(super) assigned: Vec<Option<usize>>,
    /// Moves still waiting for their press: ply (1-based) and mover.
    pub(super) pending: Vec<(usize, Color)>,
    /// The clock as it stood when the game began (for the start-time tags).
    pub(super) start_reading: Option<ClockReading>,
    /// `last` was read after every press seen so far (no clock record came since).
    pub(super) last_is_fresh: bool,
    /// The readings stopped for a while (a restart, a board lost): presses made meanwhile
    /// were not seen. Until it is settled no press goes to a move.
    pub(super) gap: Option<Gap>,
    /// Presses before this index were made before the last gap and go to no move after it.
    pub(super) press_floor: usize,
    /// The game was taken up in its middle (a restart): the clock's start is not known.
    pub(super) joined_late: bool,
    /// When `last` was received.
    pub(super) last_at_ms: Option<u64>,
    /// Presses by the side to move whose meaning is not known yet: the move they end, or
    /// an illegal move, or nothing at all (see `Recorder::confirm_presses`).
    pub(super) checks: Vec<PressCheck>,
}

/// A lever press by the side to move, waiting to be told apart from the press that ends a
/// move.
#[derive(Clone, Copy, Debug)]
pub(super) struct PressCheck {
    /// Its index in `presses`.
    pub(super) press: usize,
    pub(super) at_ms: u64,
    /// The board as read when the press was seen (a press from a bus board's log carries
    /// its own, exact one).
    pub(super) board: Placement,
    /// The move it would be in place of, and the presser.
    pub(super) ply: usize,
    pub(super) color: Color,
}

/// A stretch without readings, as far as it is known.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Gap {
    /// The first reading after it: the halted side shows its last press's time, the running
    /// side is the one whose turn it is.
    pub(super) first: Option<ClockReading>,
    /// How many presses were known then.
    pub(super) floor: usize,
}

pub(super) fn side_index(s: ClockSide) -> usize {
    if s == ClockSide::Left { 0 } else { 1 }
}

impl Clocks {
    pub(super) fn white_side(&self) -> Option<ClockSide> {
        // Left is White when readings say so more often than they say Right is.
        self.white_side_by(1)
    }

    /// Which clock side is White, once the evidence for it leads by `margin` votes.
    fn white_side_by(&self, margin: u32) -> Option<ClockSide> {
        let left = self.white_votes[0] + self.black_votes[1];
        let right = self.white_votes[1] + self.black_votes[0];
        if left >= right + margin {
            Some(ClockSide::Left)
        } else if right >= left + margin {
            Some(ClockSide::Right)
        } else {
            None
        }
    }

    /// Evidence that the player on `side` has White (`white`) or Black, worth `weight` votes.
    pub(super) fn vote(&mut self, side: ClockSide, white: bool, weight: u32) {
        let i = side_index(side);
        if white {
            self.white_votes[i] += weight;
        } else {
            self.black_votes[i] += weight;
        }
    }

    /// Lever presses after the last one matched to a move, less the moves still waiting for
    /// theirs: how many moves the clock says were made that the game does not have yet.
    pub(super) fn presses_ahead(&self) -> usize {
        let last = self.assigned.iter().rev().find_map(|a| *a);
        let newer = self
            .presses
            .iter()
            .enumerate()
            .filter(|(i, p)| !p.used && last.is_none_or(|l| *i > l))
            .count();
        newer.saturating_sub(self.pending.len())
    }

    /// Which clock side is White, once the evidence is more than a few readings (a single
    /// reading taken while a move is made but not yet pressed points the wrong way).
    pub(super) fn white_side_sure(&self) -> Option<ClockSide> {
        self.white_side_by(5)
    }

    /// Readings stop being continuous: nothing read before tells how the clock went on.
    pub(super) fn begin_gap(&mut self) {
        self.gap = Some(Gap::default());
        self.last = None;
        self.last_at_ms = None;
        self.checks.clear();
        self.turn_start = [None, None];
    }

    pub(super) fn side_of(&self, c: Color) -> Option<ClockSide> {
        self.white_side()
            .map(|w| if c == Color::White { w } else { w.other() })
    }
}
