//! wsload, the load tool, as the bench runs it: the spectators' addresses, how many connect
//! and how fast, and the files where it leaves what they received (read back by `figures`).

use super::procs::{Proc, Tools, file_out};
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How wsload is run for one measurement.
pub struct Load<'a> {
    /// Clients are spread round-robin over these.
    pub urls: Vec<String>,
    pub clients: usize,
    pub ramp_per_sec: f64,
    pub duration: f64,
    pub procs: usize,
    pub marker: &'a str,
    pub sample: usize,
    pub dir: &'a Path,
    pub prefix: &'a str,
}

impl Load<'_> {
    pub fn path(&self, what: &str) -> PathBuf {
        self.dir.join(format!("{}-{what}", self.prefix))
    }

    pub fn spawn(&self, tools: &Tools) -> Result<Proc> {
        let mut cmd = Command::new(&tools.wsload);
        for url in &self.urls {
            cmd.arg("--url").arg(url);
        }
        cmd.args(["--clients", &self.clients.to_string()])
            .args(["--ramp-per-sec", &self.ramp_per_sec.to_string()])
            .args(["--duration", &format!("{:.1}", self.duration)])
            .args(["--procs", &self.procs.to_string()])
            .args(["--read-buffer", "4096", "--progress-secs", "0"])
            .args(["--marker", self.marker])
            .arg("--json")
            .arg(self.path("summary.json"))
            .arg("--markers-out")
            .arg(self.path("markers.tsv"));
        if self.sample > 0 {
            cmd.arg("--out")
                .arg(self.path("frames.tsv"))
                .args(["--sample", &self.sample.to_string()]);
        }
        // Past about 10k connections from one source address, connect() hunts for free
        // ports; more source addresses each bring a port range of their own.
        if self.clients > 10_000 {
            cmd.args(["--source-ips", "127.0.0.2-9"]);
        }
        cmd.stdin(Stdio::null())
            .stdout(file_out(&self.path("wsload.txt"))?)
            .stderr(file_out(&self.path("wsload-err.txt"))?);
        Proc::spawn("wsload", &mut cmd)
    }

    /// Waits for wsload to end; on failure its own messages say why.
    pub fn finish(&self, wsload: &mut Proc, stop: &AtomicBool) -> Result<()> {
        let status = wsload.wait_for(self.limit(), stop)?;
        if status.is_some_and(|s| s.success()) {
            return Ok(());
        }
        let err = std::fs::read_to_string(self.path("wsload-err.txt")).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(10).collect();
        for l in tail.into_iter().rev() {
            eprintln!("  {l}");
        }
        match status {
            Some(s) => bail!("wsload failed ({s})"),
            None => bail!("wsload did not finish in time"),
        }
    }

    /// How long the run takes, with room for connection timeouts and writing results.
    fn limit(&self) -> Duration {
        Duration::from_secs_f64(self.clients as f64 / self.ramp_per_sec + self.duration + 60.0)
    }
}

/// Marker for wsload: each client's first snapshot is the marker `snapshot`, each move frame
/// its `seq`. Anchored at the frame's start, where every message begins with its `type` and
/// then its `seq` (`wire::tests::a_frame_begins_with_its_type_then_its_seq`): wsload runs it
/// on every frame of every client, and an unanchored pattern read every byte of every frame,
/// which took 13% of the machine's two cores at 19,000 spectators (`perf record -a`), taken
/// from the service it measures.
pub const RELAY_MARKER: &str = r#"^\{"type":"(?:(snapshot)"|move","seq":(\d+))"#;
