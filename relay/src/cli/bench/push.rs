//! `relay bench --case push` and `--case push-backlog`: a venue relay pushing to a cloud
//! relay, each a process of its own, as an organiser runs them.
//!
//! `push`: emulated boards (a process) read by the venue relay (SQLite), which pushes to the
//! cloud relay (PostgreSQL, `--no-boards`); `wsload` spectators (a process) follow the round on
//! the cloud. For every move: from the moment the venue accepted it (its stored
//! `accepted_at`, which the cloud keeps; the venue's commit comes just after, so this is a
//! little more than commit → spectator) to its frame at the first and at the last cloud
//! spectator, and how many spectators got it.
//!
//! `push-backlog`: a venue store with 100,000 changes not yet delivered (1,000 games of 100
//! random legal moves each, written straight into the store), then the venue relay started
//! with `--push-to`: the time until the cloud has taken everything, changes per second.

use super::cases::BenchArgs;
use super::figures;
use super::live::every_board_placed;
use super::load::{Load, RELAY_MARKER};
use super::postgres::BenchDatabase;
use super::procs::{
    Proc, TempDir, Tools, get_json, relay_command, serving_addr, sleep_until, wait_line,
};
use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-push-token";

fn start_relay(
    name: &'static str,
    args: &[&str],
    stop: &Arc<AtomicBool>,
) -> Result<(Proc, SocketAddr)> {
    let mut cmd = relay_command()?;
    cmd.arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut p = Proc::spawn(name, &mut cmd)?;
    let addr = serving_addr(&mut p, stop)?;
    Ok((p, addr))
}

/// Every move change on the cloud: its change number → when the venue accepted the move.
fn venue_times(db: &str) -> Result<HashMap<i64, i64>> {
    let out = std::process::Command::new("psql")
        .args([
            db,
            "-At",
            "-F",
            "\t",
            "-c",
            "SELECT c.seq, m.accepted_at FROM changes c JOIN moves m ON m.game_id = c.game_id
             AND m.ply = (c.payload::json->>'ply')::bigint WHERE c.kind = 'move' AND c.round_id = 1",
        ])
        .output()
        .context("psql")?;
    if !out.status.success() {
        bail!("psql: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_once('\t')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect())
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    figures::percentile(v, p).unwrap_or(f64::NAN)
}

pub fn latency(args: &BenchArgs, tools: &Tools, stop: &Arc<AtomicBool>) -> Result<()> {
    let boards = args.boards.unwrap_or(50);
    let clients = args.clients.unwrap_or(1000);
    let seconds = args.seconds.unwrap_or(30);
    let speed = args.speed.unwrap_or(10.0);
    let server = args
        .postgres
        .as_deref()
        .context("the push cases need a PostgreSQL server for the cloud relay: --postgres URL (or RELAY_BENCH_POSTGRES)")?;
    println!(
        "== case push: {boards} boards at {speed}x read by a venue relay (SQLite) pushing to a cloud relay (PostgreSQL, --no-boards); {clients} spectators on the cloud, {seconds} s =="
    );
    let dir = TempDir::new("push")?;
    let pg = BenchDatabase::create(server)?;
    let links = dir.0.join("boards");
    // The boards play once the venue has every one on its board and the spectators are there
    // (the same start file as the other cases).
    let go = dir.0.join("start");
    let mut cmd = relay_command()?;
    cmd.arg("emulate")
        .args(["--boards", &boards.to_string()])
        .args(["--speed", &speed.to_string()])
        .arg("--link-dir")
        .arg(&links)
        .arg("--start-file")
        .arg(&go)
        .args(["--seed", "1", "--noise", &args.noise.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut emu = Proc::spawn("emulated boards", &mut cmd)?;
    let lines = emu.lines().context("no output from relay emulate")?;
    wait_line(&mut emu, &lines, Duration::from_secs(60), stop, |l| {
        l.starts_with("emulating ").then_some(())
    })?;
    let (mut cloud, cloud_addr) = start_relay(
        "cloud relay",
        &["--db", &pg.url, "--no-boards", "--accept-push-token", TOKEN],
        stop,
    )?;
    let venue_db = format!("sqlite://{}", dir.0.join("venue.db").display());
    let ports = format!("{}/dgt-*", links.display());
    let push_to = format!("http://{cloud_addr}");
    let (mut venue, venue_addr) = start_relay(
        "venue relay",
        &[
            "--db",
            &venue_db,
            "--port",
            &ports,
            "--push-to",
            &push_to,
            "--push-token",
            TOKEN,
            "--settle-ms",
            &args.settle_ms.to_string(),
        ],
        stop,
    )?;
    println!(
        "  processes: boards pid {}, venue pid {} on {venue_addr}, cloud pid {} on {cloud_addr}",
        emu.pid(),
        venue.pid(),
        cloud.pid()
    );
    every_board_placed(venue_addr, boards, stop)?;
    // Spectators join once the cloud has the round.
    let deadline = Instant::now() + Duration::from_secs(30);
    while get_json(&format!("http://{cloud_addr}/api/rounds/1")).is_none() {
        if Instant::now() > deadline {
            bail!("the cloud relay never got round 1 from the venue");
        }
        sleep_until(Instant::now() + Duration::from_millis(200), stop)?;
    }
    let ramp_secs = clients as f64 / 2000.0;
    let load = Load {
        urls: vec![format!("ws://{cloud_addr}/api/rounds/1/ws")],
        clients,
        ramp_per_sec: 2000.0,
        duration: ramp_secs + 1.0 + seconds as f64,
        procs: clients.div_ceil(15_000).max(1),
        marker: RELAY_MARKER,
        sample: 0,
        dir: &dir.0,
        prefix: "push",
    };
    let mut wsload = load.spawn(tools)?;
    sleep_until(
        Instant::now() + Duration::from_secs_f64(ramp_secs + 1.0),
        stop,
    )?;
    std::fs::write(&go, b"").context("cannot write the boards' start file")?;
    load.finish(&mut wsload, stop)?;
    let health = get_json(&format!("http://{venue_addr}/health")).unwrap_or_default();
    venue.stop(Duration::from_secs(10));
    cloud.stop(Duration::from_secs(10));
    emu.stop(Duration::from_secs(5));
    let times = venue_times(&pg.url)?;
    let rows = figures::markers(&load.path("markers.tsv"))?;
    let (mut first, mut last) = (Vec::new(), Vec::new());
    let (mut moves, mut everyone) = (0usize, 0usize);
    for r in &rows {
        let Ok(seq) = r.text.parse::<i64>() else {
            continue;
        };
        let Some(accepted) = times.get(&seq) else {
            continue;
        };
        moves += 1;
        if r.clients as usize == clients {
            everyone += 1;
        }
        let f = r.first_ns as f64 / 1e6 - *accepted as f64;
        first.push(f);
        last.push(f + r.last_ms);
    }
    if moves == 0 {
        bail!("no move reached a cloud spectator");
    }
    println!(
        "  venue accepted → cloud spectator: first p50 {:.0} ms, p99 {:.0} ms; last p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        pct(&mut first, 50.0),
        pct(&mut first, 99.0),
        pct(&mut last, 50.0),
        pct(&mut last, 99.0),
        last.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "  {moves} moves reached the cloud's spectators; {everyone} reached all {clients} (the rest: moves at the window's edges, or spectators that dropped)"
    );
    println!("  venue upstream at the end: {}", health["upstream"][0]);
    println!();
    Ok(())
}

/// A venue store with `changes` moves not yet delivered: games of up to `plies` random legal
/// moves each (a game that ends sooner is followed by another).
async fn fill_venue(db: &str, changes: u64, plies: u32) -> Result<(u64, usize)> {
    let games = (changes / u64::from(plies)) as u32 * 2 + 1;
    use shakmaty::fen::Fen;
    use shakmaty::{Chess, EnPassantMode, Position};
    let store = relay_store::Store::open(db).await?;
    let t = store
        .create_tournament(&relay_store::NewTournament {
            name: "Backlog".into(),
            ..Default::default()
        })
        .await?;
    let round = store.create_round(t, "1", None).await?;
    let pairings: Vec<relay_store::Pairing> = (1..=games)
        .map(|b| relay_store::Pairing {
            board_no: b,
            ..Default::default()
        })
        .collect();
    let ids = store.set_pairings(round, &pairings).await?;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let want = changes;
    let mut changes = 0;
    let mut used = 0;
    let now = relay_store::now_ms();
    for (game, _) in ids {
        if changes >= want {
            break;
        }
        used += 1;
        let mut ops = Vec::new();
        let mut pos = Chess::default();
        for ply in 1..=plies.min((want - changes) as u32) {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[(next() % legal.len() as u64) as usize];
            let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, mv);
            ops.push(relay_store::Op::Move {
                game,
                m: relay_store::StoredMove {
                    ply,
                    san: san.to_string(),
                    uci: mv.to_uci(shakmaty::CastlingMode::Standard).to_string(),
                    clk_ms: Some(5_400_000 - u64::from(ply) * 1000),
                    emt_ms: Some(1000),
                    accepted_at_ms: now,
                    fen_after: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
                },
            });
        }
        changes += ops.len() as u64;
        store.commit(&[], &ops).await?;
    }
    Ok((changes, used))
}

pub fn backlog(args: &BenchArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let want = args.clients.unwrap_or(100_000) as u64;
    let server = args
        .postgres
        .as_deref()
        .context("the push cases need a PostgreSQL server for the cloud relay: --postgres URL (or RELAY_BENCH_POSTGRES)")?;
    let dir = TempDir::new("push-backlog")?;
    let pg = BenchDatabase::create(server)?;
    let venue_db = format!("sqlite://{}", dir.0.join("venue.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let made = Instant::now();
    let (changes, games) = rt.block_on(fill_venue(&venue_db, want, 100))?;
    println!(
        "== case push-backlog: {changes} changes ({games} games) waiting in the venue's store (written in {:.1} s), pushed to a cloud relay (PostgreSQL) ==",
        made.elapsed().as_secs_f64()
    );
    let (mut cloud, cloud_addr) = start_relay(
        "cloud relay",
        &["--db", &pg.url, "--no-boards", "--accept-push-token", TOKEN],
        stop,
    )?;
    let push_to = format!("http://{cloud_addr}");
    let t0 = Instant::now();
    let (mut venue, venue_addr) = start_relay(
        "venue relay",
        &[
            "--db",
            &venue_db,
            "--no-boards",
            "--push-to",
            &push_to,
            "--push-token",
            TOKEN,
        ],
        stop,
    )?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let done = loop {
        if let Some(h) = get_json(&format!("http://{venue_addr}/health")) {
            let u = &h["upstream"][0];
            if u["last_ok_ms"].is_i64() && u["queued"].as_i64() == Some(0) {
                break u.clone();
            }
        }
        if Instant::now() > deadline {
            bail!("the backlog was not delivered in 10 minutes");
        }
        sleep_until(Instant::now() + Duration::from_millis(50), stop)?;
    };
    let took = t0.elapsed().as_secs_f64();
    let cloud_moves = get_json(&format!("http://{cloud_addr}/api/rounds/1"))
        .and_then(|r| {
            r["games"].as_array().map(|gs| {
                gs.iter()
                    .map(|g| g["moves"].as_array().map_or(0, Vec::len))
                    .sum::<usize>()
            })
        })
        .unwrap_or(0);
    venue.stop(Duration::from_secs(10));
    cloud.stop(Duration::from_secs(10));
    println!(
        "  delivered in {took:.1} s from the venue's start: {:.0} changes/s; {} batches; the cloud holds {cloud_moves} moves",
        changes as f64 / took,
        done["delivered_batches"]
    );
    if cloud_moves as u64 != changes {
        println!("  note: the cloud holds {cloud_moves} moves, the venue {changes}");
    }
    println!();
    Ok(())
}
