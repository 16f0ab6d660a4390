//! Broadcast games played by emulated boards over pseudo-terminals and read back through the
//! real serial session, the decoder and the recorder: the product's whole reading path.
//!
//! Hands move at ten times real speed and long thinks are skipped by jumping the emulator's
//! clock, so a game takes seconds; the clock readings stay exact because the emulated clock
//! changes only at the scripted moments.

use boards::emulator::board::{BoardIdentity, EmulatedBoard};
use boards::emulator::line::{Line, VirtualClock};
use boards::emulator::play::{Table, play};
use boards::emulator::player::{GameScore, NoiseConfig, read_games, script};
use boards::protocol::LineMode;
use boards::transport::{PortEvent, SessionConfig};
use relay_core::game::Game;
use relay_core::recorder::{Recorder, RecorderConfig};
use shakmaty::Position;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

const SPEED: f64 = 10.0;
/// Virtual thinking time left between moves after skipping: 250 ms of wall time.
const IDLE_MS: u64 = 2_500;

fn shared_dir(path: &str) -> Option<PathBuf> {
    boards::testdata::shared_data(path)
}

/// Plays one game on its own emulated line and records it through the serial path.
fn play_over_pty(game: &GameScore, seed: u64) -> (Game, Vec<bool>) {
    let noise = NoiseConfig {
        probability: 0.3,
        handling_ms: (250, 700),
    };
    let s = script(game, seed, &noise);
    let table = Table::varied(seed);
    let clock = table.clock_for(&s);
    let board = EmulatedBoard::new(
        BoardIdentity::from_number(100 + (seed % 1000) as u16),
        clock,
    );
    let line = Arc::new(Line::open(vec![board], VirtualClock::new(SPEED), None).expect("pty"));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let session = {
        let (path, stop) = (line.path().display().to_string(), stop.clone());
        std::thread::spawn(move || {
            boards::transport::run(
                SessionConfig::new(&path, LineMode::Single),
                &mut |e| {
                    let _ = tx.send(e);
                },
                &stop,
            )
        })
    };
    // Let the session start the board before the first hand moves.
    std::thread::sleep(Duration::from_millis(300));
    let player = {
        let (line, stop, start, s) = (
            line.clone(),
            stop.clone(),
            game.start.board().clone(),
            s.clone(),
        );
        std::thread::spawn(move || play(&line, 0, &start, &s, table, Some(IDLE_MS), &stop))
    };
    let origin = SystemTime::now();
    let ms = |t: SystemTime| t.duration_since(origin).map_or(0, |d| d.as_millis() as u64);
    let mut recorder = Recorder::new(RecorderConfig {
        settle_ms: 120,
        ..RecorderConfig::default()
    });
    let mut done_at: Option<Instant> = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(PortEvent::Message { message, at, .. }) => {
                let outs = recorder.on_message(&message, ms(at));
                if std::env::var("RELAY_DEBUG_PTY").is_ok()
                    && let boards::protocol::Message::Clock {
                        clock: boards::protocol::ClockMessage::Time(r),
                    } = &message
                {
                    eprintln!("[seed {seed}] {} clock {r}", ms(at));
                }
                if std::env::var("RELAY_DEBUG_PTY").is_ok() {
                    for o in outs
                        .iter()
                        .filter(|o| !matches!(o, relay_core::recorder::Outcome::Clock { .. }))
                    {
                        eprintln!("[seed {seed}] {} {o:?}", ms(at));
                    }
                }
            }
            Ok(_) => {}
            Err(_) => {
                let outs = recorder.tick(ms(SystemTime::now()));
                if std::env::var("RELAY_DEBUG_PTY").is_ok() {
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
        if done_at.is_some_and(|t| t.elapsed() > Duration::from_millis(800)) {
            break;
        }
    }
    recorder.flush();
    stop.store(true, Ordering::Relaxed);
    let _ = player.join();
    let _ = session.join();
    let honoured = s.moves.iter().map(|m| m.clock_honoured).collect();
    (recorder.game().cloned().unwrap_or_default(), honoured)
}

fn check(game: &GameScore, seed: u64, label: &str) -> (usize, usize) {
    let (got, honoured) = play_over_pty(game, seed);
    let want: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
    let have: Vec<String> = got.moves.iter().map(|m| m.san.to_string()).collect();
    assert_eq!(have, want, "{label}: moves");
    let mut clocks = 0;
    for (i, (m, ok)) in game.moves.iter().zip(honoured).enumerate() {
        if let (Some(clk), true) = (m.clk_ms, ok) {
            assert_eq!(
                got.moves[i].clk.map(|c| c.millis()),
                Some(clk / 1000 * 1000),
                "{label}: clock after ply {}",
                i + 1
            );
            clocks += 1;
        }
    }
    (want.len(), clocks)
}

#[test]
fn broadcast_games_through_the_serial_path() {
    let Some(dir) = shared_dir("pgn/clocks") else {
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
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
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
    let jobs = Arc::new(std::sync::Mutex::new(jobs));
    let started = Instant::now();
    // Lines run side by side: most of the time every one of them sleeps.
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let jobs = jobs.clone();
            std::thread::spawn(move || {
                let mut sums = (0usize, 0usize);
                loop {
                    let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let Some((label, game, seed)) = job else {
                        return sums;
                    };
                    let (m, c) = check(&game, seed, &label);
                    sums.0 += m;
                    sums.1 += c;
                }
            })
        })
        .collect();
    let (mut moves, mut clocks) = (0, 0);
    for w in workers {
        let (m, c) = w
            .join()
            .expect("a game came back different (see the panic above)");
        moves += m;
        clocks += c;
    }
    println!(
        "{total} games through pseudo-terminals in {:.0} s: {moves} moves and {clocks} clocks identical",
        started.elapsed().as_secs_f64()
    );
}
