//! One module per subcommand.

pub mod bench;
pub mod board_memory;
pub mod convert;
pub mod demo;
pub mod emulate;
pub mod eval_worker;
pub mod export;
pub mod import;
pub mod lichess;
pub mod ports;
pub mod replay;
pub mod serve;
pub mod sniff;

use anyhow::Context;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs `work` on the store at `db` (opened, and migrated when new), on a runtime of its own:
/// what the commands that read or write the database without serving do.
pub fn with_store<T, F, Fut>(db: &str, work: F) -> anyhow::Result<T>
where
    F: FnOnce(relay_store::Store) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let store = relay_store::Store::open(db)
            .await
            .with_context(|| format!("database {db}"))?;
        work(store).await
    })
}

/// A flag set by Ctrl-C / SIGTERM, so long-running commands stop cleanly.
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))?;
    Ok(stop)
}
