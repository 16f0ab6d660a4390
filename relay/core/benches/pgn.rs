//! PGN writing speed: games written per second, next to python-chess exporting the same games
//! on the same machine (when python3 with the chess package is there).
//!
//! `cargo bench -p relay-core --bench pgn`; `PGN_BENCH_SECS` sets the time per measurement.
//! Under `cargo test --benches` (no `--bench` argument) it runs once, quickly.

use relay_core::game::Game;
use relay_core::pgn::{WriteOptions, read_games, write_game};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn games() -> (Vec<Game>, String) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/pgn/clocks");
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            text.push_str(&std::fs::read_to_string(&f).unwrap_or_default());
            text.push('\n');
        }
    }
    if text.is_empty() {
        println!("(../shared/data not found: using the bundled classics)");
        text = include_str!("../../data/classics.pgn").to_string();
    }
    let games: Vec<Game> = read_games(&text)
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    (games, text)
}

const PYTHON: &str = r#"
import sys, io, time, chess.pgn
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
secs = float(sys.argv[2])
games = []
f = io.StringIO(text)
while True:
    g = chess.pgn.read_game(f)
    if g is None:
        break
    games.append(g)
n = 0
start = time.perf_counter()
while time.perf_counter() - start < secs:
    for g in games:
        g.accept(chess.pgn.StringExporter(headers=True, variations=True, comments=True))
        n += 1
print(n / (time.perf_counter() - start))
"#;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let secs: f64 = std::env::var("PGN_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if full { 2.0 } else { 0.05 });
    let (games, text) = games();
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    println!(
        "pgn: {} games, {moves} moves with clocks, written in export format",
        games.len()
    );
    let opts = WriteOptions::default();
    let mut n = 0usize;
    let mut bytes = 0usize;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(secs) || n == 0 {
        for g in &games {
            bytes += write_game(g, &opts).len();
            n += 1;
        }
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    println!(
        "relay:        {rate:>10.0} games/s ({:.1} MB/s of PGN)",
        bytes as f64 / start.elapsed().as_secs_f64() / 1e6
    );
    let path = std::env::temp_dir().join(format!("relay-pgn-bench-{}.pgn", std::process::id()));
    if std::fs::write(&path, &text).is_err() {
        return;
    }
    let python = Command::new("python3")
        .args(["-c", PYTHON, &path.display().to_string(), &secs.to_string()])
        .output();
    match python {
        Ok(out) if out.status.success() => {
            let theirs: f64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or(0.0);
            println!("python-chess: {theirs:>10.0} games/s (StringExporter, same games)");
            if theirs > 0.0 {
                println!(
                    "relay writes PGN {:.0}x as fast as python-chess on this machine",
                    rate / theirs
                );
            }
        }
        _ => println!("python-chess: not available (pip install chess) - no comparison"),
    }
    let _ = std::fs::remove_file(&path);
}
