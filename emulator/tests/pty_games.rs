//! Broadcast games played by emulated boards over pseudo-terminals and read back through the
//! real serial session, the decoder and the recorder: the product's whole reading path.
//!
//! Hands move at ten times real speed and long thinks are skipped by jumping the emulator's
//! clock, so a game takes seconds; the clock readings stay exact because the emulated clock
//! changes only at the scripted moments.

mod support;

use boards::protocol::{LineMode, Message};
use boards::transport::{PortEvent, SessionConfig};
use emulator::board::{BoardIdentity, EmulatedBoard};
use emulator::line::{Line, VirtualClock};
use emulator::play::{Table, play};
use emulator::player::{GameScore, NoiseConfig, ScriptOptions, read_games, script};
use relay_core::game::Game;
use relay_core::recorder::{Recorder, RecorderConfig};
use shakmaty::Position;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

const SPEED: f64 = 10.0;
/// Virtual thinking time left between moves after skipping: 250 ms of wall time.
const IDLE_MS: u64 = 2_500;

/// How the line is read.
#[derive(Clone, Copy)]
enum Reading {
    /// Single-board mode: every field change and clock reading as it happens.
    Single,
    /// Bus mode, polled every `gap_ms` (wall time): one poll returns several moves and lever
    /// presses at once. With `damage`, every few polls a reply arrives with a bad checksum
    /// and is asked for again.
    Bus { gap_ms: u64, damage: bool },
}

/// Plays one game on its own emulated line and records it through the serial path.
fn play_over_pty(game: &GameScore, seed: u64, reading: Reading) -> (Game, Vec<bool>) {
    let options = ScriptOptions::new(NoiseConfig {
        probability: 0.3,
        handling_ms: (250, 700),
    });
    let s = script(game, seed, &options);
    let table = Table::varied(seed);
    let clock = table.clock_for(&s);
    let board = EmulatedBoard::new(
        BoardIdentity::from_number(100 + (seed % 1000) as u16),
        clock,
    );
    let line = Arc::new(Line::open(vec![board], VirtualClock::new(SPEED), None).expect("pty"));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let cfg = {
        let path = line.path().display().to_string();
        match reading {
            Reading::Single => SessionConfig::new(&path, LineMode::Single),
            Reading::Bus { gap_ms, .. } => {
                let mut cfg = SessionConfig::new(&path, LineMode::Bus);
                cfg.bus_poll_gap = Duration::from_millis(gap_ms);
                cfg
            }
        }
    };
    let noise_thread = match reading {
        Reading::Bus { damage: true, .. } => {
            let (line, stop) = (line.clone(), stop.clone());
            Some(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(1_700));
                    line.corrupt_next(1);
                }
            }))
        }
        _ => None,
    };
    let session = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            boards::transport::run(
                cfg,
                &mut |e| {
                    let _ = tx.send(e);
                },
                &stop,
            )
        })
    };
    let origin = SystemTime::now();
    // What the session reported before the hands started, handed to the recorder first.
    let mut early = std::collections::VecDeque::new();
    // Let the session start the board (find it, on a bus) before the first hand moves. A
    // slowly polled bus must see the set-up position standing still before play starts, as
    // it would in a hall: set it up now and give it two polls.
    match reading {
        // The hands start once the session has read the whole board (the dump it asks for on
        // opening), however long a busy machine takes to get there: a board first read in
        // the middle of a game is recorded from its next game only, so a fixed head start
        // that a slow start overran left the game with no moves. At most 30 s.
        Reading::Single => {
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                let Ok(e) = rx.recv_timeout(Duration::from_millis(50)) else {
                    continue;
                };
                let dump = matches!(
                    e,
                    PortEvent::Message {
                        message: Message::BoardDump { .. },
                        ..
                    }
                );
                early.push_back(e);
                if dump {
                    break;
                }
            }
        }
        Reading::Bus { gap_ms, .. } => {
            let t = line.clock().now_ms();
            line.act(0, |b| {
                ((), b.set_position(game.start.board(), table.orientation, t))
            });
            std::thread::sleep(Duration::from_millis(1_500 + 2 * gap_ms));
        }
    }
    let player = {
        let (line, stop, start, s) = (
            line.clone(),
            stop.clone(),
            game.start.board().clone(),
            s.clone(),
        );
        std::thread::spawn(move || play(&line, 0, &start, &s, table, Some(IDLE_MS), &stop))
    };
    let ms = |t: SystemTime| t.duration_since(origin).map_or(0, |d| d.as_millis() as u64);
    let mut recorder = Recorder::new(RecorderConfig {
        settle_ms: 120,
        ..RecorderConfig::default()
    });
    let mut done_at: Option<Instant> = None;
    // RELAY_DEBUG_PTY=1 prints outcomes and clocks, =all every message too.
    let debug = std::env::var("RELAY_DEBUG_PTY").ok();
    let debug_all = debug.as_deref() == Some("all");
    let debug = debug.is_some();
    // How long to keep reading once the hands are done. A bus is read a poll behind, and on a
    // busy machine a poll can be late: it is read until the game is all there (its last
    // move with its clock), for at most 10 s.
    let linger = Duration::from_millis(match reading {
        Reading::Single => 800,
        Reading::Bus { .. } => 10_000,
    });
    let plies = game.moves.len();
    let complete = |r: &Recorder| {
        r.game().is_some_and(|g| {
            g.moves.len() >= plies && g.moves.last().is_none_or(|m| m.clk.is_some())
        })
    };
    loop {
        let event = match early.pop_front() {
            Some(e) => Ok(e),
            None => rx.recv_timeout(Duration::from_millis(10)),
        };
        match event {
            Ok(PortEvent::Message { message, at, .. }) => {
                if debug_all {
                    eprintln!("[seed {seed}] {} {message:?}", ms(at));
                }
                let outs = recorder.on_message(&message, ms(at));
                if debug
                    && let Message::Clock {
                        clock: boards::protocol::ClockMessage::Time(r),
                    } = &message
                {
                    eprintln!("[seed {seed}] {} clock {r}", ms(at));
                }
                if debug {
                    for o in outs
                        .iter()
                        .filter(|o| !matches!(o, relay_core::recorder::Outcome::Clock { .. }))
                    {
                        eprintln!("[seed {seed}] {} {o:?}", ms(at));
                    }
                }
            }
            Ok(other) => {
                if debug {
                    eprintln!("[seed {seed}] {other:?}");
                }
            }
            Err(_) => {
                let outs = recorder.tick(ms(SystemTime::now()));
                if debug {
                    for o in outs
                        .iter()
                        .filter(|o| !matches!(o, relay_core::recorder::Outcome::Clock { .. }))
                    {
                        eprintln!("[seed {seed}] tick {o:?}");
                    }
                }
            }
        }
        if done_at.is_none() && player.is_finished() {
            done_at = Some(Instant::now());
        }
        if done_at.is_some_and(|t| {
            t.elapsed() > linger
                || (matches!(reading, Reading::Bus { .. })
                    && t.elapsed() > Duration::from_millis(300)
                    && complete(&recorder))
        }) {
            break;
        }
    }
    recorder.flush();
    stop.store(true, Ordering::Relaxed);
    let _ = player.join();
    let _ = session.join();
    if let Some(t) = noise_thread {
        let _ = t.join();
    }
    let honoured = s.moves.iter().map(|m| m.clock_honoured).collect();
    (recorder.game().cloned().unwrap_or_default(), honoured)
}

fn check(game: &GameScore, seed: u64, label: &str, reading: Reading) -> (usize, usize) {
    let (got, honoured) = play_over_pty(game, seed, reading);
    support::assert_same_moves_and_clocks(game, &got, honoured, label)
}

/// Moves and clocks checked by every worker, added up (a worker's panic is a failed game).
fn sum_of(workers: Vec<std::thread::JoinHandle<(usize, usize)>>) -> (usize, usize) {
    workers.into_iter().fold((0, 0), |(moves, clocks), w| {
        let (m, c) = w
            .join()
            .expect("a game came back different (see the panic above)");
        (moves + m, clocks + c)
    })
}

/// The two tests of this file each run many lines at once; run side by side on two cores,
/// their threads starve the bus test's polls. One at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn broadcast_games_through_the_serial_path() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(files) = boards::testdata::shared_files("pgn/clocks") else {
        return;
    };
    // How many games per file (all by default); seeds per game.
    let per_file: usize = std::env::var("RELAY_PTY_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    // Each game once, the seeds taking turns: boards turned round, clocks either way, and
    // different noise (the sans-I/O test plays every game under every seed).
    let seeds: &[u64] = &[1, 2, 3];
    let mut turn = 0usize;
    let mut jobs = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        for (gi, mut game) in read_games(&text)
            .expect("games")
            .into_iter()
            .enumerate()
            .take(per_file)
        {
            if game.time_control.is_none() {
                game.time_control = game.guess_time_control();
            }
            let seed = seeds[turn % seeds.len()];
            turn += 1;
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            jobs.push((format!("{name} game {} seed {seed}", gi + 1), game, seed));
        }
    }
    if let Ok(only) = std::env::var("RELAY_PTY_ONLY") {
        jobs.retain(|(label, _, _)| label.contains(&only));
    }
    let total = jobs.len();
    // The longest games first (jobs are taken from the end), so that no long game starts
    // last and keeps the test waiting alone.
    jobs.sort_by_key(|(_, game, _)| game.moves.len());
    let jobs = Arc::new(std::sync::Mutex::new(jobs));
    let started = Instant::now();
    // Lines run side by side: most of the time every one of them sleeps (16 lines kept
    // an eighth of a core busy and took seven minutes; 48 take a third of one).
    let workers: Vec<_> = (0..48)
        .map(|_| {
            let jobs = jobs.clone();
            std::thread::spawn(move || {
                let mut sums = (0usize, 0usize);
                loop {
                    let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let Some((label, game, seed)) = job else {
                        return sums;
                    };
                    let (m, c) = check(&game, seed, &label, Reading::Single);
                    sums.0 += m;
                    sums.1 += c;
                }
            })
        })
        .collect();
    let (moves, clocks) = sum_of(workers);
    println!(
        "{total} games through pseudo-terminals in {:.0} s: {moves} moves and {clocks} clocks identical",
        started.elapsed().as_secs_f64()
    );
}

/// Bus mode, polled only every 1.2 s while moves come every ~0.3 s: each poll returns several
/// moves and lever presses, some replies are damaged and asked for again. Every clock must
/// still belong to its own move (a clock record follows the press it was written at).
#[test]
fn broadcast_games_over_a_slowly_polled_bus() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(files) = boards::testdata::shared_files("pgn/clocks") else {
        return;
    };
    let mut jobs = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).expect("read");
        for (gi, mut game) in read_games(&text)
            .expect("games")
            .into_iter()
            .enumerate()
            .filter(|(_, g)| g.moves.iter().any(|m| m.clk_ms.is_some()))
            .take(2)
        {
            if game.time_control.is_none() {
                game.time_control = game.guess_time_control();
            }
            let seed = (fi * 2 + gi) as u64 + 1;
            if std::env::var("RELAY_PTY_ONLY").is_ok_and(|o| !format!("seed {seed}").ends_with(&o))
            {
                continue;
            }
            jobs.push((
                format!("bus: file {fi} game {} seed {seed}", gi + 1),
                game,
                seed,
            ));
        }
    }
    let started = Instant::now();
    let workers: Vec<_> = jobs
        .into_iter()
        .map(|(label, game, seed)| {
            std::thread::spawn(move || {
                let reading = Reading::Bus {
                    gap_ms: 1_200,
                    damage: seed % 2 == 0,
                };
                check(&game, seed, &label, reading)
            })
        })
        .collect();
    let (moves, clocks) = sum_of(workers);
    assert!(clocks > 100, "only {clocks} clocks checked");
    println!(
        "bus: {moves} moves and {clocks} clocks identical in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}
