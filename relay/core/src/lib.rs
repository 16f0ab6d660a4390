//! The relay's pure core. Nothing here does I/O or reads the system clock: readings and times
//! come in as arguments, moves and PGN come out as values.
//!
//! Where to start: [`recorder::Recorder`], a board's messages with their receive times in and
//! moves, clocks and results out (its example plays 1. e4). A game is a [`game::Game`];
//! [`pgn`] reads and writes it, and [`onebyte`], [`pgc`], [`cbf`] and [`epd`] are the other
//! formats, each with its reading of its spec at the top of its module ([`onebyte`] and
//! [`pgc`] with a round trip as an example).

pub mod board_memory;
pub mod cbf;
pub mod clock_time;
pub mod convert;
pub mod epd;
pub mod game;
pub mod incident;
pub mod infer;
pub mod onebyte;
pub mod pgc;
pub mod pgn;
pub mod recorder;
pub mod replay;
pub mod standings;
pub mod time_control;
pub mod trf;
