//! The processes a bench case runs (emulated boards, the service, the load tool), each behind
//! a guard that stops it when the case ends, fails or is interrupted; how this binary's own
//! subcommands are started without the user's settings; and what /proc says about them and
//! their HTTP answers.

use anyhow::{Context, Result, bail};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// A child process that is interrupted (SIGINT, as Ctrl-C would) when dropped, and killed if
/// it has not ended a few seconds later.
#[derive(Debug)]
pub struct Proc {
    pub name: &'static str,
    child: Child,
}

impl Proc {
    pub fn spawn(name: &'static str, cmd: &mut Command) -> Result<Proc> {
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start the {name}: {cmd:?}"))?;
        Ok(Proc { name, child })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The child's stdout, taken once, as a channel of lines.
    pub fn lines(&mut self) -> Option<Receiver<String>> {
        let out: ChildStdout = self.child.stdout.take()?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Some(rx)
    }

    /// Whether it has ended (and how).
    pub fn ended(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `limit` for the child to end by itself; `stop` (Ctrl-C) cuts it short.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        stop: &AtomicBool,
    ) -> Result<Option<std::process::ExitStatus>> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Some(s) = self.ended() {
                return Ok(Some(s));
            }
            interrupted(stop)?;
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(None)
    }

    /// SIGINT, then up to `grace` for it to end, then SIGKILL.
    pub fn stop(&mut self, grace: Duration) {
        self.stop_with("INT", grace);
    }

    /// `signal` (`INT`, `TERM`), then up to `grace` for it to end, then SIGKILL. Returns
    /// how long it took to end after the signal (`None`: it did not, and was killed; or it
    /// had ended before).
    pub fn stop_with(&mut self, signal: &str, grace: Duration) -> Option<Duration> {
        if self.ended().is_some() {
            return None;
        }
        let sent = Instant::now();
        // std has no way to send a signal but SIGKILL without unsafe code; kill(1) does it.
        let _ = Command::new("kill")
            .args([format!("-{signal}"), self.pid().to_string()])
            .stderr(Stdio::null())
            .status();
        let end = sent + grace;
        while Instant::now() < end {
            if self.ended().is_some() {
                return Some(sent.elapsed());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!(
            "bench: the {} (pid {}) did not stop within {:.0} s; killing it",
            self.name,
            self.pid(),
            grace.as_secs_f64()
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(10));
    }
}

/// A temporary directory removed when dropped.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Result<TempDir> {
        let dir = std::env::temp_dir().join(format!("relay-bench-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // `RELAY_BENCH_KEEP=1`: the run's files (wsload's frames and markers, the service's
        // log) stay for a closer look.
        if std::env::var_os("RELAY_BENCH_KEEP").is_some() {
            eprintln!("kept {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn interrupted(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::Relaxed) {
        bail!("interrupted");
    }
    Ok(())
}

/// Sleeps until `at`, or fails at once on Ctrl-C.
pub fn sleep_until(at: Instant, stop: &AtomicBool) -> Result<()> {
    loop {
        interrupted(stop)?;
        let now = Instant::now();
        if now >= at {
            return Ok(());
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// The first line from `lines` for which `pick` gives something, within `limit`.
pub fn wait_line<T>(
    proc: &mut Proc,
    lines: &Receiver<String>,
    limit: Duration,
    stop: &Arc<AtomicBool>,
    mut pick: impl FnMut(&str) -> Option<T>,
) -> Result<T> {
    let end = Instant::now() + limit;
    loop {
        interrupted(stop)?;
        if let Some(s) = proc.ended() {
            bail!("the {} ended before it was ready ({s})", proc.name);
        }
        if Instant::now() >= end {
            bail!(
                "the {} was not ready within {:.0} s",
                proc.name,
                limit.as_secs_f64()
            );
        }
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => {
                if let Some(v) = pick(&l) {
                    return Ok(v);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// CPU time and memory of a process at one moment, from /proc.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub at: Instant,
    /// utime + stime, in clock ticks (all threads).
    pub ticks: u64,
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

pub fn sample(pid: u32) -> Option<Sample> {
    let at = Instant::now();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); `rest` starts at field 3.
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(Sample {
        at,
        ticks,
        rss_kib: kib("VmRSS:")?,
        hwm_kib: kib("VmHWM:")?,
    })
}

/// Cores used between two samples (CPU seconds per wall second).
pub fn cores(a: &Sample, b: &Sample, ticks_per_sec: f64) -> f64 {
    let wall = b.at.saturating_duration_since(a.at).as_secs_f64();
    if wall <= 0.0 {
        return 0.0;
    }
    b.ticks.saturating_sub(a.ticks) as f64 / ticks_per_sec / wall
}

/// Clock ticks per second for /proc/PID/stat (`getconf CLK_TCK`; 100 on Linux if that fails).
pub fn ticks_per_sec() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|t| *t > 0.0)
        .unwrap_or(100.0)
}

/// The `wsload` and `echo-server` binaries.
#[derive(Debug, Clone)]
pub struct Tools {
    pub wsload: PathBuf,
    pub echo_server: PathBuf,
}

/// Where the tools are: `dir` (or `RELAY_WSLOAD_DIR`) holding both binaries; else the release
/// build under `<target>/wsload`, built there from `../shared/tools/wsload` when missing.
pub fn tools(dir: Option<&Path>) -> Result<Tools> {
    let in_dir = |d: &Path| Tools {
        wsload: d.join("wsload"),
        echo_server: d.join("echo-server"),
    };
    let present = |t: &Tools| t.wsload.is_file() && t.echo_server.is_file();
    if let Some(d) = dir {
        let t = in_dir(d);
        if !present(&t) {
            bail!(
                "no wsload and echo-server binaries in {} (from --wsload-dir / RELAY_WSLOAD_DIR)",
                d.display()
            );
        }
        return Ok(t);
    }
    let target = target_dir()?;
    let built = target.join("wsload");
    let t = in_dir(&built.join("release"));
    if present(&t) {
        return Ok(t);
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tools/wsload");
    let manifest = source.join("Cargo.toml");
    if !manifest.is_file() {
        bail!(
            "wsload is neither built in {} nor its source at {}; set RELAY_WSLOAD_DIR to a directory with the wsload and echo-server binaries",
            built.display(),
            source.display()
        );
    }
    eprintln!(
        "bench: building wsload from {} into {}",
        source.display(),
        built.display()
    );
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--locked", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&built)
        .status()
        .context("cannot run cargo to build wsload")?;
    if !status.success() || !present(&t) {
        bail!("building wsload failed ({status})");
    }
    Ok(t)
}

/// This project's target directory: `CARGO_TARGET_DIR`, else the one the running binary was
/// built into (`<target>/release/relay`).
fn target_dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe().context("cannot find the running binary")?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .context("cannot find the target directory from the running binary's path")
}

/// GET `url` as text (up to 64 MiB); `None` on any failure (the caller waits or reports).
fn get_text(url: &str) -> Option<String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    agent
        .get(url)
        .call()
        .ok()?
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .ok()
}

/// GET `url` as JSON; `None` on any failure (the caller waits or reports).
pub fn get_json(url: &str) -> Option<serde_json::Value> {
    get_text(url).and_then(|t| serde_json::from_str(&t).ok())
}

/// The writer's group commits so far at the service at `addr`: how many, and the time spent
/// in them (µs), from its `/metrics` (the count and sum of its commit-time histogram);
/// `None` when they cannot be read.
pub fn group_commits(addr: std::net::SocketAddr) -> Option<(u64, u64)> {
    let text = get_text(&format!("http://{addr}/metrics"))?;
    let value = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(' ')?;
            rest.trim().parse::<f64>().ok()
        })
    };
    Some((
        value("relay_group_commit_seconds_count")? as u64,
        (value("relay_group_commit_seconds_sum")? * 1e6).round() as u64,
    ))
}

/// Environment variables of `relay serve` and `relay emulate` the user may have set for their
/// own runs; the bench's children must not pick them up.
const FOREIGN_ENV: &[&str] = &[
    "RELAY_CONFIG",
    "RELAY_PORTS",
    "RELAY_BUS",
    "RELAY_DB",
    "RELAY_LISTEN",
    "RELAY_ADMIN_TOKEN",
    "RELAY_DELAY",
    "RELAY_SETTLE_MS",
    "RELAY_WEB_DIR",
    "RELAY_DEMO_BOARDS",
    "RELAY_DEMO_SPEED",
];

/// Waits for a `relay serve` started with its stdout piped to say where it serves.
pub fn serving_addr(serve: &mut Proc, stop: &Arc<AtomicBool>) -> Result<std::net::SocketAddr> {
    let lines = serve.lines().context("no output from relay serve")?;
    wait_line(serve, &lines, Duration::from_secs(60), stop, |l| {
        l.strip_prefix("relay: serving on http://")
            .and_then(|a| a.trim_end_matches('/').parse().ok())
    })
}

/// A command for one of this binary's subcommands, with the environment cleaned.
pub fn relay_command() -> Result<Command> {
    let exe = std::env::current_exe().context("cannot find the running binary")?;
    let mut cmd = Command::new(exe);
    for v in FOREIGN_ENV {
        cmd.env_remove(v);
    }
    if std::env::var_os("RELAY_LOG").is_none() {
        cmd.env("RELAY_LOG", "warn");
    }
    Ok(cmd)
}

/// The hard limit on open files, from /proc/self/limits.
pub fn fd_hard_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(4)?.parse().ok()
}

/// A new file at `path` for a child's output.
pub fn file_out(path: &Path) -> Result<Stdio> {
    Ok(std::fs::File::create(path)
        .with_context(|| format!("cannot create {}", path.display()))?
        .into())
}
