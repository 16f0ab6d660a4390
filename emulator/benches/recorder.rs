//! How fast one core turns board readings into moves.
//!
//! Realistic reading streams are made by playing real games on the emulated board and clock
//! without any I/O: each game of the bundled `relay/data/classics.pgn` (and, when the shared
//! test data is there, the first games of each broadcast file in `../shared/data/pgn/clocks/`)
//! becomes a script of human actions — lifts, placements, slides, fidgets, takebacks, lever
//! presses — applied to an [`EmulatedBoard`](emulator::board::EmulatedBoard) at its virtual times, with the board asked for
//! the clock every second of virtual time in between. The bytes the board sends, with their
//! virtual times, are the stream. The bench then times [`replay`] (decoder and recorder, the
//! code the live service runs) over all streams and reports readings and moves per second,
//! and how many boards of a hall that is.
//!
//! Every replayed game is checked against its source game; a difference is printed as a
//! warning with the game, the seed and the first differing ply (a recorder bug).
//!
//! `cargo bench -p relay-core --bench recorder` times for about two seconds
//! (`RECORDER_BENCH_SECS` overrides; `RECORDER_BENCH_SEED` plays the games with other noise);
//! without `--bench` (as `cargo test --benches` runs it) each part runs once, on fewer games.

// The emulator tests' support: playing a game on an emulated board without I/O.
#[path = "../tests/support/mod.rs"]
mod support;

use boards::protocol::{ClockSide, Command, Decoded, Decoder, LineMode, Orientation};
use emulator::clock::TimeControl;
use emulator::play::Table;
use emulator::player::{GameScore, NoiseConfig, Script, ScriptOptions, read_games_each, script};
use relay_core::recorder::{Outcome, RecorderConfig};
use relay_core::replay::{Received, replay};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The bundled games (no clocks in them).
const CLASSICS: &str = include_str!("../../relay/data/classics.pgn");

/// Games taken from each shared broadcast file (fewer for the quick run without `--bench`).
const GAMES_PER_FILE: usize = 20;
const GAMES_PER_FILE_QUICK: usize = 2;

/// Time control for games whose PGN gives none (classical: 90 minutes + 30 seconds a move).
const DEFAULT_TIME_CONTROL: &str = "5400+30";

/// How often (virtual ms) the host side lets time pass on the board, so clock readings flow.
const TICK_MS: u64 = 1_000;

/// Messages a second one board sends in the hall the capacity is compared with.
const HALL_MSGS_PER_BOARD: f64 = 3.0;

/// Base of the per-game seeds; game `i` (counted over all sources from 0) uses `seed + i`.
/// `RECORDER_BENCH_SEED` overrides it, to try other human noise on the same games.
const SEED: u64 = 20_260_101;

/// One game played into a byte stream.
#[derive(Debug)]
struct Stream {
    /// Source file and game number, with the players.
    label: String,
    seed: u64,
    table: Table,
    game: GameScore,
    chunks: Vec<Received>,
    /// Decoded messages in the stream.
    messages: usize,
    /// Virtual length of the stream in ms.
    span_ms: u64,
}

/// The single-board start-up a host sends: who are you, report changes nicely, what is on the
/// board and on the clock now.
fn startup_bytes() -> Vec<u8> {
    [
        Command::Reset,
        Command::ReturnSerialNumber,
        Command::SendUpdateNice,
        Command::SendBoard,
        Command::SendClock,
    ]
    .iter()
    .flat_map(Command::encode)
    .collect()
}

/// Plays `game` on a fresh emulated board and returns what the board sent, with virtual times.
fn play(game: &GameScore, s: &Script, table: Table, serial: u16) -> Vec<Received> {
    support::play_sans_io(game, s, table, serial, &startup_bytes(), TICK_MS)
}

fn count_messages(chunks: &[Received]) -> usize {
    let mut d = Decoder::new(LineMode::Single);
    chunks
        .iter()
        .flat_map(|c| d.feed(&c.bytes))
        .filter(|(item, _)| matches!(item, Decoded::Message { .. }))
        .count()
}

fn players(game: &GameScore) -> String {
    let h = |n: &str| game.header(n).unwrap_or("?").to_string();
    format!("{} - {}", h("White"), h("Black"))
}

/// The games to play: (label, game).
fn sources(per_file: usize) -> Vec<(String, GameScore)> {
    let mut games = Vec::new();
    let mut add = |file: &str, text: &str, limit: usize| {
        let mut bad = 0;
        for (i, g) in read_games_each(text).into_iter().enumerate().take(limit) {
            match g {
                Ok(g) => games.push((format!("{file} game {}", i + 1), g)),
                Err(_) => bad += 1,
            }
        }
        if bad > 0 {
            println!("note: {file}: {bad} unreadable game(s) left out");
        }
    };
    add("relay/data/classics.pgn", CLASSICS, usize::MAX);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/pgn/clocks");
    match std::fs::read_dir(&dir) {
        Ok(entries) => {
            let mut files: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "pgn"))
                .collect();
            files.sort();
            for f in files {
                let name = format!(
                    "../shared/data/pgn/clocks/{}",
                    f.file_name().unwrap_or_default().to_string_lossy()
                );
                match std::fs::read_to_string(&f) {
                    Ok(text) => add(&name, &text, per_file),
                    Err(e) => println!("note: {name}: {e}"),
                }
            }
        }
        Err(_) => println!("note: ../shared/data/pgn/clocks not found; bundled games only"),
    }
    games
}

/// Plays every source game into a stream. Tables differ as in a real hall: every other clock
/// stands with White on the right, every fifth board is turned round.
fn build_streams(per_file: usize, base_seed: u64) -> Vec<Stream> {
    let default_tc: TimeControl = DEFAULT_TIME_CONTROL.parse().expect("default time control");
    let options = ScriptOptions::new(NoiseConfig::default());
    let mut streams = Vec::new();
    for (i, (label, mut game)) in sources(per_file).into_iter().enumerate() {
        if game.time_control.is_none() {
            game.time_control = Some(
                game.guess_time_control()
                    .unwrap_or_else(|| default_tc.clone()),
            );
        }
        let seed = base_seed.wrapping_add(i as u64);
        let table = Table {
            white_clock: if i.is_multiple_of(2) {
                ClockSide::Left
            } else {
                ClockSide::Right
            },
            orientation: if i % 5 == 4 {
                Orientation::Rotated
            } else {
                Orientation::Normal
            },
        };
        let s = script(&game, seed, &options);
        let chunks = play(&game, &s, table, 1 + i as u16);
        let messages = count_messages(&chunks);
        let span_ms = chunks.last().map_or(0, |c| c.at_ms);
        let label = format!("{label} ({})", players(&game));
        streams.push(Stream {
            label,
            seed,
            table,
            game,
            chunks,
            messages,
            span_ms,
        });
    }
    streams
}

/// Replays every stream once and compares the games with their sources; returns the number of
/// streams whose moves differ.
fn check(streams: &[Stream]) -> usize {
    let mut bad = 0;
    for st in streams {
        let (games, outcomes) = replay(&st.chunks, LineMode::Single, RecorderConfig::default());
        let want: Vec<&str> = st.game.moves.iter().map(|m| m.san.as_str()).collect();
        let problem = match games.as_slice() {
            [] => Some("no game recorded".to_string()),
            [g] => {
                let have: Vec<String> = g.moves.iter().map(|m| m.san.to_string()).collect();
                let first = (0..want.len().max(have.len()))
                    .find(|&k| want.get(k).copied() != have.get(k).map(String::as_str));
                first.map(|k| {
                    let at = |v: Option<&str>| v.unwrap_or("(nothing)").to_string();
                    format!(
                        "first differing ply {} (move {}{}): recorded {}, source {} ({} plies recorded, {} in the source)",
                        k + 1,
                        k / 2 + 1,
                        if k % 2 == 0 { "." } else { "..." },
                        at(have.get(k).map(String::as_str)),
                        at(want.get(k).copied()),
                        have.len(),
                        want.len()
                    )
                })
            }
            many => Some(format!("{} games recorded instead of one", many.len())),
        };
        if let Some(p) = problem {
            bad += 1;
            println!(
                "WARNING: recorder moves differ from the source: {}, seed {}, clock White {:?}, board {:?}: {p}",
                st.label, st.seed, st.table.white_clock, st.table.orientation
            );
            // What the recorder said besides moves and clocks, for the bug report.
            let notable: Vec<String> = outcomes
                .iter()
                .filter(|o| {
                    !matches!(
                        o,
                        Outcome::Move { .. } | Outcome::Clock { .. } | Outcome::MoveClock { .. }
                    )
                })
                .map(|o| format!("{o:?}"))
                .collect();
            let skip = notable.len().saturating_sub(8);
            for o in &notable[skip..] {
                println!("    recorder said: {o}");
            }
        }
    }
    bad
}

fn main() {
    let timed = std::env::args().any(|a| a == "--bench");
    let secs: f64 = std::env::var("RECORDER_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);

    let base_seed: u64 = std::env::var("RECORDER_BENCH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);

    let t0 = Instant::now();
    let streams = build_streams(
        if timed {
            GAMES_PER_FILE
        } else {
            GAMES_PER_FILE_QUICK
        },
        base_seed,
    );
    let messages: usize = streams.iter().map(|s| s.messages).sum();
    let bytes: usize = streams
        .iter()
        .flat_map(|s| &s.chunks)
        .map(|c| c.bytes.len())
        .sum();
    let plies: usize = streams.iter().map(|s| s.game.moves.len()).sum();
    let span_ms: u64 = streams.iter().map(|s| s.span_ms).sum();
    println!(
        "streams: {} games (seeds {base_seed}..), {plies} plies, {messages} readings ({bytes} bytes), {:.1} h of play at {:.2} readings/s a board; built in {:.2?}",
        streams.len(),
        span_ms as f64 / 3_600_000.0,
        messages as f64 / (span_ms as f64 / 1000.0).max(1e-9),
        t0.elapsed()
    );

    let bad = check(&streams);
    println!(
        "check: {} of {} games recorded with the source's moves",
        streams.len() - bad,
        streams.len()
    );

    // Timing: whole passes over all streams until the time is up (one pass without --bench).
    let budget = Duration::from_secs_f64(if timed { secs.max(0.0) } else { 0.0 });
    let start = Instant::now();
    let mut passes = 0u64;
    let mut moves = 0u64;
    loop {
        for st in &streams {
            let (games, outcomes) = replay(
                black_box(&st.chunks),
                LineMode::Single,
                RecorderConfig::default(),
            );
            moves += games.iter().map(|g| g.moves.len() as u64).sum::<u64>();
            black_box(outcomes);
        }
        passes += 1;
        if start.elapsed() >= budget {
            break;
        }
    }
    let elapsed = start.elapsed().as_secs_f64().max(1e-9);
    let readings_per_s = (messages as u64 * passes) as f64 / elapsed;
    let moves_per_s = moves as f64 / elapsed;
    let boards = readings_per_s / HALL_MSGS_PER_BOARD;
    println!(
        "replay: {passes} pass(es) in {elapsed:.2} s{}",
        if timed {
            ""
        } else {
            " (one pass; run with `cargo bench` to time)"
        }
    );
    println!("  {readings_per_s:.0} readings/s on one core");
    println!("  {moves_per_s:.0} moves recorded/s");
    println!(
        "  = enough for {boards:.0} boards at {HALL_MSGS_PER_BOARD:.0} msgs/s ({:.0}x a hall of 500 boards)",
        boards / 500.0
    );
    if bad > 0 {
        println!(
            "WARNING: {bad} game(s) recorded with moves that differ from the source (see above)"
        );
    }
}
