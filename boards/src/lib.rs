//! DGT electronic chess boards: the byte protocol (sans-I/O), the serial transport with
//! single-board and bus mode, port discovery, and an emulator that speaks the protocol over a
//! pseudo-terminal.

pub mod emulator;
pub mod protocol;
pub mod testdata;
pub mod transport;
