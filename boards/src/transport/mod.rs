//! Serial ports and the sessions that read boards over them.

mod bus;
pub mod ports;
pub mod session;

pub use session::{PortEvent, ProbeResult, STOPPED, SessionConfig, probe, read_board_memory, run};
