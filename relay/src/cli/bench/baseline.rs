//! The bare machine to compare with: echo-server broadcasting frames to as many wsload clients
//! as the case has spectators, ramped the same way, so that the relay's fan-out is read
//! against what this machine does with no relay at all.

use super::cases::Case;
use super::figures::{self, Fanout};
use super::load::Load;
use super::procs::{Proc, Tools, file_out, sleep_until};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What echo-server broadcasts in a baseline.
pub struct Echo {
    pub interval_ms: u64,
    /// Bytes of padding in each frame.
    pub pad: usize,
    /// Names wsload's files in the run's directory.
    pub prefix: &'static str,
}

impl Echo {
    /// The bare machine: a small frame every 500 ms.
    pub const SMALL: Echo = Echo {
        interval_ms: 500,
        pad: 0,
        prefix: "echo",
    };
}

/// echo-server's frame without padding (`{"seq":…,"san":…,"t_ns":…}`): 56–57 bytes.
pub const ECHO_FRAME_BYTES: usize = 57;
/// The padding field's own bytes (`,"pad":""`).
pub const ECHO_PAD_FIELD_BYTES: usize = 9;

/// The bare machine: echo-server broadcasting `frames` to the same number of clients,
/// ramped the same way.
pub fn baseline(
    case: &Case,
    tools: &Tools,
    dir: &Path,
    wsload_procs: usize,
    stop: &Arc<AtomicBool>,
    frames: &Echo,
) -> Result<Option<Fanout>> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    // One process holds about 19,980 sockets under a 20,000 fd limit; more share the port.
    let servers = case.clients.div_ceil(19_000).max(1);
    let mut echo = Vec::new();
    for i in 0..servers {
        let mut cmd = Command::new(&tools.echo_server);
        cmd.args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--interval-ms", &frames.interval_ms.to_string()])
            .args(["--pad", &frames.pad.to_string(), "--stats-secs", "0"])
            .stdin(Stdio::null())
            .stdout(file_out(
                &dir.join(format!("{}-server-{i}.txt", frames.prefix)),
            )?)
            .stderr(Stdio::null());
        if servers > 1 {
            cmd.arg("--reuse-port");
        }
        echo.push(Proc::spawn("echo-server", &mut cmd)?);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            bail!("echo-server did not start listening on port {port}");
        }
        sleep_until(Instant::now() + Duration::from_millis(50), stop)?;
    }
    let load = Load {
        urls: vec![format!("ws://127.0.0.1:{port}/")],
        clients: case.clients,
        ramp_per_sec: case.ramp_per_sec,
        duration: case.seconds.min(15) as f64,
        procs: wsload_procs,
        // Anchored, as the relay's: the padding is not read for markers.
        marker: r#"^\{"seq":(\d+)"#,
        sample: 0,
        dir,
        prefix: frames.prefix,
    };
    let mut wsload = load.spawn(tools)?;
    load.finish(&mut wsload, stop)
        .context("the echo-server baseline")?;
    drop(echo);
    let rows = figures::markers(&load.path("markers.tsv"))?;
    Ok(figures::fanout(rows.iter()))
}
