//! One module per subcommand.

pub mod bench;
pub mod convert;
pub mod demo;
pub mod emulate;
pub mod export;
pub mod import;
pub mod ports;
pub mod replay;
pub mod sniff;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag set by Ctrl-C / SIGTERM, so long-running commands stop cleanly.
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))?;
    Ok(stop)
}
