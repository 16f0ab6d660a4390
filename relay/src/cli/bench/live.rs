//! The live cases (smoke, real100, real1000, crowd, crowd-real, delayed, cluster10k,
//! cluster40k): emulated boards read by the service, wsload spectators following the round
//! through the measured window, then the echo-server baselines and the round PGN's rate.

use super::baseline::{ECHO_FRAME_BYTES, ECHO_PAD_FIELD_BYTES, Echo, baseline};
use super::cases::{BenchArgs, Case, ROUND};
use super::evals::LiveFigures;
use super::figures::Fanout;
use super::load::{Load, RELAY_MARKER};
use super::pgn;
use super::postgres::BenchDatabase;
use super::procs::{
    Proc, Sample, TempDir, Tools, fd_hard_limit, get_json, group_commits, interrupted,
    relay_command, sample, serving_addr, sleep_until, wait_line,
};
use super::report::{Run, Window, fanout_line};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

pub fn run_case(
    case: &Case,
    args: &BenchArgs,
    tools: &Tools,
    stop: &Arc<AtomicBool>,
    tck: f64,
) -> Result<LiveFigures> {
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
    if let Some(pgn) = &args.pgn {
        cmd.arg("--pgn").arg(pgn);
    }
    if args.from_ply > 0 {
        cmd.args(["--from-ply", &args.from_ply.to_string()]);
    }
    if args.mirror {
        cmd.arg("--mirror");
    }
    if let Some(every) = case.outage_every {
        cmd.args(["--outage-every", &every.to_string(), "--outage-secs", "8"]);
    }
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
    if case.eval_workers > 0 {
        cmd.args(["--eval-workers", &case.eval_workers.to_string()])
            .args(["--eval-movetime-ms", &args.eval_movetime_ms.to_string()]);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    let spawned = Instant::now();
    let mut serve = Proc::spawn("service", &mut cmd)?;
    let addr = serving_addr(&mut serve, stop)?;
    let listening = spawned.elapsed().as_secs_f64();
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
        let at = serving_addr(&mut web, stop)?;
        println!("  processes: relay --no-boards pid {} on {at}", web.pid());
        webs.push((web, at));
    }

    // A board standing in a position from the middle of a game is joined as a game only
    // with its first move (its clock running says whose turn it was): such boards start as
    // soon as the service reads them all, and each game begins with its move.
    if args.from_ply > 0 {
        let connected_in = every_board_read(addr, case.boards, stop)?;
        std::fs::write(&go, b"").context("cannot write the boards' start file")?;
        println!(
            "  start             the service read all {} e-boards {:.2} s after it was started; they stand in the middle of their games (ply {}), so their clocks were started then, before the spectators connected, and each game is joined with its first move",
            case.boards,
            listening + connected_in,
            args.from_ply
        );
    } else {
        let (connected_in, placed_in) = every_board_placed(addr, case.boards, stop)?;
        println!(
            "  start             all {} e-boards on their boards {placed_in:.1} s after the service was up; it listened {listening:.2} s after it was started and read every e-board {:.2} s after",
            case.boards,
            listening + connected_in
        );
    }
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
    let start_serve = sample(serve.pid()).context("the service has gone")?;
    let commits0 = group_commits(addr);
    let evaluated0 = super::evals::evaluated(addr);
    sleep_until(w0 + Duration::from_secs(case.seconds), stop)?;
    let w1_ms = (unix_ns() / 1_000_000) as i64;
    let end = Window::sample(&serve, &boards, &wsload, &webs)?;
    let end_serve = sample(serve.pid()).context("the service has gone")?;
    let commits = commits0.zip(group_commits(addr));
    let evaluated = evaluated0.zip(super::evals::evaluated(addr));
    if case.outage_every.is_some() {
        // What the outages did: boards whose memory was read back with moves in it, and the
        // moves it gave (each board's last reading).
        let eboards = get_json(&format!("http://{addr}/api/eboards")).unwrap_or_default();
        let notes: Vec<String> = eboards
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["memory"].as_str().map(str::to_string))
            .collect();
        let moves: u64 = notes
            .iter()
            .filter_map(|n| n.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        println!(
            "  outages           {} e-boards came back with moves in their memory ({moves} moves recovered at their last return); {} said why not",
            notes.iter().filter(|n| n.contains("recovered")).count(),
            notes
                .iter()
                .filter(|n| n.starts_with("Memory not used"))
                .count()
        );
    }

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
    // SIGTERM, as a service manager stops it, while every port is still open.
    let stopped = serve.stop_with("TERM", Duration::from_secs(20));
    boards.stop(Duration::from_secs(10));
    let changes = stored_moves(&db)?;
    drop(pg);
    let mut figures = LiveFigures {
        cores: super::procs::cores(&start_serve, &end_serve, tck),
        kib_per_spectator: start_serve.rss_kib.saturating_sub(before.rss_kib) as f64
            / case.clients.max(1) as f64,
        ..LiveFigures::default()
    };
    let moves_in_window = changes
        .values()
        .filter(|at| (w0_ms..w1_ms).contains(*at))
        .count();

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
    let reported = run.report(&load)?;
    let (relay_fanout, bytes_per_sec) = (reported.fanout, reported.bytes_per_sec);
    figures.p99_beyond_settle_ms = reported.p99_beyond_settle_ms;
    match stopped {
        Some(t) => println!(
            "  stop              SIGTERM → the service ended {:.2} s later, reading {} ports",
            t.as_secs_f64(),
            case.boards
        ),
        None => println!("  stop              SIGTERM → the service did not end within 20 s"),
    }
    if case.eval_workers > 0 {
        super::evals::report(&load, (w0_ms, w1_ms), moves_in_window, evaluated)?;
    }
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
            figures.fanout_vs_same_bytes = match (&relay_fanout, &bytes) {
                (Some(r), Some(b)) if b.last.0 > 0.0 => Some(r.last.0 / b.last.0),
                _ => None,
            };
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
    Ok(figures)
}

/// Waits until the service at `addr` has every one of `boards` e-boards on a board of a
/// round (it has read the port and the start position); the seconds until every one was
/// read (connected) and until every one was placed.
pub fn every_board_placed(
    addr: SocketAddr,
    boards: usize,
    stop: &AtomicBool,
) -> Result<(f64, f64)> {
    every_board(addr, boards, true, stop)
}

/// Waits until the service at `addr` reads every one of `boards` e-boards; the seconds it
/// took.
fn every_board_read(addr: SocketAddr, boards: usize, stop: &AtomicBool) -> Result<f64> {
    every_board(addr, boards, false, stop).map(|(read, _)| read)
}

fn every_board(
    addr: SocketAddr,
    boards: usize,
    placed_too: bool,
    stop: &AtomicBool,
) -> Result<(f64, f64)> {
    let t0 = Instant::now();
    let limit = Duration::from_secs(60 + boards as u64 / 10);
    let (mut placed, mut connected_in) = (0, None);
    while t0.elapsed() < limit {
        interrupted(stop)?;
        if let Some(serde_json::Value::Array(list)) =
            get_json(&format!("http://{addr}/api/eboards"))
        {
            let connected = list.iter().filter(|e| e["connected"] == true);
            if connected_in.is_none() && connected.clone().count() >= boards {
                connected_in = Some(t0.elapsed().as_secs_f64());
            }
            placed = connected.filter(|e| e["game_id"].is_i64()).count();
            if placed >= boards || (!placed_too && connected_in.is_some()) {
                let at = t0.elapsed().as_secs_f64();
                return Ok((connected_in.unwrap_or(at), at));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!(
        "after {} s the service had {placed} of {boards} e-boards on a board",
        limit.as_secs()
    )
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
        let mut after = relay_store::Seq::default();
        loop {
            let page = (store.changes_since(ROUND.into(), after, 10_000)).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for c in page.iter().filter(|c| c.is_move()) {
                moves.insert(c.seq.get(), c.at_ms);
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
