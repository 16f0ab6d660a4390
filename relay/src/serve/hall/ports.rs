//! The reader threads: one per serial port (the same sessions `relay sniff` uses), started
//! as ports appear and read while this relay holds the port (see `claims`).

use crate::serve::claims::PortClaims;
use boards::protocol::LineMode;
use boards::transport::{PortEvent, SessionConfig};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the reader threads hand to the hall.
#[derive(Debug)]
pub struct PortInput {
    pub path: String,
    pub event: PortEvent,
}

/// Starts reader threads for the ports given (paths, `dir/prefix*` patterns or `auto`) and
/// keeps looking for new ones every second: boards come and go in a hall.
pub fn watch_ports(
    patterns: Vec<String>,
    mode: LineMode,
    tx: mpsc::UnboundedSender<PortInput>,
    stop: Arc<AtomicBool>,
    claims: Arc<PortClaims>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let in_use: Arc<Mutex<HashSet<String>>> = Arc::default();
        let mut started: HashSet<String> = HashSet::new();
        while !stop.load(Ordering::Relaxed) {
            let auto = patterns.iter().any(|p| p == "auto");
            let globs: Vec<String> = patterns.iter().filter(|p| *p != "auto").cloned().collect();
            let mut found = boards::transport::ports::expand(&globs);
            if auto {
                found.extend(
                    boards::transport::ports::list(&[])
                        .into_iter()
                        .filter(|p| p.looks_like_dgt)
                        .map(|p| p.path),
                );
            }
            for path in found {
                // Known paths are passed over before anything asks the file system: the
                // whole list is looked at every second, and with 1000 boards resolving each
                // path again was a thousand `readlink`s a second.
                if started.contains(&path) {
                    continue;
                }
                let canonical = std::fs::canonicalize(&path)
                    .map_or_else(|_| path.clone(), |p| p.display().to_string());
                if started.contains(&canonical) {
                    continue;
                }
                // A session follows its board through unplugs itself; a port claimed by one
                // is never opened twice.
                if in_use
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&canonical)
                {
                    continue;
                }
                started.insert(path.clone());
                started.insert(canonical);
                tracing::info!(port = %path, "reading port");
                let (tx, stop, in_use) = (tx.clone(), stop.clone(), in_use.clone());
                let claims = claims.clone();
                // Not joined: the hall knows a reader is done when its sender is gone.
                std::thread::spawn(move || {
                    // Read while this relay holds the port; wait while another does.
                    let mut said = false;
                    while !stop.load(Ordering::Relaxed) {
                        let Some(session_stop) = claims.session(&path) else {
                            if !said {
                                tracing::info!(port = %path, "another relay reads this port; waiting to take over");
                                said = true;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                            continue;
                        };
                        said = false;
                        let mut cfg = SessionConfig::new(&path, mode);
                        cfg.in_use = Some(in_use.clone());
                        cfg.read_memory = true;
                        let name = path.clone();
                        boards::transport::run(
                            cfg,
                            &mut |event| {
                                let _ = tx.send(PortInput {
                                    path: name.clone(),
                                    event,
                                });
                            },
                            &session_stop,
                        );
                    }
                    // Done: let go of everything shared, then wait (see READER_LINGER).
                    drop(tx);
                    drop(claims);
                    drop(in_use);
                    std::thread::park_timeout(READER_LINGER);
                });
            }
            for _ in 0..10 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    })
}

/// How long a port's reader thread stays parked after the service stopped, its sender already
/// dropped, before it ends. Ending at once, a thousand of them gave back their stacks one by
/// one under the process's one memory-map lock and the hall and the writer waited behind them
/// for 15-20 s; parked, they end with the process (in a process that goes on, as in tests, a
/// minute later).
const READER_LINGER: Duration = Duration::from_secs(60);
