//! End-to-end tests: the real `relay` binary, emulated boards on pseudo-terminals, as an
//! operator would run them from a shell.

mod browser;
mod browser_embed;
mod browser_enter;
mod browser_halls;
mod browser_spoiler;
mod browser_standings;
mod convert;
mod convert_cbf;
mod replay;
// The outside reader of TRF files, shared with relay-core's and relay-store's tests.
#[path = "../../relay/core/tests/referees/mod.rs"]
mod referees;
mod serve_api;
mod serve_boards;
mod serve_cluster;
mod serve_delay;
mod serve_eval;
mod serve_faults;
mod serve_halls;
mod serve_illegal;
mod serve_lichess;
mod serve_memory;
mod serve_outage;
mod serve_sources;
mod serve_standings;
mod serve_trf;
mod serve_typed;
mod serve_upstream;
mod service;
mod sniff;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A child process that is interrupted (like Ctrl-C) and reaped when dropped.
#[derive(Debug)]
pub struct Proc {
    pub child: Child,
}

impl Proc {
    pub fn start(args: &[&str]) -> Proc {
        let child = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start relay");
        Proc { child }
    }

    /// Lines of standard output, read on a thread.
    pub fn lines(&mut self) -> Receiver<String> {
        let out: ChildStdout = self.child.stdout.take().expect("stdout piped");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        rx
    }

    /// Sends SIGINT and waits up to 5 s for a clean exit; returns whether it exited by itself.
    pub fn interrupt(&mut self) -> bool {
        signal_and_wait(&mut self.child, "-INT", 5).is_some()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        reap(&mut self.child);
    }
}

/// Sends `signal` (as `kill` spells it, e.g. `-TERM`) to `child` and waits up to `secs` for it
/// to exit; its exit status, or `None` when it is still running.
pub fn signal_and_wait(child: &mut Child, signal: &str, secs: u64) -> Option<ExitStatus> {
    let _ = Command::new("kill")
        .arg(signal)
        .arg(child.id().to_string())
        .status();
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Kills `child` if it still runs and waits for it, so that no test leaves a process behind.
pub fn reap(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// A new, empty scratch folder for the test `name` (`relay-e2e-NAME-PID`).
pub fn temp_dir(name: &str) -> PathBuf {
    boards::testdata::temp_dir(&format!("e2e-{name}"))
}

pub fn wait_for_path(p: &Path) {
    let end = Instant::now() + Duration::from_secs(10);
    while !p.exists() {
        assert!(Instant::now() < end, "{} did not appear", p.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Collects JSON lines until `done` says enough, or panics after `secs` with what came.
pub fn collect(
    rx: &Receiver<String>,
    secs: u64,
    mut done: impl FnMut(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let end = Instant::now() + Duration::from_secs(secs);
    let mut got = Vec::new();
    while Instant::now() < end {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(50)) {
            let v: serde_json::Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            got.push(v);
            if done(&got) {
                return got;
            }
        }
    }
    let tail: Vec<String> = got.iter().rev().take(20).map(|v| v.to_string()).collect();
    panic!(
        "condition not met within {secs} s; last lines:\n{}",
        tail.join("\n")
    );
}
