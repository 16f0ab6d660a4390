//! The hall: one reader thread per serial port (the same sessions `relay sniff` uses), and one
//! task that owns every e-board's recorder. It never waits for the database: what the
//! recorders conclude goes to the writer's queue as jobs, and the writer commits and announces.

mod arbiter;
mod desk;
mod ids;
mod memory;
mod outcomes;
mod ports;
mod readings;
mod run;
mod state;

pub use ports::{PortInput, watch_ports};
pub use state::Hall;
