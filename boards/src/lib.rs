//! DGT electronic chess boards: the byte protocol (sans-I/O) and, with the `serial` feature
//! (on by default), the serial transport with single-board and bus mode and port discovery.
//! The relay's core takes the protocol alone (`default-features = false`), so the serial
//! crate stays out of its dependency tree. The emulator that speaks the protocol over a
//! pseudo-terminal is its own crate (`emulator/`), built on this one and on the core.
//!
//! Where to start: [`protocol::Decoder`], bytes off a line in and messages out (its example
//! decodes a board dump, a field update that arrives in two pieces, and noise).

pub mod protocol;
pub mod rng;
pub mod testdata;
#[cfg(feature = "serial")]
pub mod transport;
