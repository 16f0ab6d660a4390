//! A DGT e-board and clock emulator: the board itself (sans-I/O), the clock, a player that turns
//! a PGN game into what human hands do, and the pseudo-terminal line that carries it all.

pub mod board;
pub mod clock;
pub mod illegal;
pub mod line;
pub mod memory;
pub mod play;
pub mod player;
