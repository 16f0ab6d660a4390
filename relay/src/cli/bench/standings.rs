//! `relay bench --case standings`: the standings of a 700-player, 11-round Swiss recomputed
//! after a result, in the core alone and through the service as a spectator meets them.
//!
//! The tournament is made here, the same every run: 700 rated players paired round by round
//! by score group (top half against bottom half, no rematch), results drawn by the rating
//! difference, with a few requested half-point byes, forfeits and the pairing-allocated bye of
//! an odd round. The core is timed on the whole file after one result of the last round
//! changes, with relay's default Swiss order and with a long order of FIDE's codes. Then a
//! `relay serve` process of its own imports the file with the last round paired and not
//! played; each measurement sets one result with the arbiter's API and times how long until
//! the public standings count it (the service computes them at most once a second: the figure
//! includes that wait when a computation was made less than a second before), and how long
//! one standings request takes that computes them.

use super::cases::BenchArgs;
use super::evals::{admin, random_game};
use super::procs::{Proc, TempDir, get_json, interrupted, relay_command, serving_addr};
use anyhow::{Context, Result, bail};
use relay_core::standings::{Code, Settings, standings};
use relay_core::trf::{ByeCode, Cell, Colour, HalfPoints, Outcome, Trf, TrfPlayer, write_trf};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const PLAYERS: u32 = 700;
const ROUNDS: usize = 11;
const DEFAULT: &[&str] = &["BH/C1", "BH", "SB"];
const LONG: &[&str] = &[
    "BH/C1", "BH", "SB", "PS", "ARO", "TPR", "WIN", "BPG", "BWG", "AOB", "BH/M1", "DE",
];

/// A small deterministic generator (the numbers of a run are the same every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The Swiss the case ranks (see the module text).
pub fn swiss(players: u32, rounds: usize, seed: u64) -> Trf {
    let mut rng = Lcg(seed);
    let mut t = Trf::default();
    t.tournament.name = format!("Bench Swiss {players} players {rounds} rounds");
    t.tournament.rounds_planned = Some(rounds as u32);
    t.tournament.kind = Some("Individual: Swiss-System".into());
    for i in 0..players {
        t.players.push(TrfPlayer {
            start_rank: i + 1,
            name: format!("Player {:04}", i + 1),
            rating: Some(2750 - i * 2),
            federation: Some(["GER", "FRA", "IND", "USA", "NOR"][i as usize % 5].into()),
            fide_id: Some(1_000_000 + u64::from(i)),
            ..TrfPlayer::default()
        });
    }
    let n = players as usize;
    let mut met: HashSet<(u32, u32)> = HashSet::new();
    let mut whites = vec![0i32; n];
    let mut had_bye = vec![false; n];
    for _ in 0..rounds {
        let score = |p: &TrfPlayer| p.cells.iter().map(|c| c.points().0).sum::<u32>();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(score(&t.players[i])), i));
        let mut cells: Vec<Option<Cell>> = vec![None; n];
        // About one in a hundred asks for a half-point bye.
        for &i in &order {
            if rng.next() < 0.01 {
                cells[i] = Some(Cell::Bye {
                    code: ByeCode::Half,
                    points: HalfPoints::HALF,
                });
            }
        }
        let mut free: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| cells[i].is_none())
            .collect();
        if free.len() % 2 == 1 {
            // The lowest-placed player without a bye yet gets the pairing-allocated one.
            let pos = free
                .iter()
                .rposition(|&i| !had_bye[i])
                .unwrap_or(free.len() - 1);
            let i = free.remove(pos);
            had_bye[i] = true;
            cells[i] = Some(Cell::Bye {
                code: ByeCode::Pairing,
                points: HalfPoints::ONE,
            });
        }
        while let Some(a) = free.first().copied() {
            free.remove(0);
            let key = |x: usize, y: usize| (x.min(y) as u32, x.max(y) as u32);
            let pos = free
                .iter()
                .position(|&b| !met.contains(&key(a, b)))
                .unwrap_or(0);
            let b = free.remove(pos);
            met.insert(key(a, b));
            let (w, bl) = if whites[a] <= whites[b] {
                (a, b)
            } else {
                (b, a)
            };
            whites[w] += 1;
            whites[bl] -= 1;
            let d = f64::from(t.players[w].rating.unwrap_or(0))
                - f64::from(t.players[bl].rating.unwrap_or(0));
            let expected = 1.0 / (1.0 + 10f64.powf(-d / 400.0));
            let x = rng.next();
            let o = if x < 0.01 {
                Outcome::ForfeitWin
            } else if x < 0.3 {
                Outcome::Draw
            } else if rng.next() < expected {
                Outcome::Win
            } else {
                Outcome::Loss
            };
            let (ow, ob) = (w as u32 + 1, bl as u32 + 1);
            cells[w] = Some(Cell::Game {
                opponent: ob,
                colour: Colour::White,
                outcome: Some(o),
            });
            cells[bl] = Some(Cell::Game {
                opponent: ow,
                colour: Colour::Black,
                outcome: Some(o.other()),
            });
        }
        for (p, c) in t.players.iter_mut().zip(cells) {
            p.cells.push(c.unwrap_or(Cell::Blank));
        }
    }
    for p in &mut t.players {
        p.points = Some(relay_core::trf::total(&p.cells));
    }
    t
}

fn settings(codes: &[&str]) -> Result<Settings> {
    Ok(Settings {
        tiebreaks: codes
            .iter()
            .map(|c| Code::parse(c).map_err(|e| anyhow::anyhow!("{c}: {e}")))
            .collect::<Result<_>>()?,
        ..Settings::default()
    })
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return 0.0;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn report(what: &str, v: &mut [f64]) {
    println!(
        "{what:<58} n={:<3} min {:>7.2} ms  median {:>7.2} ms  p95 {:>7.2} ms  max {:>7.2} ms",
        v.len(),
        quantile(v, 0.0),
        quantile(v, 0.5),
        quantile(v, 0.95),
        quantile(v, 1.0)
    );
}

/// The last round's game of the `k`-th board (White's start rank), for changing its result.
fn last_round_games(t: &Trf) -> Vec<u32> {
    t.players
        .iter()
        .filter(|p| {
            matches!(
                p.cells.last(),
                Some(Cell::Game {
                    colour: Colour::White,
                    ..
                })
            )
        })
        .map(|p| p.start_rank)
        .collect()
}

fn set_result(t: &mut Trf, white: u32, o: Outcome) {
    let Some(Cell::Game { opponent, .. }) = t.player(white).and_then(|p| p.cells.last()).copied()
    else {
        return;
    };
    for p in &mut t.players {
        if (p.start_rank == white || p.start_rank == opponent)
            && let Some(Cell::Game { outcome, .. }) = p.cells.last_mut()
        {
            *outcome = Some(if p.start_rank == white { o } else { o.other() });
        }
    }
}

pub fn run(args: &BenchArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let players = args.boards.map_or(PLAYERS, |b| b as u32).max(2);
    println!(
        "== case standings: a {players}-player, {ROUNDS}-round Swiss, its standings recomputed after a result =="
    );
    let t0 = Instant::now();
    let mut trf = swiss(players, ROUNDS, 2026);
    println!(
        "made the tournament in {:.0} ms ({} games)",
        t0.elapsed().as_secs_f64() * 1000.0,
        trf.players
            .iter()
            .flat_map(|p| &p.cells)
            .filter(|c| matches!(c, Cell::Game { .. }))
            .count()
            / 2
    );
    let whites = last_round_games(&trf);
    for (name, codes) in [("relay's Swiss default", DEFAULT), ("12 codes", LONG)] {
        let s = settings(codes)?;
        let mut v = Vec::new();
        for (k, w) in whites.iter().take(30).enumerate() {
            interrupted(stop)?;
            set_result(
                &mut trf,
                *w,
                [Outcome::Draw, Outcome::Win, Outcome::Loss][k % 3],
            );
            let t0 = Instant::now();
            let table = standings(&trf, &s);
            v.push(t0.elapsed().as_secs_f64() * 1000.0);
            std::hint::black_box(table);
        }
        report(
            &format!(
                "core: standings after a result, {name} ({})",
                codes.join(",")
            ),
            &mut v,
        );
    }
    service(&trf, args, stop)
}

/// The same tournament through `relay serve` (see the module text).
fn service(trf: &Trf, args: &BenchArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let dir = TempDir::new("standings")?;
    let token = "bench-admin-token";
    let mut cmd = relay_command()?;
    cmd.arg("serve")
        .arg("--port")
        .arg(format!("{}/none-*", dir.0.display()))
        .args([
            "--db",
            &format!("sqlite://{}", dir.0.join("bench.db").display()),
        ])
        .args(["--listen", "127.0.0.1:0", "--admin-token", token])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut serve = Proc::spawn("service", &mut cmd)?;
    let addr = serving_addr(&mut serve, stop)?;
    // The last round paired, not played.
    let mut paired = trf.clone();
    for p in &mut paired.players {
        if let Some(Cell::Game { outcome, .. }) = p.cells.last_mut() {
            *outcome = None;
        }
        p.points = Some(relay_core::trf::total(&p.cells));
    }
    let t0 = Instant::now();
    let done = admin(
        addr,
        "POST",
        "/api/tournaments/trf",
        token,
        &write_trf(&paired),
    )?;
    let id = done["tournament_id"]
        .as_i64()
        .context("the import gave no tournament id")?;
    println!("service: imported in {:.1} s", t0.elapsed().as_secs_f64());
    // Games with their moves, as a real event has them: the standings must not read them.
    let t0 = Instant::now();
    let mut with_moves = 0;
    let rounds: Vec<i64> = get_json(&format!("http://{addr}/api/tournaments/{id}"))
        .and_then(|t| {
            t["rounds"]
                .as_array()
                .map(|rs| rs.iter().filter_map(|r| r["id"].as_i64()).collect())
        })
        .unwrap_or_default();
    for r in rounds.iter().take(3) {
        let round = get_json(&format!("http://{addr}/api/rounds/{r}")).context("no round")?;
        for g in round["games"].as_array().into_iter().flatten() {
            interrupted(stop)?;
            let Some(game) = g["id"].as_i64() else {
                continue;
            };
            let pgn = random_game(game as u64, 80);
            admin(addr, "PUT", &format!("/api/games/{game}/pgn"), token, &pgn)?;
            with_moves += 1;
        }
    }
    println!(
        "service: {with_moves} games of 80 plies stored in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let url = format!("http://{addr}/api/tournaments/{id}/standings?round={ROUNDS}");
    let first = get_json(&url).context("no standings")?;
    let rows = first["players"].as_array().cloned().unwrap_or_default();
    if rows.len() != trf.players.len() {
        bail!(
            "the service ranks {} players, not {}",
            rows.len(),
            trf.players.len()
        );
    }
    let row_of = |s: &Value, sr: u64| {
        s["players"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["start_rank"] == sr).cloned())
    };
    let (mut visible, mut request) = (Vec::new(), Vec::new());
    let runs = args.seconds.map_or(10, |s| s as usize).clamp(1, 60);
    for row in rows.iter().take(runs) {
        interrupted(stop)?;
        let sr = row["start_rank"].as_u64().unwrap_or(0);
        let cell = &row["rounds"][ROUNDS - 1];
        let (Some(game), Some(colour)) = (cell["game_id"].as_i64(), cell["colour"].as_str()) else {
            continue;
        };
        let before = row["points"].as_f64().unwrap_or(0.0);
        // A second apart: each result finds the last computation stale or nearly so.
        std::thread::sleep(Duration::from_millis(1100));
        let result = if colour == "w" { "1-0" } else { "0-1" };
        let t0 = Instant::now();
        admin(
            addr,
            "POST",
            &format!("/api/games/{game}/result"),
            token,
            &json!({"result": result}).to_string(),
        )?;
        loop {
            interrupted(stop)?;
            let a = Instant::now();
            let s = get_json(&url).context("no standings")?;
            let took = a.elapsed().as_secs_f64() * 1000.0;
            let now = row_of(&s, sr).and_then(|r| r["points"].as_f64());
            if now.is_some_and(|p| (p - before - 1.0).abs() < 1e-9) {
                visible.push(t0.elapsed().as_secs_f64() * 1000.0);
                request.push(took);
                break;
            }
            if t0.elapsed() > Duration::from_secs(10) {
                bail!("a result set at game {game} was not in the standings after 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    report(
        "service: result set → counted in the public standings",
        &mut visible,
    );
    report(
        "service: the standings request that counted it",
        &mut request,
    );
    serve.stop(Duration::from_secs(5));
    Ok(())
}
