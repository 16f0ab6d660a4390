//! The service's one signal to stop, in the two forms its parts can wait on.
//!
//! Tasks on the runtime (live sockets, the evaluation routes, the SQLite checkpoints) wait on
//! a watch channel and wake the moment it changes. Threads cannot await: the port readers and
//! the local engine workers sleep in short steps and look at a flag between them, and the
//! board sessions they run take a flag (`boards::transport::run`). [`Shutdown::begin`] sets
//! both together, so no part can see the service stopping before another.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::watch;

/// Told once, by whoever ends the service; cheap to clone, every clone the same signal.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: Arc<watch::Sender<bool>>,
    flag: Arc<AtomicBool>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            tx: Arc::new(watch::channel(false).0),
            flag: Arc::default(),
        }
    }
}

impl Shutdown {
    /// Every part is told to stop. Calling it again changes nothing.
    pub fn begin(&self) {
        self.flag.store(true, Ordering::Relaxed);
        // `send_replace`, not `send`: the value is kept even with no receiver yet, so a part
        // that subscribes later still sees the service stopping.
        self.tx.send_replace(true);
    }

    /// For tasks: changes to `true` when the service stops.
    pub fn watch(&self) -> watch::Receiver<bool> {
        self.tx.subscribe()
    }

    /// For threads: set when the service stops.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_call_reaches_tasks_and_threads_alike() {
        let s = Shutdown::default();
        let flag = s.flag();
        let mut rx = s.watch();
        assert!(!flag.load(Ordering::Relaxed));
        s.clone().begin();
        assert!(flag.load(Ordering::Relaxed));
        assert!(rx.wait_for(|v| *v).await.is_ok());
        assert!(*s.watch().borrow(), "a later subscriber sees it too");
    }
}
