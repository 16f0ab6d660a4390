//! relay: a live-broadcast relay for DGT electronic chess boards, as a library. The `relay`
//! binary (`main.rs`) only parses the command line and calls in here; tests and benchmarks
//! start the service in-process through the same entry points.
//!
//! - [`cli`]: one module per subcommand (`ports`, `sniff`, `emulate`, `demo`, `replay`, `bench`).
//! - [`serve`]: the live service (`relay serve`): hall, writer, round feeds, HTTP and WebSockets.

pub mod cli;
pub mod serve;
