//! Serial ports and the sessions that read boards over them.

mod bus;
mod link;
pub mod ports;
pub mod session;

pub use link::{PortEvent, STOPPED, SessionConfig};
pub use session::{ProbeResult, probe, read_board_memory, run};
