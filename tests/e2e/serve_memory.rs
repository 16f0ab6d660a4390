//! Nothing the board saw is lost: the moves made while no relay read the board come back
//! from the board's own memory (its EEPROM log, which the emulator keeps as a DGT board does),
//! with the clock each press left, and the arbiter's record says which were recovered.

use super::service::{Emulator, Relay, get_json, request, sans, wait_until};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

const TOKEN: &str = "arbiter-secret-1";

/// The longest of the bundled classics, as its own PGN file in `dir`, and its moves.
fn longest_classic(dir: &Path) -> (String, Vec<String>) {
    let text = include_str!("../../relay/data/classics.pgn");
    let chunks: Vec<String> = text
        .split("[Event ")
        .filter(|c| !c.trim().is_empty())
        .map(|c| format!("[Event {c}"))
        .collect();
    let (pgn, game) = chunks
        .iter()
        .filter_map(|c| {
            let g = relay_core::pgn::read_games(c).into_iter().next()?.ok()?;
            Some((c.clone(), g))
        })
        .max_by_key(|(_, g)| g.moves.len())
        .expect("a classic");
    let path = dir.join("game.pgn");
    std::fs::write(&path, pgn).expect("write pgn");
    let moves = game.moves.iter().map(|m| m.san.to_string()).collect();
    (path.display().to_string(), moves)
}

/// The first game of round 1.
fn first_game(r: &Relay) -> Option<Value> {
    get_json(&r.url("/api/rounds/1"))["games"]
        .as_array()?
        .first()
        .cloned()
}

/// Each ply's clock as the press left it in the first game of the one board `00001`.
fn truth(log: &Path) -> HashMap<u64, u64> {
    truth_by_serial(log)
        .into_iter()
        .filter(|((serial, _), _)| serial == "00001")
        .map(|((_, ply), clk)| (ply, clk))
        .collect()
}

fn arbiter_view(r: &Relay, id: i64) -> Value {
    let auth = ("Authorization", "Bearer arbiter-secret-1");
    let a = request("GET", &r.url(&format!("/api/games/{id}")), &[auth], None);
    serde_json::from_str(&a.text()).expect("game json")
}

#[test]
fn moves_made_while_the_relay_was_down_come_back_from_the_boards_memory() {
    let dir = super::temp_dir("serve-memory-pgn");
    let (pgn, want) = longest_classic(&dir);
    let press_log = dir.join("presses.jsonl");
    let press_s = press_log.display().to_string();
    let emu = Emulator::start(
        "serve-memory",
        &[
            "--boards",
            "1",
            "--speed",
            "6",
            "--noise",
            "0.15",
            "--seed",
            "4",
            "--pgn",
            &pgn,
            "--press-log",
            &press_s,
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let args = ["--db", &db, "--port", &ports, "--admin-token", TOKEN];
    let mut r = Relay::serve(&emu.dir, &args);
    // Recorded live up to ply 10 or so, then the relay dies.
    wait_until(90, "ten plies recorded", || {
        (sans(&first_game(&r)?).len() >= 10).then_some(())
    });
    r.kill();
    let before = {
        // Read straight from the file: what the killed relay had stored.
        let r2 = Relay::serve(
            &emu.dir,
            &["--db", &db, "--no-boards", "--admin-token", TOKEN],
        );
        let n = sans(&first_game(&r2).expect("the game")).len();
        drop(r2);
        n
    };
    // The board plays on, unread, for a stretch of plies.
    let down = Instant::now();
    std::thread::sleep(Duration::from_secs(25));
    let r = Relay::serve(&emu.dir, &args);
    let back = down.elapsed();
    // At once, before the next move: the moves of the gap.
    let recovered = wait_until(20, "the gap recovered", || {
        let g = first_game(&r)?;
        let id = g["id"].as_i64()?;
        let view = arbiter_view(&r, id);
        let stretch = view["recovered"].as_array()?.first()?.clone();
        Some(stretch)
    });
    let from = recovered["from_ply"].as_u64().expect("from");
    let to = recovered["to_ply"].as_u64().expect("to");
    assert_eq!(
        from as usize,
        before + 1,
        "the recovery starts right after what was stored: {recovered}"
    );
    assert!(
        to - from + 1 >= 5,
        "{back:?} down should have missed several plies: {recovered}\n{}",
        r.log_text()
    );
    // The game goes on live to its end; every move and clock is the game's.
    let g = wait_until(240, "the whole game", || {
        let g = first_game(&r)?;
        (sans(&g).len() >= want.len()).then_some(g)
    });
    assert_eq!(sans(&g), want, "the stored game is the game played");
    let truth = truth(&press_log);
    let (mut checked, mut missing) = (0, Vec::new());
    for m in g["moves"].as_array().expect("moves") {
        let ply = m["ply"].as_u64().expect("ply");
        let want = truth.get(&ply).copied();
        match (m["clk_ms"].as_u64(), want) {
            (Some(got), Some(want)) => {
                assert!(
                    got.abs_diff(want) <= 1_000,
                    "ply {ply}: {got} ms stored, the clock showed {want}\n{g}"
                );
                checked += 1;
            }
            (Some(got), None) => panic!("ply {ply}: a clock {got} nobody pressed\n{g}"),
            (None, _) => missing.push(ply),
        }
    }
    // A recovered move lacks its clock only when the board did not log it (a press too fast).
    let without = recovered["without_clock"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for ply in &missing {
        if (from..=to).contains(ply) {
            assert!(
                without.iter().any(|p| p.as_u64() == Some(*ply)),
                "recovered ply {ply} has no clock and the record does not say so: {recovered}"
            );
        }
    }
    assert!(checked + missing.len() == want.len() && checked >= want.len() - 3);
    // The arbiter's PGN says so where the recovered moves begin.
    let id = g["id"].as_i64().expect("id");
    let auth = ("Authorization", "Bearer arbiter-secret-1");
    let pgn = request(
        "GET",
        &r.url(&format!("/api/games/{id}/pgn")),
        &[auth],
        None,
    )
    .text();
    assert!(
        pgn.contains(&format!(
            "recovered from the board's memory, plies {from}–{to}"
        )),
        "{pgn}"
    );
    // The e-board's view (the console) says so too.
    let eboards = get_json(&r.url("/api/eboards"));
    let text = eboards.to_string();
    assert!(text.contains("recovered from the board's memory"), "{text}");
    println!(
        "stored {before} plies, down {back:?}, recovered plies {from}-{to} ({} without a clock), {checked} clocks equal to the presses",
        without.len()
    );
}

/// A game under way before any relay reads its board (relay started late, or a board played
/// on with no computer at all) is read from its first move, not joined in the middle.
#[test]
fn a_game_played_before_the_relay_started_is_read_from_its_start() {
    let dir = super::temp_dir("serve-memory-late-pgn");
    let (pgn, want) = longest_classic(&dir);
    let emu = Emulator::start(
        "serve-memory-late",
        &[
            "--boards", "1", "--speed", "6", "--noise", "0.15", "--seed", "5", "--pgn", &pgn,
        ],
    );
    // No relay for a while: the board records on its own.
    std::thread::sleep(Duration::from_secs(20));
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let r = Relay::serve(
        &emu.dir,
        &["--db", &db, "--port", &ports, "--admin-token", TOKEN],
    );
    let g = wait_until(20, "the game so far", || {
        let g = first_game(&r)?;
        (sans(&g).len() >= 3).then_some(g)
    });
    assert_eq!(
        g["start_fen"], "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "recorded from the start position: {g}"
    );
    let got = sans(&g);
    assert!(
        want.starts_with(&got),
        "{got:?} is not the start of {want:?}"
    );
    let id = g["id"].as_i64().expect("id");
    let view = arbiter_view(&r, id);
    assert_eq!(view["joined_late"], false, "{view}");
    let stretch = &view["recovered"][0];
    assert_eq!(stretch["from_ply"], 1, "{view}");
    assert!(stretch["to_ply"].as_u64().unwrap_or(0) >= 3, "{view}");
    // And it goes on live.
    wait_until(60, "moves after the recovered ones", || {
        let n = sans(&first_game(&r)?).len() as u64;
        (n > stretch["to_ply"].as_u64()? + 1).then_some(())
    });
}

/// python-chess reads the PGN `relay board-memory` writes: each game's SAN moves and the
/// `[%clk]` of each move, as JSON.
const PYTHON_CLOCKS: &str = r#"
import chess.pgn, json, sys
out = []
with open(sys.argv[1]) as f:
    while True:
        g = chess.pgn.read_game(f)
        if g is None:
            break
        sans, clocks, board = [], [], g.board()
        for node in g.mainline():
            sans.append(board.san(node.move))
            board.push(node.move)
            clocks.append(node.clock())
        out.append({"errors": [str(e) for e in g.errors], "sans": sans, "clocks": clocks})
print(json.dumps(out))
"#;

/// A board played on with nothing reading it; `relay board-memory` turns its memory into
/// PGN that an outside reader (python-chess) reads as the game played, with its clocks.
#[test]
fn board_memory_turns_a_game_played_without_a_computer_into_pgn() {
    let dir = super::temp_dir("board-memory-pgn");
    let (pgn, want) = longest_classic(&dir);
    let press_log = dir.join("presses.jsonl");
    let press_s = press_log.display().to_string();
    let emu = Emulator::start(
        "board-memory",
        &[
            "--boards",
            "1",
            "--speed",
            "10",
            "--noise",
            "0.15",
            "--seed",
            "6",
            "--pgn",
            &pgn,
            "--press-log",
            &press_s,
        ],
    );
    std::thread::sleep(Duration::from_secs(15));
    let port = emu.dir.join("links/dgt-1").display().to_string();
    let out = dir.join("memory.pgn");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["board-memory", &port, "--out"])
        .arg(&out)
        .output()
        .expect("relay board-memory");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).expect("pgn");
    assert!(text.contains("[%clk "), "{text}");
    let py = std::process::Command::new("python3")
        .args(["-c", "import chess"])
        .output();
    if !py.is_ok_and(|o| o.status.success()) {
        if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!("python3 with the chess package is required (RELAY_REQUIRE_ALL=1)");
        }
        eprintln!("python-chess not found: the check of relay board-memory's PGN is skipped");
        return;
    }
    let o = std::process::Command::new("python3")
        .args(["-c", PYTHON_CLOCKS])
        .arg(&out)
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let games: Value = serde_json::from_slice(&o.stdout).expect("json");
    let game = games.as_array().and_then(|g| g.last()).expect("a game");
    assert_eq!(game["errors"], serde_json::json!([]), "{text}");
    let sans: Vec<String> = game["sans"]
        .as_array()
        .expect("sans")
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    assert!(sans.len() >= 3, "{text}");
    assert!(
        want.starts_with(&sans),
        "{sans:?} is not the start of {want:?}"
    );
    let truth = truth(&press_log);
    for (i, c) in game["clocks"]
        .as_array()
        .expect("clocks")
        .iter()
        .enumerate()
    {
        let ply = i as u64 + 1;
        if let Some(secs) = c.as_f64() {
            let want = truth.get(&ply).copied().expect("a press for every clock");
            assert!(
                ((secs * 1000.0) as u64).abs_diff(want) <= 1_000,
                "ply {ply}: {secs} s in the PGN, the clock showed {want} ms"
            );
        }
    }
    println!(
        "relay board-memory: {} plies, read by python-chess with their clocks",
        sans.len()
    );
}

/// A game that ends without mate, its board then set up and its clock set for the next game:
/// the finished game keeps the clocks it ended with, gets no correction, and is no longer
/// live once the board began the next game (its result awaits the arbiter).
#[test]
fn the_end_of_a_game_is_read_right_when_its_board_is_reset_for_the_next() {
    let dir = super::temp_dir("serve-game-end-pgn");
    let pgn = dir.join("short.pgn");
    std::fs::write(
        &pgn,
        "[Event \"Short\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 1-0\n",
    )
    .expect("pgn");
    let pgn = pgn.display().to_string();
    let emu = Emulator::start(
        "serve-game-end",
        &[
            "--boards", "1", "--speed", "10", "--noise", "0", "--seed", "2", "--pgn", &pgn,
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let r = Relay::serve(
        &emu.dir,
        &["--db", &db, "--port", &ports, "--admin-token", TOKEN],
    );
    // The second game begins on the board (round 2).
    wait_until(120, "the next game on the board", || {
        let a = super::service::get(&r.url("/api/rounds/2"));
        if a.status != 200 {
            return None;
        }
        let g = a.json()["games"].as_array()?.first()?.clone();
        (!sans(&g).is_empty()).then_some(())
    });
    let g = first_game(&r).expect("the first game");
    assert_eq!(sans(&g).len(), 8, "{g}");
    assert_eq!(g["status"], "finished", "no longer live: {g}");
    assert_eq!(g["result"], "*", "the result is the arbiter's to give: {g}");
    let clock = &g["clock"];
    assert!(
        clock["white_ms"].as_u64() != Some(5_400_000)
            && clock["black_ms"].as_u64() != Some(5_400_000),
        "the finished game shows the next game's clock: {g}"
    );
    let view = arbiter_view(&r, g["id"].as_i64().expect("id"));
    assert_eq!(view["clock_adjustments"], serde_json::json!([]), "{view}");
    let auth = ("Authorization", "Bearer arbiter-secret-1");
    let id = g["id"].as_i64().expect("id");
    let text = request(
        "GET",
        &r.url(&format!("/api/games/{id}/pgn")),
        &[auth],
        None,
    )
    .text();
    assert!(!text.contains("Clock corrected"), "{text}");
}

/// Each ply's clock by board serial in each board's first game, from the emulator's press
/// log.
fn truth_by_serial(log: &Path) -> HashMap<(String, u64), u64> {
    let mut out = HashMap::new();
    for v in std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["game"] == 0)
    {
        if let (Some(serial), Some(ply), Some(clk)) = (
            v["serial"].as_str(),
            v["ply"].as_u64(),
            v["clk_ms"].as_u64(),
        ) {
            out.entry((serial.to_string(), ply)).or_insert(clk);
        }
    }
    out
}

/// Three serial boards on one bus line, the relay down for a stretch: each board's first
/// change poll after the restart brings what it logged meanwhile, and every game goes on
/// with all its moves and clocks.
#[test]
fn on_a_bus_line_every_boards_moves_made_while_the_relay_was_down_come_back() {
    let dir = super::temp_dir("serve-memory-bus-pgn");
    let (pgn, want) = longest_classic(&dir);
    let press_log = dir.join("presses.jsonl");
    let press_s = press_log.display().to_string();
    let emu = Emulator::start(
        "serve-memory-bus",
        &[
            "--bus",
            "--boards",
            "3",
            "--speed",
            "6",
            "--noise",
            "0.15",
            "--seed",
            "7",
            "--pgn",
            &pgn,
            "--press-log",
            &press_s,
            // The boards stand set up for 5 s (wall) while the relay finds them on the line.
            "--hold-secs",
            "30",
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let args = [
        "--db",
        &db,
        "--port",
        &ports,
        "--admin-token",
        TOKEN,
        "--bus",
    ];
    let games = |r: &Relay| -> Option<Vec<Value>> {
        let gs = get_json(&r.url("/api/rounds/1"))["games"]
            .as_array()?
            .clone();
        (gs.len() == 3).then_some(gs)
    };
    let mut r = Relay::serve(&emu.dir, &args);
    // Which e-board plays which game (a game's e-board moves on with its next game).
    let serial_of: HashMap<i64, String> = wait_until(90, "eight plies on every board", || {
        let gs = games(&r)?;
        gs.iter().all(|g| sans(g).len() >= 8).then(|| {
            gs.iter()
                .map(|g| {
                    let id = g["id"].as_i64().unwrap_or(0);
                    (id, g["eboard"].as_str().unwrap_or("").to_string())
                })
                .collect()
        })
    });
    r.kill();
    let stored: HashMap<i64, usize> = {
        let r2 = Relay::serve(
            &emu.dir,
            &["--db", &db, "--no-boards", "--admin-token", TOKEN],
        );
        games(&r2)
            .expect("three games")
            .iter()
            .map(|g| (g["id"].as_i64().unwrap_or(0), sans(g).len()))
            .collect()
    };
    std::thread::sleep(Duration::from_secs(25));
    let r = Relay::serve(&emu.dir, &args);
    let end = Instant::now() + Duration::from_secs(240);
    let all = loop {
        let gs = games(&r).unwrap_or_default();
        if gs.len() == 3 && gs.iter().all(|g| sans(g).len() >= want.len()) {
            break gs;
        }
        if Instant::now() > end {
            let lens: Vec<(usize, Option<usize>, Value, Vec<String>)> = gs
                .iter()
                .map(|g| {
                    let s = sans(g);
                    let first_off = s.iter().zip(&want).position(|(a, b)| a != b);
                    (s.len(), first_off, g["start_fen"].clone(), s.clone())
                })
                .collect();
            let log = r.log_text();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            panic!(
                "the games stopped at {lens:?} plies of {} ({:?}):\n{}\n{}",
                want.len(),
                &want[want.len() - 2..],
                get_json(&r.url("/api/eboards")),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let truth = truth_by_serial(&press_log);
    for g in &all {
        let serial = serial_of[&g["id"].as_i64().expect("id")].clone();
        assert_eq!(sans(g), want, "board {serial}");
        let view = arbiter_view(&r, g["id"].as_i64().expect("id"));
        let stretch = &view["recovered"][0];
        let from = stretch["from_ply"].as_u64().unwrap_or(0) as usize;
        let to = stretch["to_ply"].as_u64().unwrap_or(0) as usize;
        // Every clock, recovered or read live, is the one the press left.
        for m in g["moves"].as_array().expect("moves") {
            let ply = m["ply"].as_u64().expect("ply");
            if let Some(got) = m["clk_ms"].as_u64() {
                let want = truth.get(&(serial.clone(), ply)).copied().expect("a press");
                assert!(
                    got.abs_diff(want) <= 1_000,
                    "board {serial} ply {ply} (recovered {from}-{to}): {got} vs {want}"
                );
            }
        }
        assert_eq!(
            from,
            stored[&g["id"].as_i64().unwrap_or(0)] + 1,
            "board {serial}: {view}\n{}",
            r.log_text()
        );
        assert!(
            to >= from + 3,
            "board {serial}: a stretch of plies missed: {view}"
        );
        println!(
            "bus board {serial}: stored {} plies, recovered {from}-{to}",
            stored[&g["id"].as_i64().unwrap_or(0)]
        );
    }
}
