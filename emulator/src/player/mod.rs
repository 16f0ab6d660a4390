//! The emulated player: turns a game read from PGN into a timed script of the physical things
//! people do at a DGT board — lifting and setting down pieces, pressing the clock lever — with
//! the untidy habits real players have (dgt-protocol.md §12.1).
//!
//! The script is written against virtual time in milliseconds since its start. The position of
//! the game's start is already on the board when the script begins; the arbiter starts the
//! clock at [`CLOCK_START_MS`]; each move is a handful of lifts and placements followed by the
//! mover's lever press. The emulator replays the actions at their times, turning them into
//! field updates and clock messages.
//!
//! Clock times in the PGN (`[%clk 1:23:45]`) are honoured exactly where the arithmetic allows:
//! the press falls at the moment that leaves the mover's clock — increment and period bonus
//! included, computed as [`ChessClock::press`](crate::clock::ChessClock::press) does — showing
//! the recorded time. Everything is reproducible from a seed with a small self-contained
//! generator.
//!
//! At chosen plies the player can first complete an illegal move or press the clock without
//! one, and an arbiter put it right ([`ScriptOptions::illegal`], FIDE Laws art. 7.5): the
//! game's moves and its recorded times stay as they are.
//!
//! One entry point, [`script`], takes the game, a seed and [`ScriptOptions`]. The modules,
//! from the bottom: `model` (what a script is made of, and the options), `score` (the game as
//! read from PGN, and a time control guessed from its clocks), `hands` (a move as lifts and
//! placements), `timing` (think times that meet the recorded clocks), `incident` (an illegal
//! move and the arbiter's correction), and `write`, which puts them together.

mod hands;
mod incident;
mod model;
mod score;
#[cfg(test)]
mod testing;
mod timing;
mod write;

pub use crate::illegal::{
    ArbiterConfig, IllegalKind, PlannedIllegal, ScriptedAdjustment, ScriptedIllegal, parse_plan,
};
pub use model::{
    Action, CLOCK_START_MS, ClocksAtStart, MoveTiming, NoiseConfig, Script, ScriptOptions,
    TimedAction, clock_side,
};
pub use score::{
    GameScore, PgnError, ScoredMove, guess_time_control_from_clocks, read_games, read_games_each,
};
pub use write::script;
