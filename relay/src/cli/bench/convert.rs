//! `relay bench --case convert`: `relay convert` as a user runs it, a process of its own, on
//! a PGN file of 100,000 games (`--boards` sets the number) made of every readable
//! standard-chess game of `../shared/data/pgn` repeated (the few Chess960 games are left out
//! so that every format, CBF included, converts the same file): games per second for each
//! direction of each format, the peak memory of each run (a file of any size should convert
//! in the memory of one game), and python-chess reading and writing the same file as PGN and
//! EPD beside it (`--no-baseline` leaves it out: it takes about 5 ms a game; python-chess has
//! no PGC or CBF). Then the size of a game in each format: PGN, gzip'd PGN, PGC, CBF (+ its
//! CBI index) and the one-byte encoding.

use super::cases::BenchArgs;
use super::procs::{Proc, TempDir, relay_command, sample};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn shared_pgn() -> Result<Vec<PathBuf>> {
    let root = std::env::var("RELAY_SHARED_DATA").unwrap_or_else(|_| "../shared/data".into());
    let mut files = Vec::new();
    for dir in ["pgn/clocks", "pgn/tricky"] {
        let d = Path::new(&root).join(dir);
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        files.extend(
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "pgn")),
        );
    }
    files.sort();
    if files.is_empty() {
        bail!("no PGN under {root}/pgn (set RELAY_SHARED_DATA to the shared data folder)");
    }
    Ok(files)
}

/// Runs `relay ARGS` to the end: wall time and peak resident memory (KiB, from /proc while
/// it runs).
fn timed(args: &[&str]) -> Result<(f64, u64)> {
    let mut cmd = relay_command()?;
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut p = Proc::spawn("relay convert", &mut cmd)?;
    let mut peak = 0;
    loop {
        if let Some(s) = sample(p.pid()) {
            peak = peak.max(s.hwm_kib);
        }
        if let Some(st) = p.ended() {
            if !st.success() {
                bail!("relay {} failed ({st})", args.join(" "));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((t0.elapsed().as_secs_f64(), peak))
}

const PYTHON: &str = r#"
import sys, time, io
import chess, chess.pgn
src, mode = sys.argv[1], sys.argv[2]
t0 = time.time()
n = 0
out = io.StringIO()
with open(src, encoding="utf-8") as f:
    while True:
        g = chess.pgn.read_game(f)
        if g is None:
            break
        n += 1
        if mode == "pgn":
            print(g, file=out, end="\n\n")
        else:
            b = g.board()
            print(b.epd(hmvc=b.halfmove_clock, fmvn=b.fullmove_number), file=out)
            for m in g.mainline_moves():
                b.push(m)
                print(b.epd(hmvc=b.halfmove_clock, fmvn=b.fullmove_number), file=out)
print(n, time.time() - t0)
"#;

fn python(src: &Path, mode: &str) -> Option<(u64, f64)> {
    let o = Command::new("python3")
        .args(["-c", PYTHON])
        .arg(src)
        .arg(mode)
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&o.stdout);
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let want = args.boards.unwrap_or(100_000);
    let dir = TempDir::new("convert")?;
    // The shared games, read and written once by the relay, then repeated.
    let mut one = String::new();
    let mut per_round = 0usize;
    for f in shared_pgn()? {
        let bytes = std::fs::read(&f).with_context(|| format!("{}", f.display()))?;
        let text = relay_core::pgn::decode_pgn_bytes(&bytes);
        let games = relay_core::pgn::read_games(&text);
        if games.iter().any(Result::is_err) {
            continue;
        }
        for g in games.into_iter().flatten() {
            if g.castling_mode == shakmaty::CastlingMode::Chess960 {
                continue;
            }
            one.push_str(&relay_core::pgn::write_game(&g, &Default::default()));
            per_round += 1;
        }
    }
    if per_round == 0 {
        bail!("no readable shared game");
    }
    let big = dir.0.join("big.pgn");
    let mut text = String::with_capacity(one.len() * (want / per_round + 1));
    let mut games = 0;
    while games < want {
        text.push_str(&one);
        games += per_round;
    }
    std::fs::write(&big, &text)?;
    drop(text);
    let mib = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0;
    println!(
        "== case convert: {games} games ({per_round} shared games repeated), {:.0} MiB of PGN ==",
        mib(&big)
    );
    let (pgn, epd, ob, back) = (
        dir.0.join("out.pgn"),
        dir.0.join("out.epd"),
        dir.0.join("out.1b"),
        dir.0.join("back.pgn"),
    );
    let (pgc, cbf, archive) = (
        dir.0.join("out.pgc"),
        dir.0.join("out.cbf"),
        dir.0.join("archive.pgn"),
    );
    // (what, from, to, format): each direction a `relay convert FROM TO --to FORMAT` run.
    let runs: [(&str, &Path, &Path, &str); 9] = [
        ("PGN → PGN", &big, &pgn, "pgn"),
        ("PGN → archival order", &big, &archive, "archive"),
        ("PGN → EPD", &big, &epd, "epd"),
        ("PGN → one-byte", &big, &ob, "onebyte"),
        ("one-byte → PGN", &ob, &back, "pgn"),
        ("PGN → PGC", &big, &pgc, "pgc"),
        ("PGC → PGN", &pgc, &back, "pgn"),
        ("PGN → CBF + CBI", &big, &cbf, "cbf"),
        ("CBF → PGN", &cbf, &back, "pgn"),
    ];
    for (what, from, to, format) in runs {
        let (from, to) = (from.to_string_lossy(), to.to_string_lossy());
        let (secs, peak) = timed(&["convert", &from, &to, "--to", format])?;
        println!(
            "  relay {what:<22} {:>8.0} games/s  ({secs:.1} s, peak memory {:.1} MiB)",
            games as f64 / secs,
            peak as f64 / 1024.0
        );
    }
    for (what, mode) in [
        ("python-chess PGN → PGN", "pgn"),
        ("python-chess PGN → EPD", "epd"),
    ] {
        if args.no_baseline {
            println!("  {what}: skipped (--no-baseline)");
            continue;
        }
        match python(&big, mode) {
            Some((n, secs)) => println!(
                "  {what:<28} {:>8.0} games/s  ({secs:.1} s, {n} games)",
                n as f64 / secs
            ),
            None => println!("  {what}: python3 with the chess package not found, skipped"),
        }
    }
    let gz = dir.0.join("out.pgn.gz");
    let zipped = Command::new("gzip")
        .arg("-c")
        .arg(&pgn)
        .stdout(std::fs::File::create(&gz)?)
        .status()
        .is_ok_and(|s| s.success());
    let per_game =
        |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) as f64 / games as f64;
    println!(
        "  bytes per game: PGN {:.0} (every tag, clocks, comments), gzip'd PGN {}, PGC {:.0} (every tag, moves; no clocks or comments), CBF {:.0} + CBI {:.1} (players, event, year, Elo, ECO, moves, comments), one-byte {:.0} (every tag, moves; no clocks or comments); EPD {:.0} (every position)",
        per_game(&pgn),
        if zipped {
            format!("{:.0}", per_game(&gz))
        } else {
            "(no gzip)".into()
        },
        per_game(&pgc),
        per_game(&cbf),
        per_game(&cbf.with_extension("cbi")),
        per_game(&ob),
        per_game(&epd),
    );
    println!();
    Ok(())
}
