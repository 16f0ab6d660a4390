//! `relay bench`: the live service measured the way spectators meet it, in three processes on
//! this machine. `relay emulate` plays N boards on pseudo-terminals; `relay serve` reads them
//! (SQLite in a temporary directory) as a process of its own, whose CPU time and memory are
//! read from /proc; `wsload` connects M WebSocket spectators to the round and records what
//! they receive. Right after, `echo-server` (a bare broadcast loop) with the same clients
//! gives the machine's own fan-out spread to compare with.
//!
//! The boards stand set up while the spectators connect, then play; the measured window starts
//! one second after the last connection attempt. The delay from the board includes the settle
//! time (a board must be still for `settle_ms` before it is read as a position), printed also
//! without it. Boards, spectators and service share the machine's cores, so the figures are a
//! floor for a server with a machine of its own.

mod convert;
mod figures;
mod pgn;
mod procs;
mod push;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use figures::{Fanout, Marker, mib, percentile};
use procs::{
    Proc, Sample, TempDir, Tools, get_json, group_commits, interrupted, sample, sleep_until,
    wait_line,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Case to run; repeat for several. smoke: 20 boards at 10x, 200 spectators, 10 s.
    /// real100 / real1000: 100 / 1000 boards at real pace, 10 spectators, 60 s. crowd: 200
    /// boards at 10x, 5000 spectators ramping at 2000/s, 40 s. crowd-real: 200 boards at real
    /// pace, 19,000 spectators (as many as one process holds under a 20,000 open-file limit)
    /// ramping at 2000/s, 40 s. delayed: 50 boards at 10x with a 30 s broadcast delay, 1000
    /// spectators, 60 s. cluster10k / cluster40k: several relays on one PostgreSQL
    /// (`--postgres`): one reading 200 boards at real pace, three `--no-boards` relays
    /// serving 10,000 / 40,000 spectators between them (source addresses 127.0.0.2-9), 40 s.
    /// push: a venue relay (50 boards at 10x, SQLite) pushing to a cloud relay (`--postgres`)
    /// with 1000 spectators, 30 s: venue → cloud spectator per move. push-backlog: 100,000
    /// changes (`--clients` sets the number; games of 100 moves) waiting at the venue,
    /// drained to a cloud relay. convert: `relay convert` on 100,000 games (`--boards`) of
    /// the shared PGN repeated, each format each way, python-chess beside it, sizes per game.
    #[arg(long = "case", value_enum)]
    cases: Vec<CaseName>,
    /// Emulated boards (overrides the case's).
    #[arg(long)]
    boards: Option<usize>,
    /// WebSocket spectators following the round (overrides the case's).
    #[arg(long)]
    clients: Option<usize>,
    /// Seconds measured once every spectator has connected (overrides the case's).
    #[arg(long)]
    seconds: Option<u64>,
    /// How much faster than real time the games run (overrides the case's).
    #[arg(long)]
    speed: Option<f64>,
    /// Spectator connections started per second (overrides the case's).
    #[arg(long)]
    ramp_per_sec: Option<f64>,
    /// Broadcast delay in seconds given to the service (overrides the case's).
    #[arg(long)]
    delay: Option<u32>,
    /// Chance per move of each kind of human noise (slides, lifted pieces, takebacks).
    #[arg(long, default_value_t = 0.15)]
    noise: f64,
    /// The service's settle time in ms (`relay serve --settle-ms`).
    #[arg(long, default_value_t = 300)]
    settle_ms: u64,
    /// Spectators whose every frame is recorded and timed (spread evenly over all).
    #[arg(long, default_value_t = 50)]
    sample: usize,
    /// wsload worker processes (default: one per 15,000 spectators; each has its own fd
    /// limit).
    #[arg(long)]
    wsload_procs: Option<usize>,
    /// Skip the echo-server baseline.
    #[arg(long)]
    no_baseline: bool,
    /// Seconds each round-PGN polling measurement runs, after the window (0: none).
    #[arg(long, default_value_t = 0)]
    pgn_seconds: u64,
    /// Concurrent connections polling the round PGN.
    #[arg(long, default_value_t = 16)]
    pgn_connections: usize,
    /// PostgreSQL server for the cluster cases (a database `relay_bench_PID` is made on it
    /// and dropped afterwards), e.g. postgres://postgres@127.0.0.1:5432/test.
    #[arg(long, env = "RELAY_BENCH_POSTGRES")]
    postgres: Option<String>,
    /// Directory with the `wsload` and `echo-server` binaries. Default: the release build in
    /// `<target>/wsload`, built from `../shared/tools/wsload` when missing.
    #[arg(long, env = "RELAY_WSLOAD_DIR")]
    wsload_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CaseName {
    Smoke,
    Real100,
    Real1000,
    Crowd,
    CrowdReal,
    Delayed,
    Cluster10k,
    Cluster40k,
    Push,
    PushBacklog,
    Convert,
}

/// One configuration measured.
#[derive(Debug, Clone)]
struct Case {
    name: &'static str,
    boards: usize,
    speed: f64,
    clients: usize,
    ramp_per_sec: f64,
    seconds: u64,
    delay: Option<u32>,
    /// Relays started with `--no-boards` on the same PostgreSQL, serving the spectators
    /// (0: the board-reading relay on SQLite serves them itself).
    web: usize,
}

impl CaseName {
    fn case(self) -> Case {
        let c = |name, boards, speed, clients, seconds| Case {
            name,
            boards,
            speed,
            clients,
            ramp_per_sec: 2000.0,
            seconds,
            delay: None,
            web: 0,
        };
        match self {
            CaseName::Smoke => c("smoke", 20, 10.0, 200, 10),
            CaseName::Real100 => c("real100", 100, 1.0, 10, 60),
            CaseName::Real1000 => c("real1000", 1000, 1.0, 10, 60),
            CaseName::Crowd => c("crowd", 200, 10.0, 5000, 40),
            CaseName::CrowdReal => c("crowd-real", 200, 1.0, 19_000, 40),
            CaseName::Delayed => Case {
                delay: Some(30),
                ..c("delayed", 50, 10.0, 1000, 60)
            },
            CaseName::Cluster10k => Case {
                web: 3,
                ..c("cluster10k", 200, 1.0, 10_000, 40)
            },
            CaseName::Cluster40k => Case {
                web: 3,
                ..c("cluster40k", 200, 1.0, 40_000, 40)
            },
            // Run by `push` (never asked for here).
            CaseName::Push | CaseName::PushBacklog | CaseName::Convert => {
                c("push", 50, 10.0, 1000, 30)
            }
        }
    }
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

/// The round the service makes for the boards in a fresh database, which spectators follow.
const ROUND: i64 = 1;

pub fn run(args: BenchArgs) -> Result<()> {
    let stop = super::stop_flag()?;
    let names = if args.cases.is_empty() {
        vec![CaseName::Smoke]
    } else {
        args.cases.clone()
    };
    let tools = procs::tools(args.wsload_dir.as_deref())?;
    let tck = procs::ticks_per_sec();
    for name in names {
        match name {
            CaseName::Push => {
                push::latency(&args, &tools, &stop).context("bench case push")?;
                continue;
            }
            CaseName::PushBacklog => {
                push::backlog(&args, &stop).context("bench case push-backlog")?;
                continue;
            }
            CaseName::Convert => {
                convert::run(&args).context("bench case convert")?;
                continue;
            }
            _ => {}
        }
        let mut case = name.case();
        case.boards = args.boards.unwrap_or(case.boards);
        case.clients = args.clients.unwrap_or(case.clients);
        case.seconds = args.seconds.unwrap_or(case.seconds);
        case.speed = args.speed.unwrap_or(case.speed);
        case.ramp_per_sec = args.ramp_per_sec.unwrap_or(case.ramp_per_sec);
        case.delay = args.delay.or(case.delay).filter(|d| *d > 0);
        if case.boards == 0 || case.clients == 0 || case.seconds == 0 {
            bail!("--boards, --clients and --seconds must be at least 1");
        }
        if !(case.speed > 0.0 && case.ramp_per_sec > 0.0) {
            bail!("--speed and --ramp-per-sec must be above 0");
        }
        run_case(&case, &args, &tools, &stop, tck)
            .with_context(|| format!("bench case {}", case.name))?;
    }
    Ok(())
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// A command for one of this binary's subcommands, with the environment cleaned.
fn relay_command() -> Result<Command> {
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
fn fd_hard_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(4)?.parse().ok()
}

fn file_out(path: &Path) -> Result<Stdio> {
    Ok(std::fs::File::create(path)
        .with_context(|| format!("cannot create {}", path.display()))?
        .into())
}

/// How wsload is run for one measurement.
struct Load<'a> {
    /// Clients are spread round-robin over these.
    urls: Vec<String>,
    clients: usize,
    ramp_per_sec: f64,
    duration: f64,
    procs: usize,
    marker: &'a str,
    sample: usize,
    dir: &'a Path,
    prefix: &'a str,
}

impl Load<'_> {
    fn path(&self, what: &str) -> PathBuf {
        self.dir.join(format!("{}-{what}", self.prefix))
    }

    fn spawn(&self, tools: &Tools) -> Result<Proc> {
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
    fn finish(&self, wsload: &mut Proc, stop: &AtomicBool) -> Result<()> {
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
const RELAY_MARKER: &str = r#"^\{"type":"(?:(snapshot)"|move","seq":(\d+))"#;

fn run_case(
    case: &Case,
    args: &BenchArgs,
    tools: &Tools,
    stop: &Arc<AtomicBool>,
    tck: f64,
) -> Result<()> {
    let dir = TempDir::new(case.name)?;
    let ramp_secs = case.clients as f64 / case.ramp_per_sec;
    let wsload_procs = args
        .wsload_procs
        .unwrap_or(case.clients.div_ceil(15_000))
        .max(1);
    let mut notes = Vec::new();
    if let Some(hard) = fd_hard_limit() {
        // Per relay serving spectators (spread evenly over the --no-boards relays).
        let need = (case.clients / case.web.max(1) + 2 * case.boards + 64) as u64;
        if need > hard {
            notes.push(format!(
                "the service needs about {need} file descriptors (a socket per spectator, the boards' terminals) but the hard limit is {hard}: expect failed connections"
            ));
        }
    }
    println!(
        "== case {}: {} boards at {}x, {} spectators (ramp {}/s over {:.1} s), {} s measured{} ==",
        case.name,
        case.boards,
        case.speed,
        case.clients,
        case.ramp_per_sec,
        ramp_secs,
        case.seconds,
        case.delay
            .map(|d| format!(", {d} s broadcast delay"))
            .unwrap_or_default()
    );

    // The boards stand set up until the service has put every one on its board and the
    // spectators have connected, then play (when the bench creates the start file): a board
    // the service first reads in the middle of a game is not recorded until its next game,
    // which would leave part of the hall out of the measure.
    let links = dir.0.join("boards");
    let go = dir.0.join("start");
    let mut cmd = relay_command()?;
    cmd.arg("emulate")
        .args(["--boards", &case.boards.to_string()])
        .args(["--speed", &case.speed.to_string()])
        .arg("--link-dir")
        .arg(&links)
        .arg("--start-file")
        .arg(&go)
        .args(["--seed", "1", "--noise", &args.noise.to_string()])
        .args(["--time-control", "5400+30"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut boards = Proc::spawn("emulated boards", &mut cmd)?;
    let lines = boards.lines().context("no output from relay emulate")?;
    wait_line(
        &mut boards,
        &lines,
        Duration::from_secs(30 + case.boards as u64 / 10),
        stop,
        |l| l.starts_with("emulating ").then_some(()),
    )?;

    let pg = if case.web > 0 {
        let server = args.postgres.as_deref().context(
            "the cluster cases need a PostgreSQL server: --postgres URL (or RELAY_BENCH_POSTGRES)",
        )?;
        Some(BenchDatabase::create(server)?)
    } else {
        None
    };
    let db = match &pg {
        Some(p) => p.url.clone(),
        None => format!("sqlite://{}", dir.0.join("bench.db").display()),
    };
    let mut cmd = relay_command()?;
    cmd.arg("serve")
        .arg("--port")
        .arg(format!("{}/dgt-*", links.display()))
        .args(["--db", &db, "--listen", "127.0.0.1:0"])
        .args(["--settle-ms", &args.settle_ms.to_string()]);
    if let Some(d) = case.delay {
        cmd.args(["--delay", &d.to_string()]);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    let mut serve = Proc::spawn("service", &mut cmd)?;
    let lines = serve.lines().context("no output from relay serve")?;
    let addr: SocketAddr = wait_line(&mut serve, &lines, Duration::from_secs(60), stop, |l| {
        l.strip_prefix("relay: serving on http://")
            .and_then(|a| a.trim_end_matches('/').parse().ok())
    })?;
    println!(
        "  processes: boards pid {}, service pid {} on {addr}",
        boards.pid(),
        serve.pid()
    );
    // Relays serving the spectators only, on the same database.
    let mut webs = Vec::new();
    for _ in 0..case.web {
        let mut cmd = relay_command()?;
        cmd.arg("serve")
            .args(["--db", &db, "--no-boards", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let mut web = Proc::spawn("relay --no-boards", &mut cmd)?;
        let lines = web
            .lines()
            .context("no output from relay serve --no-boards")?;
        let at: SocketAddr = wait_line(&mut web, &lines, Duration::from_secs(60), stop, |l| {
            l.strip_prefix("relay: serving on http://")
                .and_then(|a| a.trim_end_matches('/').parse().ok())
        })?;
        println!("  processes: relay --no-boards pid {} on {at}", web.pid());
        webs.push((web, at));
    }

    let placed_in = every_board_placed(addr, case.boards, stop)?;
    println!(
        "  start             all {} e-boards on their boards {placed_in:.1} s after the service was up",
        case.boards
    );
    let before = sample(serve.pid()).context("cannot read the service's /proc entry")?;
    let webs_before: Vec<Sample> = webs
        .iter()
        .map(|(w, _)| sample(w.pid()).context("a --no-boards relay has gone"))
        .collect::<Result<_>>()?;
    let targets: Vec<SocketAddr> = if webs.is_empty() {
        vec![addr]
    } else {
        webs.iter().map(|(_, a)| *a).collect()
    };
    let load = Load {
        urls: targets
            .iter()
            .map(|a| format!("ws://{a}/api/rounds/{ROUND}/ws"))
            .collect(),
        clients: case.clients,
        ramp_per_sec: case.ramp_per_sec,
        // Spectators stay a little past the window for the moves stored at its end to
        // reach them (several seconds under the load of the cluster cases).
        duration: case.seconds as f64 + if case.web > 0 { 8.0 } else { 1.5 },
        procs: wsload_procs,
        marker: RELAY_MARKER,
        sample: args.sample.min(case.clients),
        dir: &dir.0,
        prefix: "relay",
    };
    let load_ns = unix_ns();
    let load_at = Instant::now();
    let mut wsload = load.spawn(tools)?;

    // The window: from a second after the last connection attempt, when the boards start
    // playing, `seconds` long.
    let w0 = load_at + Duration::from_secs_f64(ramp_secs + 1.0);
    sleep_until(w0, stop)?;
    std::fs::write(&go, b"").context("cannot write the boards' start file")?;
    let w0_ms = (unix_ns() / 1_000_000) as i64;
    let start = Window::sample(&serve, &boards, &wsload, &webs)?;
    let commits0 = group_commits(addr);
    sleep_until(w0 + Duration::from_secs(case.seconds), stop)?;
    let w1_ms = (unix_ns() / 1_000_000) as i64;
    let end = Window::sample(&serve, &boards, &wsload, &webs)?;
    let commits = commits0.zip(group_commits(addr));

    load.finish(&mut wsload, stop)?;
    let pgn = if args.pgn_seconds > 0 {
        Some(pgn_rates(addr, args)?)
    } else {
        None
    };
    // Stopped gently, so the service flushes the store before it is read.
    for (w, _) in &mut webs {
        w.stop(Duration::from_secs(10));
    }
    serve.stop(Duration::from_secs(20));
    boards.stop(Duration::from_secs(10));
    let changes = stored_moves(&db)?;
    drop(pg);

    let run = Run {
        case,
        settle_ms: args.settle_ms,
        tck,
        window_ms: (w0_ms, w1_ms),
        load_ns,
        ramp_secs,
        before,
        webs_before,
        start,
        end,
        commits,
        moves: changes,
    };
    let (relay_fanout, bytes_per_sec) = run.report(&load)?;
    if !args.no_baseline {
        let compare = |bare: &Option<Fanout>| match (&relay_fanout, bare) {
            (Some(r), Some(b)) if b.last.0 > 0.0 => {
                format!("; the relay's → last median is {:.2}x", r.last.0 / b.last.0)
            }
            _ => String::new(),
        };
        let plain = baseline(case, tools, &dir.0, wsload_procs, stop, &Echo::SMALL)?;
        println!(
            "  fan-out bare      {} (echo-server, the same {} clients and ramp, a {}-byte frame every {} ms){}",
            fanout_line(plain.as_ref(), "frames"),
            case.clients,
            ECHO_FRAME_BYTES,
            Echo::SMALL.interval_ms,
            compare(&plain)
        );
        // The same bytes a second as the relay's spectators got, at the relay's sweep: what
        // the machine can do with this traffic at all.
        if let Some(rate) = bytes_per_sec.filter(|r| *r > 0.0) {
            let interval_ms = crate::serve::feeds::SWEEP.as_millis() as u64;
            let frame = (rate * interval_ms as f64 / 1000.0).round() as usize;
            let same = Echo {
                interval_ms,
                pad: frame.saturating_sub(ECHO_FRAME_BYTES + ECHO_PAD_FIELD_BYTES),
                prefix: "echo-bytes",
            };
            let bytes = baseline(case, tools, &dir.0, wsload_procs, stop, &same)?;
            println!(
                "  fan-out bare, same bytes {} (echo-server, a {frame}-byte frame every {interval_ms} ms: the relay's {:.2} KiB/s per spectator){}",
                fanout_line(bytes.as_ref(), "frames"),
                rate / 1024.0,
                compare(&bytes)
            );
        }
    }
    if let Some((plain, cached)) = pgn {
        println!(
            "  round PGN         {plain:.0} requests/s with the body, {} over {} connections",
            cached
                .map(|c| format!("{c:.0} with If-None-Match (304 while unchanged)"))
                .unwrap_or_else(|| "no ETag to try If-None-Match with".into()),
            args.pgn_connections
        );
    }
    for n in notes {
        println!("  note: {n}");
    }
    println!();
    Ok(())
}

/// The three processes sampled at one edge of the window.
#[derive(Debug)]
struct Window {
    serve: Sample,
    boards: Option<Sample>,
    wsload: Option<Sample>,
    /// The `--no-boards` relays, in order.
    webs: Vec<Sample>,
}

impl Window {
    fn sample(
        serve: &Proc,
        boards: &Proc,
        wsload: &Proc,
        webs: &[(Proc, SocketAddr)],
    ) -> Result<Window> {
        Ok(Window {
            serve: sample(serve.pid()).context("the service has gone")?,
            boards: sample(boards.pid()),
            wsload: sample(wsload.pid()),
            webs: webs
                .iter()
                .map(|(w, _)| sample(w.pid()).context("a --no-boards relay has gone"))
                .collect::<Result<_>>()?,
        })
    }
}

/// A PostgreSQL database made for one bench run, dropped afterwards.
struct BenchDatabase {
    server: String,
    name: String,
    url: String,
}

impl BenchDatabase {
    fn create(server: &str) -> Result<BenchDatabase> {
        let name = format!("relay_bench_{}", std::process::id());
        psql(server, &format!("DROP DATABASE IF EXISTS {name}"))?;
        psql(server, &format!("CREATE DATABASE {name}"))?;
        let (base, _) = server.rsplit_once('/').context(
            "--postgres needs a URL with a database, e.g. postgres://postgres@127.0.0.1:5432/test",
        )?;
        Ok(BenchDatabase {
            server: server.to_string(),
            url: format!("{base}/{name}"),
            name,
        })
    }
}

impl Drop for BenchDatabase {
    fn drop(&mut self) {
        let _ = psql(
            &self.server,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// Waits until the service at `addr` has every one of `boards` e-boards on a board of a
/// round (it has read the port and the start position); the seconds that took.
fn every_board_placed(addr: SocketAddr, boards: usize, stop: &AtomicBool) -> Result<f64> {
    let t0 = Instant::now();
    let limit = Duration::from_secs(60 + boards as u64 / 10);
    let mut placed = 0;
    while t0.elapsed() < limit {
        interrupted(stop)?;
        if let Some(serde_json::Value::Array(list)) =
            get_json(&format!("http://{addr}/api/eboards"))
        {
            placed = list
                .iter()
                .filter(|e| e["connected"] == true && e["game_id"].is_i64())
                .count();
            if placed >= boards {
                return Ok(t0.elapsed().as_secs_f64());
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    bail!(
        "after {} s the service had {placed} of {boards} e-boards on a board",
        limit.as_secs()
    )
}

fn psql(server: &str, sql: &str) -> Result<()> {
    let out = Command::new("psql")
        .args([server, "-q", "-c", sql])
        .output()
        .context("psql (PostgreSQL's client) is needed for the cluster cases")?;
    if !out.status.success() {
        bail!(
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Every `move` change the service stored: seq → when it was stored (ms since the epoch).
fn stored_moves(db: &str) -> Result<BTreeMap<i64, i64>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let store = relay_store::Store::open(db)
            .await
            .context("cannot open the bench database")?;
        let mut moves = BTreeMap::new();
        let mut after = 0;
        loop {
            let page = store.changes_since(ROUND, after, 10_000).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for c in page.iter().filter(|c| c.kind == "move") {
                moves.insert(c.seq, c.at_ms);
            }
        }
        Ok(moves)
    })
}

fn pgn_rates(addr: SocketAddr, args: &BenchArgs) -> Result<(f64, Option<f64>)> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let (plain, etag) =
            pgn::pgn_rate(addr, args.pgn_connections, args.pgn_seconds, None).await?;
        let cached = match etag {
            Some(tag) => Some(
                pgn::pgn_rate(addr, args.pgn_connections, args.pgn_seconds, Some(tag))
                    .await?
                    .0,
            ),
            None => None,
        };
        Ok((plain, cached))
    })
}

/// What echo-server broadcasts in a baseline.
struct Echo {
    interval_ms: u64,
    /// Bytes of padding in each frame.
    pad: usize,
    /// Names wsload's files in the run's directory.
    prefix: &'static str,
}

impl Echo {
    /// The bare machine: a small frame every 500 ms.
    const SMALL: Echo = Echo {
        interval_ms: 500,
        pad: 0,
        prefix: "echo",
    };
}

/// echo-server's frame without padding (`{"seq":…,"san":…,"t_ns":…}`): 56–57 bytes.
const ECHO_FRAME_BYTES: usize = 57;
/// The padding field's own bytes (`,"pad":""`).
const ECHO_PAD_FIELD_BYTES: usize = 9;

/// The bare machine: echo-server broadcasting `frames` to the same number of clients,
/// ramped the same way.
fn baseline(
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

/// What one case measured, ready to print.
struct Run<'a> {
    case: &'a Case,
    settle_ms: u64,
    tck: f64,
    window_ms: (i64, i64),
    load_ns: u64,
    ramp_secs: f64,
    before: Sample,
    /// The `--no-boards` relays before spectators came.
    webs_before: Vec<Sample>,
    start: Window,
    end: Window,
    /// The board reader's group commits (count, µs spent) at the window's start and end.
    commits: Option<((u64, u64), (u64, u64))>,
    /// Every stored move: seq → stored at (ms since the epoch).
    moves: BTreeMap<i64, i64>,
}

impl Run<'_> {
    /// Prints what the relay did; returns its fan-out and the bytes a second its sampled
    /// spectators got in the window (median), for the baselines.
    fn report(&self, load: &Load) -> Result<(Option<Fanout>, Option<f64>)> {
        let clients = self.case.clients as u64;
        let delay_ms = i64::from(self.case.delay.unwrap_or(0)) * 1000;
        let (w0, w1) = self.window_ms;
        let wall = (w1 - w0) as f64 / 1000.0;
        let summary = figures::summary(&load.path("summary.json"))?;
        let markers = figures::markers(&load.path("markers.tsv"))?;

        // The relays serving spectators, when they are not the one reading the boards.
        if !self.webs_before.is_empty() {
            let (s0, s1) = (&self.start.serve, &self.end.serve);
            println!(
                "  board reader      CPU {:.2} cores over the {wall:.1} s window; RSS {} (peak {}); serves no spectator",
                procs::cores(s0, s1, self.tck),
                mib(s1.rss_kib),
                mib(s1.hwm_kib),
            );
            let n = self.webs_before.len();
            let mut grown = 0;
            for (i, ((b, w0), w1)) in self
                .webs_before
                .iter()
                .zip(&self.start.webs)
                .zip(&self.end.webs)
                .enumerate()
            {
                grown += w0.rss_kib.saturating_sub(b.rss_kib);
                println!(
                    "  --no-boards {}     CPU {:.2} cores; RSS {} before spectators, {} connected, {} at the end (peak {}); about {} spectators",
                    i + 1,
                    procs::cores(w0, w1, self.tck),
                    mib(b.rss_kib),
                    mib(w0.rss_kib),
                    mib(w1.rss_kib),
                    mib(w1.hwm_kib),
                    clients as usize / n,
                );
            }
            println!(
                "  per spectator     {:.1} KiB of relay memory once connected (all --no-boards relays)",
                grown as f64 / clients as f64
            );
        }
        // The service.
        let (s0, s1) = (&self.start.serve, &self.end.serve);
        let per_client_kib = s0.rss_kib.saturating_sub(self.before.rss_kib) as f64 / clients as f64;
        // At the end too: buffers that grow while spectators follow count as much as those
        // taken at connection.
        let at_end_kib = s1.hwm_kib.saturating_sub(self.before.rss_kib) as f64 / clients as f64;
        if self.webs_before.is_empty() {
            println!(
                "  service           CPU {:.2} cores over the {wall:.1} s window; RSS {} before spectators, {} connected, {} at the end (peak {}): {per_client_kib:.1} KiB per spectator once connected, {at_end_kib:.1} KiB at the peak",
                procs::cores(s0, s1, self.tck),
                mib(self.before.rss_kib),
                mib(s0.rss_kib),
                mib(s1.rss_kib),
                mib(s1.hwm_kib),
            );
        }
        if let Some(((n0, us0), (n1, us1))) = self.commits {
            let n = n1.saturating_sub(n0);
            println!(
                "  commits           {:.0} a second (group commits of the writer, one fsync each), {:.2} ms each on average",
                n as f64 / wall,
                us1.saturating_sub(us0) as f64 / 1000.0 / n.max(1) as f64
            );
        }
        let other = |a: &Option<Sample>, b: &Option<Sample>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}", procs::cores(a, b, self.tck)),
            _ => "?".into(),
        };
        println!(
            "  same machine      boards {} cores, wsload {} cores (its main process), {} cores in all",
            other(&self.start.boards, &self.end.boards),
            other(&self.start.wsload, &self.end.wsload),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );

        // Snapshots: every client's first one is the marker `snapshot`.
        let snap = markers.iter().find(|m| m.text == "snapshot");
        let reached = snap.map_or(0, |m| m.clients);
        let conn = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
        println!(
            "  snapshots         {reached} of {clients} spectators got one{}; connect+handshake p50 {} / p99 {} / max {} ms; {} never connected, {} connected but got nothing, {} closed by the service",
            snap.map(|m| format!(
                ", the last {:.2} s after the first connection attempt (ramp {:.2} s)",
                (m.first_ns as f64 + m.last_ms * 1e6 - self.load_ns as f64) / 1e9,
                self.ramp_secs
            ))
            .unwrap_or_default(),
            conn(summary.connect_ms[0]),
            conn(summary.connect_ms[1]),
            conn(summary.connect_ms[2]),
            summary.failed,
            summary.established.saturating_sub(reached),
            summary.closed_by_server,
        );

        // The moves spectators should have seen during the window: stored, plus the delay.
        let window: HashSet<i64> = self
            .moves
            .iter()
            .filter(|(_, at)| (w0..=w1).contains(&(**at + delay_ms)))
            .map(|(seq, _)| *seq)
            .collect();
        let by_seq: HashMap<i64, &Marker> = markers
            .iter()
            .filter_map(|m| Some((m.text.parse::<i64>().ok()?, m)))
            .collect();
        let moves = window.len() as u64;
        let delivered: u64 = window
            .iter()
            .filter_map(|s| by_seq.get(s))
            .map(|m| m.clients)
            .sum();
        let expected = moves * clients;
        println!(
            "  delivered         {delivered} of {expected} move frames expected ({moves} moves in the window x {clients} spectators){}",
            if expected > 0 {
                format!(" = {:.1}%", delivered as f64 * 100.0 / expected as f64)
            } else {
                String::new()
            }
        );

        let bytes_per_sec = self.sampled(load, &window, moves, delay_ms)?;
        println!(
            "  whole run         per spectator median {} frames, {:.1} KiB (min {} frames); {} frames, {:.1} MiB to all; wsload peak RSS {}",
            summary.client_frames[1],
            summary.client_bytes[1] as f64 / 1024.0,
            summary.client_frames[0],
            summary.frames,
            summary.bytes as f64 / 1048576.0,
            mib(summary.peak_rss_kib),
        );

        let fan = figures::fanout(window.iter().filter_map(|s| by_seq.get(s).copied()));
        println!("  fan-out relay     {}", fanout_line(fan.as_ref(), "moves"));
        Ok((fan, bytes_per_sec))
    }

    /// Latency and per-spectator traffic from the sampled spectators' frames.
    /// Returns the median bytes a second a sampled spectator got in the window.
    fn sampled(
        &self,
        load: &Load,
        window: &HashSet<i64>,
        moves: u64,
        delay_ms: i64,
    ) -> Result<Option<f64>> {
        if load.sample == 0 {
            return Ok(None);
        }
        let (w0, w1) = self.window_ms;
        let (w0_ns, w1_ns) = (w0 as u64 * 1_000_000, w1 as u64 * 1_000_000);
        let mut latency_ms: Vec<f64> = Vec::new();
        let mut from_store = 0usize;
        let mut frames: HashMap<u32, (u64, u64)> = HashMap::new();
        let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
        for f in figures::frames(&load.path("frames.tsv"))? {
            let in_window = (w0_ns..=w1_ns).contains(&f.at_ns);
            let entry = frames.entry(f.client).or_default();
            if !in_window {
                continue;
            }
            entry.0 += 1;
            entry.1 += f.text.len() as u64;
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&f.text) else {
                continue;
            };
            let kind = v["type"].as_str().unwrap_or("?");
            *kinds.entry(kind.to_string()).or_default() += 1;
            let Some(seq) = v["seq"].as_i64() else {
                continue;
            };
            if kind != "move" || !window.contains(&seq) {
                continue;
            }
            // The board's read time if the frame carries it, else the time it was stored.
            let read = match v["read_at_ms"].as_i64() {
                Some(r) => r,
                None => match self.moves.get(&seq) {
                    Some(at) => {
                        from_store += 1;
                        *at
                    }
                    None => continue,
                },
            };
            latency_ms.push(f.at_ns as f64 / 1e6 - (read + delay_ms) as f64);
        }
        latency_ms.sort_by(f64::total_cmp);
        let sampled = load.sample;
        let delay = if delay_ms > 0 {
            format!(", minus the {} s delay", delay_ms / 1000)
        } else {
            String::new()
        };
        match (
            percentile(&latency_ms, 50.0),
            percentile(&latency_ms, 99.0),
            latency_ms.last(),
        ) {
            (Some(p50), Some(p99), Some(max)) => {
                let settle = self.settle_ms as f64;
                println!(
                    "  board → spectator p50 {p50:.0} / p99 {p99:.0} / max {max:.0} ms over {} move frames at {sampled} sampled spectators{delay}; beyond the {} ms settle time: {:.0} / {:.0} / {:.0} ms",
                    latency_ms.len(),
                    self.settle_ms,
                    p50 - settle,
                    p99 - settle,
                    max - settle
                );
                if from_store > 0 {
                    println!(
                        "                    ({from_store} of them carried no read_at_ms and are timed from when the service stored the move, which leaves out the settle time)"
                    );
                }
            }
            _ => println!(
                "  board → spectator no move frames in the window at the sampled spectators"
            ),
        }
        // Every sampled client counts, one that got nothing included.
        let mut counts: Vec<(u64, u64)> = frames.into_values().collect();
        counts.resize(sampled.max(counts.len()), (0, 0));
        let mut f: Vec<u64> = counts.iter().map(|c| c.0).collect();
        let mut b: Vec<u64> = counts.iter().map(|c| c.1).collect();
        f.sort_unstable();
        b.sort_unstable();
        let (f50, b50) = (
            percentile(&f, 50.0).unwrap_or(0),
            percentile(&b, 50.0).unwrap_or(0),
        );
        let wall = (w1 - w0) as f64 / 1000.0;
        let per_move = |n: f64| {
            if moves > 0 {
                format!("{:.2}", n / (moves as f64))
            } else {
                "-".into()
            }
        };
        let n = sampled.max(1) as f64;
        println!(
            "  per spectator     {} frames per move in the window ({}); median {f50} frames, {:.1} KiB ({:.2} KiB/s)",
            per_move(f50 as f64),
            kinds
                .iter()
                .map(|(k, c)| format!("{k} {}", per_move(*c as f64 / n)))
                .collect::<Vec<_>>()
                .join(", "),
            b50 as f64 / 1024.0,
            b50 as f64 / 1024.0 / wall
        );
        Ok((wall > 0.0).then(|| b50 as f64 / wall))
    }
}

fn fanout_line(f: Option<&Fanout>, what: &str) -> String {
    match f {
        Some(f) => format!(
            "first arrival → p50 median {:.1} / max {:.1} ms, → p99 {:.1} / {:.1} ms, → last {:.1} / {:.1} ms over {} {what}",
            f.p50.0, f.p50.1, f.p99.0, f.p99.1, f.last.0, f.last.1, f.markers
        ),
        None => format!("no {what} to measure"),
    }
}
