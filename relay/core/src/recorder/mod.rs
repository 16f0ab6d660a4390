//! The recorder: one board's readings in, the true game out.
//!
//! It keeps the board as read (from dumps and field updates), waits until the board has been
//! still for the settle time, then asks [`infer`](crate::infer) what the still board means and
//! applies it to the game. Clock readings are tracked alongside: which clock side is White,
//! every lever press, and from those the `clk` and `emt` of each move. Time always comes in as
//! an argument (milliseconds on any monotonic scale: receive times, or an emulator's virtual
//! time), so the same code runs live, in replays and in tests.
//!
//! [`Recorder`] is one state (in `state`, with what comes in: messages, time passing) and a
//! file for each thing it works out, each adding its methods:
//!
//! - `outcome`: what the recorder says ([`Outcome`] and the names in it) and its settings.
//! - `phase`: where the recorder stands, as state of its own.
//! - `clocks`: the clock's bookkeeping (the side that is White, presses, gaps in the readings).
//! - `clock_input`: clock readings and clock records taken in.
//! - `presses`: a press by the side to move told apart from one ending a move.
//! - `move_clocks`: each move's `clk` and `emt` from the press that ended it.
//! - `reading`: a still board read into moves, takebacks and corrections.
//! - `beginning`: how a game begins (start position, joined late, resumed, continued).
//! - `ending`: how it ends (mate, stalemate, drawing conditions, results proposed and given).
//!
//! `outcome`, `phase` and `clocks` know nothing of the recorder; the other files use them and
//! `state`, and no file uses this one's items, so no two import each other.

mod beginning;
mod clock_input;
mod clocks;
mod ending;
mod move_clocks;
mod outcome;
mod phase;
mod presses;
mod reading;
mod state;

pub use ending::apply_proposal;
pub use outcome::{ColorName, DrawCondition, GameEnd, Outcome, ProposalReason, RecorderConfig};
pub use state::Recorder;
