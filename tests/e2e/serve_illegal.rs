//! Illegal moves through the whole product: `relay emulate --illegal` has the players of every
//! board complete illegal moves (a piece moved as it cannot, the own king left in check, a
//! press without a move, a second one by the same player) and the arbiter put them right;
//! `relay serve` reads the boards (one board a line, and a chain of boards on one bus line) and
//! puts each on the game's record, as the emulator's own log says it happened, while the
//! games' moves are exactly the games'.

use super::service::{Emulator, Relay, get_json, request, wait_until};
use serde_json::Value;
use std::collections::HashMap;

const TOKEN: &str = "arbiter-secret-illegal";

/// The emulator's log of its illegal moves: (serial, game index) → [(ply, color, kind, uci)].
type Truth = HashMap<(String, u64), Vec<(u64, String, String, Option<String>)>>;

fn truth(log: &std::path::Path) -> Truth {
    let mut out: Truth = HashMap::new();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(i) = v.get("illegal") else { continue };
        let key = (
            v["serial"].as_str().unwrap_or("").to_string(),
            v["game"].as_u64().unwrap_or(0),
        );
        out.entry(key).or_default().push((
            i["ply"].as_u64().unwrap_or(0),
            i["color"].as_str().unwrap_or("").to_string(),
            i["kind"].as_str().unwrap_or("").to_string(),
            i["uci"].as_str().map(str::to_string),
        ));
    }
    out
}

/// The kind relay names for the kind the emulator played.
fn recorded_kind(k: &str) -> &'static str {
    match k {
        "king_in_check" => "king_in_check",
        "press_without_move" => "press_without_move",
        _ => "move_not_allowed",
    }
}

fn run(name: &str, bus: bool) {
    let dir = boards::testdata::temp_dir(name);
    let log = dir.join("presses.jsonl");
    let log_s = log.display().to_string();
    let start = dir.join("start");
    let start_s = start.display().to_string();
    let mut args = vec![
        "--boards",
        "3",
        "--speed",
        "2",
        "--noise",
        "0.1",
        "--seed",
        "5",
        "--press-log",
        &log_s,
        "--start-file",
        &start_s,
        "--illegal",
        "3,6:press,7:check",
    ];
    if bus {
        args.push("--bus");
    }
    let emu = Emulator::start(name, &args);
    let db = format!("sqlite://{}/relay.db", dir.display());
    let ports = emu.ports();
    let mut serve = vec!["--db", &db, "--port", &ports, "--admin-token", TOKEN];
    if bus {
        serve.push("--bus");
    }
    let r = Relay::serve(&dir, &serve);
    wait_until(30, "every e-board read", || {
        let boards = get_json(&r.url("/api/eboards"));
        (boards.as_array()?.len() == 3).then_some(())
    });
    std::fs::write(&start, b"go").expect("start the games");
    // Each board's first game played past its last illegal move.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(150);
    let games = loop {
        let round = get_json(&r.url("/api/rounds/1"));
        let games = round["games"].as_array().cloned().unwrap_or_default();
        let done = games.len() == 3
            && games.iter().all(|g| {
                g["moves"].as_array().is_some_and(|m| m.len() >= 9) || g["status"] == "finished"
            });
        if done {
            break games;
        }
        if std::time::Instant::now() > deadline {
            let plies: Vec<usize> = games
                .iter()
                .map(|g| g["moves"].as_array().map_or(0, Vec::len))
                .collect();
            let boards = get_json(&r.url("/api/eboards"));
            panic!(
                "the first games did not get past ply 8: plies {plies:?}\ne-boards {boards}\n{}",
                r.log_text()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    let truth = truth(&log);
    let classics = relay_core::pgn::read_games(include_str!("../../relay/data/classics.pgn"));
    let auth = format!("Bearer {TOKEN}");
    let mut checked = 0;
    for g in &games {
        let serial = g["eboard"]
            .as_str()
            .expect("the game's e-board")
            .to_string();
        // The first game of board n (serial 0000n) is the n-th game of the file.
        let n: u64 = serial.parse().expect("a numbered serial");
        let index = (n - 1) % classics.len() as u64;
        let want = truth
            .get(&(serial.clone(), index))
            .cloned()
            .unwrap_or_default();
        assert!(
            !want.is_empty(),
            "the emulator logged no illegal move for {serial}"
        );
        let id = g["id"].as_i64().expect("id");
        let record: Value = serde_json::from_str(
            &request(
                "GET",
                &r.url(&format!("/api/games/{id}/record")),
                &[("Authorization", &auth)],
                None,
            )
            .text(),
        )
        .expect("record");
        let got: Vec<(u64, String, String, Option<String>)> = record["illegal_moves"]
            .as_array()
            .expect("illegal moves")
            .iter()
            .map(|i| {
                (
                    i["ply"].as_u64().unwrap_or(0),
                    i["color"].as_str().unwrap_or("").to_string(),
                    i["kind"].as_str().unwrap_or("").to_string(),
                    i["uci"].as_str().map(str::to_string),
                )
            })
            .collect();
        let want: Vec<(u64, String, String, Option<String>)> = want
            .into_iter()
            .map(|(p, c, k, u)| (p, c, recorded_kind(&k).to_string(), u))
            .collect();
        assert_eq!(got, want, "board {serial}: {record}");
        // The second illegal move of the same player (White's at plies 3 and 7) has its
        // prescribed result.
        assert_eq!(record["illegal_moves"][2]["count"], 2, "{record}");
        assert_eq!(record["illegal_moves"][2]["result"], "0-1", "{record}");
        // The game is the game.
        let game = classics[index as usize].as_ref().expect("classic");
        let sans: Vec<String> = g["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|m| m["san"].as_str().unwrap_or("").to_string())
            .collect();
        let expected: Vec<String> = game.moves.iter().map(|m| m.san.to_string()).collect();
        assert!(expected.starts_with(&sans), "board {serial}: {sans:?}");
        checked += got.len();
    }
    println!(
        "{}: {checked} illegal moves on 3 boards recorded as played",
        if bus { "bus" } else { "single boards" }
    );
    drop(emu);
}

#[test]
fn illegal_moves_from_single_boards_reach_the_record_as_played() {
    run("serve-illegal", false);
}

#[test]
fn illegal_moves_from_a_bus_reach_the_record_as_played() {
    run("serve-illegal-bus", true);
}
