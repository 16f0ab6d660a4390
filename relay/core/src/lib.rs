//! The relay's pure core. Nothing here does I/O or reads the system clock: readings and times
//! come in as arguments, moves and PGN come out as values.

pub mod cbf;
pub mod clock_time;
pub mod convert;
pub mod epd;
pub mod game;
pub mod infer;
pub mod onebyte;
pub mod pgc;
pub mod pgn;
pub mod recorder;
pub mod replay;
pub mod time_control;
