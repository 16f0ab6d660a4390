//! The evaluation cases. `eval`: the live case run twice with the same boards and spectators,
//! without evaluation and with one local worker, and what evaluation added (the service's CPU
//! without the engine, memory per spectator, frames per move), with the delay from each move
//! to its evaluation at the sampled spectators and the depth reached. `eval-workers`: a relay
//! with positions waiting, evaluated by one `relay eval-worker` process and then by two
//! (each with one engine thread): positions a second each way.

use super::cases::{BenchArgs, Case};
use super::figures::{self, percentile};
use super::load::Load;
use super::procs::{Proc, TempDir, get_json, interrupted, relay_command, serving_addr};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What a live run measured that the evaluation case compares and a sweep draws.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveFigures {
    /// The service's CPU over the window, in cores (the engine is a process of its own).
    pub cores: f64,
    /// The service's memory per spectator once connected, KiB.
    pub kib_per_spectator: f64,
    /// Board → spectator p99 beyond the settle time, ms (`None`: no move frame timed).
    pub p99_beyond_settle_ms: Option<f64>,
    /// The relay's fan-out to the last spectator (median over the moves) against the bare
    /// baseline sending the relay's own bytes a second (`None`: no baseline run).
    pub fanout_vs_same_bytes: Option<f64>,
}

/// Prints the evaluation figures of a live run from the sampled spectators' frames: each
/// evaluation's delay after its move at the same spectator, how many moves of the window got
/// one, the depth, and the `eval` frames per move.
pub fn report(
    load: &Load,
    window_ms: (i64, i64),
    moves_in_window: usize,
    engine_counts: Option<(u64, u64)>,
) -> Result<()> {
    let (w0, w1) = window_ms;
    // Per sampled client: when each (game, ply) move came, and each evaluation.
    let mut moved: HashMap<(u32, i64, u64), u64> = HashMap::new();
    // (client, game, ply, when, its move's arrival, the next ply's arrival), as they came.
    type Heard = (u32, i64, u64, u64, Option<u64>, Option<u64>);
    let mut evals: Vec<Heard> = Vec::new();
    let mut depths: Vec<u64> = Vec::new();
    let mut eval_frames: HashMap<u32, u64> = HashMap::new();
    let mut clients: std::collections::HashSet<u32> = Default::default();
    for f in figures::frames(&load.path("frames.tsv"))? {
        clients.insert(f.client);
        let at_ms = (f.at_ns / 1_000_000) as i64;
        if !f.text.starts_with(r#"{"type":"move""#) && !f.text.starts_with(r#"{"type":"eval""#) {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&f.text) else {
            continue;
        };
        match v["type"].as_str() {
            Some("move") => {
                let key = (
                    f.client,
                    v["game_id"].as_i64().unwrap_or(0),
                    v["move"]["ply"].as_u64().unwrap_or(0),
                );
                // The move standing at that ply now: a takeback and another move there
                // make a new position, whose evaluation is timed from its own move.
                moved.insert(key, f.at_ns);
            }
            Some("eval") => {
                if (w0..w1).contains(&at_ms) {
                    *eval_frames.entry(f.client).or_default() += 1;
                }
                for e in v["evals"].as_array().into_iter().flatten() {
                    let (g, p) = (
                        e["game_id"].as_i64().unwrap_or(0),
                        e["ply"].as_u64().unwrap_or(0),
                    );
                    // Timed now, from the move standing at that ply when it came.
                    let from = moved.get(&(f.client, g, p)).copied();
                    let next = moved.get(&(f.client, g, p + 1)).copied();
                    evals.push((f.client, g, p, f.at_ns, from, next));
                    depths.push(e["depth"].as_u64().unwrap_or(0));
                }
            }
            _ => {}
        }
    }
    let mut lags: Vec<f64> = Vec::new();
    // The same, split: positions still their game's newest when the evaluation came, and
    // positions a later move of the game had already passed (those wait behind the newest).
    let (mut newest, mut passed): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for (_, _, _, at, from, next) in &evals {
        if let Some(m) = from {
            let lag = at.saturating_sub(*m) as f64 / 1e6;
            lags.push(lag);
            match next {
                Some(n) if n > m && n < at => passed.push(lag),
                _ => newest.push(lag),
            }
        }
    }
    lags.sort_by(f64::total_cmp);
    newest.sort_by(f64::total_cmp);
    passed.sort_by(f64::total_cmp);
    // Moves of the window (up to 3 s before its end, their evaluations' time to come) that
    // every sampled spectator got, and how many of those came with an evaluation.
    let evaluated: std::collections::HashSet<(u32, i64, u64)> =
        evals.iter().map(|(c, g, p, ..)| (*c, *g, *p)).collect();
    let due: Vec<&(u32, i64, u64)> = moved
        .iter()
        .filter(|(_, at)| {
            let ms = (**at / 1_000_000) as i64;
            ms >= w0 && ms < w1 - 3_000
        })
        .map(|(k, _)| k)
        .collect();
    let got = due.iter().filter(|k| evaluated.contains(k)).count();
    let within_2s = lags.iter().filter(|l| **l <= 2000.0).count();
    depths.sort_unstable();
    println!(
        "  evaluation        {got} of {} moves of the window at the sampled spectators came with an evaluation ({:.1}%); move → its evaluation p50 {} / p99 {} / max {} ms, {:.1}% within 2 s; depth median {} (min {})",
        due.len(),
        100.0 * got as f64 / due.len().max(1) as f64,
        fmt_ms(percentile(&lags, 50.0)),
        fmt_ms(percentile(&lags, 99.0)),
        fmt_ms(lags.last().copied()),
        100.0 * within_2s as f64 / lags.len().max(1) as f64,
        percentile(&depths, 50.0).unwrap_or(0),
        depths.first().copied().unwrap_or(0),
    );
    println!(
        "  evaluation split  still the game's newest position when evaluated: {} evaluations, p50 {} / p99 {} / max {} ms, {:.1}% within 2 s; passed by a later move first: {}, p50 {} / p99 {} ms",
        newest.len(),
        fmt_ms(percentile(&newest, 50.0)),
        fmt_ms(percentile(&newest, 99.0)),
        fmt_ms(newest.last().copied()),
        100.0 * newest.iter().filter(|l| **l <= 2000.0).count() as f64 / newest.len().max(1) as f64,
        passed.len(),
        fmt_ms(percentile(&passed, 50.0)),
        fmt_ms(percentile(&passed, 99.0)),
    );
    if let Some((e0, e1)) = engine_counts {
        let secs = (w1 - w0) as f64 / 1000.0;
        println!(
            "  engine            {} positions evaluated in the window ({:.1} a second) for {moves_in_window} moves: the rest were positions evaluated already",
            e1.saturating_sub(e0),
            e1.saturating_sub(e0) as f64 / secs.max(1e-9)
        );
    }
    // Every sampled client counts, one that got no eval frame too.
    let mut per: Vec<u64> = clients
        .iter()
        .map(|c| eval_frames.get(c).copied().unwrap_or(0))
        .collect();
    per.sort_unstable();
    let median = percentile(&per, 50.0).unwrap_or(0);
    println!(
        "  eval frames       median {median} per spectator in the window: {:.2} per move ({moves_in_window} moves stored in it)",
        median as f64 / moves_in_window.max(1) as f64
    );
    Ok(())
}

fn fmt_ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0}"))
}

/// The comparison of a run of the `eval` case with evaluation and the one without.
pub fn compare(off: LiveFigures, on: LiveFigures, workers: usize) {
    println!(
        "== eval ({workers} local workers) vs eval-off: service CPU {:.3} → {:.3} cores ({:+.1}%, the engine not counted: it is a process of its own); memory per spectator {:.2} → {:.2} KiB ({:+.2} KiB)",
        off.cores,
        on.cores,
        100.0 * (on.cores - off.cores) / off.cores.max(1e-9),
        off.kib_per_spectator,
        on.kib_per_spectator,
        on.kib_per_spectator - off.kib_per_spectator
    );
    println!();
}

/// The `eval` runs: the same case once per number of local evaluation workers (0: without
/// evaluation).
pub fn runs(base: &Case, workers: &[usize]) -> Vec<Case> {
    workers
        .iter()
        .map(|&n| Case {
            name: if n == 0 { "eval-off" } else { "eval" },
            eval_workers: n,
            ..base.clone()
        })
        .collect()
}

/// A random legal game of `plies` plies from `seed` (a small LCG: the same games every run),
/// as SAN movetext. Random games give positions no other game reaches, so no evaluation is
/// shared between the two measurements.
pub(super) fn random_game(seed: u64, plies: usize) -> String {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut pos = Chess::default();
    let mut text = String::new();
    for i in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let mv = moves[(state >> 33) as usize % moves.len()];
        if i % 2 == 0 {
            text.push_str(&format!("{}. ", i / 2 + 1));
        }
        text.push_str(&SanPlus::from_move_and_play_unchecked(&mut pos, mv).to_string());
        text.push(' ');
    }
    text.push('*');
    text
}

/// Sends `body` to the service with the admin token.
pub(super) fn admin(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: &str,
    body: &str,
) -> Result<Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("http://{addr}{path}");
    let req = ureq::http::Request::builder()
        .method(method)
        .uri(&url)
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .body(body.as_bytes().to_vec())?;
    let mut resp = agent.run(req).with_context(|| format!("{method} {url}"))?;
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    if status >= 300 {
        bail!("{method} {url}: {status} {text}");
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Positions evaluated so far, from `/health`.
pub fn evaluated(addr: SocketAddr) -> Option<u64> {
    get_json(&format!("http://{addr}/health"))?["evaluation"]["evaluated"].as_u64()
}

/// The `eval-workers` case: positions a second with one worker process, then with two.
pub fn workers(args: &BenchArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let seconds = args.seconds.unwrap_or(20);
    let movetime = 100;
    println!(
        "== case eval-workers: positions waiting, evaluated by 1 then 2 `relay eval-worker` processes (one engine thread each, {movetime} ms a position), {seconds} s each =="
    );
    let dir = TempDir::new("eval-workers")?;
    let (token, eval_token) = ("bench-admin-token", "bench-eval-token");
    let mut cmd = relay_command()?;
    cmd.arg("serve")
        .arg("--port")
        .arg(format!("{}/none-*", dir.0.display()))
        .args([
            "--db",
            &format!("sqlite://{}", dir.0.join("bench.db").display()),
        ])
        .args(["--listen", "127.0.0.1:0", "--admin-token", token])
        .args([
            "--eval-token",
            eval_token,
            "--eval-movetime-ms",
            &movetime.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut serve = Proc::spawn("service", &mut cmd)?;
    let addr = serving_addr(&mut serve, stop)?;
    // Twenty boards, each a random game of 100 plies: 2000 positions, more than either
    // measurement can take.
    let boards = 20;
    let pairings: Vec<Value> = (1..=boards)
        .map(|b| json!({"board_no": b, "white": {"name": format!("White {b}")}, "black": {"name": format!("Black {b}")}}))
        .collect();
    admin(
        addr,
        "PUT",
        "/api/rounds/1/pairings",
        token,
        &Value::Array(pairings).to_string(),
    )?;
    let games: Vec<i64> = get_json(&format!("http://{addr}/api/rounds/1"))
        .and_then(|r| {
            r["games"]
                .as_array()
                .map(|g| g.iter().filter_map(|g| g["id"].as_i64()).collect())
        })
        .unwrap_or_default();
    let mut rates = Vec::new();
    for (phase, procs) in [(0usize, 1usize), (1, 2)] {
        // Each phase its own games: no position of the first is evaluated again.
        for (i, g) in games.iter().enumerate().filter(|(i, _)| i % 2 == phase) {
            let pgn = random_game(*g as u64 * 7919 + i as u64, 100);
            admin(addr, "PUT", &format!("/api/games/{g}/pgn"), token, &pgn)?;
        }
        std::thread::sleep(Duration::from_millis(500));
        let mut workers = Vec::new();
        for _ in 0..procs {
            let mut cmd = relay_command()?;
            cmd.args(["eval-worker", "--server", &format!("http://{addr}")])
                .args(["--token", eval_token])
                .env("RELAY_LOG", "warn")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            workers.push(Proc::spawn("eval-worker", &mut cmd)?);
        }
        // The engines start; then the count.
        std::thread::sleep(Duration::from_secs(2));
        let n0 = evaluated(addr).context("no evaluation figures at /health")?;
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(seconds) {
            interrupted(stop)?;
            std::thread::sleep(Duration::from_millis(200));
        }
        let n1 = evaluated(addr).context("no evaluation figures at /health")?;
        let rate = (n1 - n0) as f64 / t0.elapsed().as_secs_f64();
        for mut w in workers {
            w.stop(Duration::from_secs(5));
        }
        let waiting = get_json(&format!("http://{addr}/health"))
            .and_then(|h| h["evaluation"]["waiting"].as_u64())
            .unwrap_or(0);
        println!(
            "  {procs} worker process(es)  {rate:.1} positions a second ({} in {seconds} s; {waiting} still waiting after)",
            n1 - n0
        );
        rates.push(rate);
    }
    let depth = depth_reached(addr, &games);
    println!(
        "  two workers / one  {:.2}x; depth reached at {movetime} ms a position: median {}",
        rates[1] / rates[0].max(1e-9),
        depth.map_or("-".into(), |d| d.to_string())
    );
    println!();
    serve.stop(Duration::from_secs(10));
    Ok(())
}

/// The median depth of the evaluations on the games' moves.
fn depth_reached(addr: SocketAddr, games: &[i64]) -> Option<u64> {
    let mut depths: Vec<u64> = games
        .iter()
        .filter_map(|g| get_json(&format!("http://{addr}/api/games/{g}")))
        .flat_map(|g| g["moves"].as_array().cloned().unwrap_or_default())
        .filter_map(|m| m["eval"]["depth"].as_u64())
        .collect();
    depths.sort_unstable();
    percentile(&depths, 50.0)
}
