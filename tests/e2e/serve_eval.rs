//! Evaluations computed once and shared, through the real binary and Debian's Stockfish: a
//! delayed round's spectator never hears an evaluation before its position; a worker killed
//! in the middle of its analysis loses nothing (another evaluates its position); a worker
//! without the token gets nothing. Without Stockfish these tests skip with a notice
//! (`RELAY_REQUIRE_ALL=1` makes that a failure).

use super::service::{Emulator, Relay, Socket, get_json, request};
use super::temp_dir;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const STOCKFISH: &str = "/usr/games/stockfish";
const TOKEN: &str = "arbiter-secret-1";
const AUTH: (&str, &str) = ("Authorization", "Bearer arbiter-secret-1");
const EVAL_TOKEN: &str = "worker-secret-1";

fn stockfish_installed(test: &str) -> bool {
    if std::path::Path::new(STOCKFISH).is_file() {
        return true;
    }
    assert!(
        std::env::var_os("RELAY_REQUIRE_ALL").is_none(),
        "{test}: RELAY_REQUIRE_ALL is set and {STOCKFISH} is missing (apt-get install stockfish)"
    );
    println!("skipped {test}: {STOCKFISH} is missing (apt-get install stockfish)");
    false
}

/// The position part of a FEN (what an evaluation is kept by).
fn key(fen: &str) -> String {
    fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_delayed_rounds_spectator_never_hears_an_evaluation_before_its_position() {
    if !stockfish_installed("delayed evaluations") {
        return;
    }
    let emu = Emulator::start(
        "serve-eval-delay",
        &[
            "--boards", "4", "--speed", "10", "--noise", "0", "--seed", "5",
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let r = Relay::serve(
        &emu.dir,
        &[
            "--db",
            &db,
            "--port",
            &ports,
            "--admin-token",
            TOKEN,
            "--delay",
            "6",
            "--eval-workers",
            "1",
            "--eval-movetime-ms",
            "150",
        ],
    );
    // A spectator records everything: when each move and each evaluation came.
    let mut ws = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
    let start = Instant::now();
    let mut heard: HashMap<(i64, u64), Instant> = HashMap::new();
    let mut early = Vec::new();
    let mut evals: Vec<(i64, u64, Duration)> = Vec::new();
    let mut frames = 0;
    while start.elapsed() < Duration::from_secs(40) {
        let Some(m) = ws.next(Duration::from_millis(200)) else {
            continue;
        };
        let now = Instant::now();
        match m["type"].as_str() {
            Some("snapshot") => {
                for g in m["round"]["games"].as_array().into_iter().flatten() {
                    let id = g["id"].as_i64().unwrap_or(0);
                    for mv in g["moves"].as_array().into_iter().flatten() {
                        heard.insert((id, mv["ply"].as_u64().unwrap_or(0)), now);
                    }
                }
            }
            Some("move") => {
                let id = m["game_id"].as_i64().unwrap_or(0);
                heard.insert((id, m["move"]["ply"].as_u64().unwrap_or(0)), now);
            }
            Some("eval") => {
                frames += 1;
                for e in m["evals"].as_array().into_iter().flatten() {
                    let at = (
                        e["game_id"].as_i64().unwrap_or(0),
                        e["ply"].as_u64().unwrap_or(0),
                    );
                    assert!(e["depth"].as_u64().unwrap_or(0) > 0, "{e}");
                    assert!(e["cp"].is_i64() != e["mate"].is_i64(), "{e}");
                    match heard.get(&at) {
                        Some(t) => evals.push((at.0, at.1, now - *t)),
                        None => early.push(e.clone()),
                    }
                }
            }
            _ => {}
        }
    }
    ws.close();
    assert!(
        early.is_empty(),
        "evaluations before their positions reached the spectator: {early:?}"
    );
    assert!(
        evals.len() >= 10,
        "only {} evaluations reached the delayed spectator in 40 s (log:\n{})",
        evals.len(),
        r.log_text()
    );
    let mut lags: Vec<Duration> = evals.iter().map(|e| e.2).collect();
    lags.sort();
    println!(
        "delayed spectator: {} evaluations in {frames} frames; after their move: median {:?}, max {:?}",
        evals.len(),
        lags[lags.len() / 2],
        lags[lags.len() - 1]
    );
    // What the public reads is what it has seen: no evaluation of a position it does not
    // have, and the evaluations of the moves it has, as the arbiters' live view has them.
    let public = get_json(&r.url("/api/rounds/1"));
    let live = request("GET", &r.url("/api/rounds/1"), &[AUTH], None).json();
    let live_evals: HashMap<(i64, u64), Value> = live["games"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| {
            let id = g["id"].as_i64().unwrap_or(0);
            g["moves"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |m| ((id, m["ply"].as_u64().unwrap_or(0)), m["eval"].clone()))
        })
        .collect();
    let mut public_plies = 0;
    for g in public["games"].as_array().into_iter().flatten() {
        let id = g["id"].as_i64().unwrap_or(0);
        for m in g["moves"].as_array().into_iter().flatten() {
            let at = (id, m["ply"].as_u64().unwrap_or(0));
            public_plies += 1;
            if !m["eval"].is_null() {
                assert_eq!(
                    Some(&m["eval"]),
                    live_evals.get(&at),
                    "game {id} ply {}",
                    at.1
                );
            }
        }
    }
    let live_plies = live_evals.len();
    assert!(
        live_plies > public_plies,
        "the delay hides nothing: {live_plies} live plies, {public_plies} public"
    );
}

/// A UCI engine that takes positions and never answers: a worker stuck in its analysis. It
/// writes each position it gets to `seen`.
fn stuck_engine(dir: &std::path::Path, seen: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("stuck-engine.sh");
    let script = format!(
        "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    uci) echo 'id name Stuck'; echo uciok;;\n    isready) echo readyok;;\n    'position fen '*) echo \"${{line#position fen }}\" >> '{}';;\n    quit) exit 0;;\n  esac\ndone\n",
        seen.display()
    );
    std::fs::write(&path, script).expect("engine script");
    let mut perm = std::fs::metadata(&path).expect("script").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&path, perm).expect("chmod");
    path
}

fn eval_worker(r: &Relay, token: &str, engine: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .args([
            "eval-worker",
            "--server",
            &r.base,
            "--token",
            token,
            "--engine",
            engine,
        ])
        .env("RELAY_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start relay eval-worker")
}

#[test]
fn a_worker_killed_mid_analysis_loses_nothing_and_one_without_the_token_gets_nothing() {
    if !stockfish_installed("killed worker") {
        return;
    }
    let dir = temp_dir("serve-eval-killed");
    let db = format!("sqlite://{}/relay.db", dir.display());
    let none = format!("{}/no-such-port-*", dir.display());
    let r = Relay::serve(
        &dir,
        &[
            "--db",
            &db,
            "--port",
            &none,
            "--admin-token",
            TOKEN,
            "--eval-token",
            EVAL_TOKEN,
            "--eval-movetime-ms",
            "100",
        ],
    );
    // Without the token, or with another, a worker gets no position.
    let no = request("POST", &r.url("/api/eval/next?wait_secs=1"), &[], None);
    assert_eq!(no.status, 401, "{}", no.text());
    let wrong = request(
        "POST",
        &r.url("/api/eval/next?wait_secs=1"),
        &[("Authorization", "Bearer not-the-token")],
        None,
    );
    assert_eq!(wrong.status, 403, "{}", wrong.text());
    assert!(!wrong.text().contains("fen"), "{}", wrong.text());

    // A game of 45 moves goes in whole (an arbiter's upload): 89 positions to evaluate.
    let pairings = json!([{"board_no": 1, "white": {"name": "Anderssen, Adolf"}, "black": {"name": "Dufresne, Jean"}}]);
    let put = request(
        "PUT",
        &r.url("/api/rounds/1/pairings"),
        &[AUTH, ("Content-Type", "application/json")],
        Some(pairings.to_string().as_bytes()),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    let game = get_json(&r.url("/api/rounds/1"))["games"][0]["id"]
        .as_i64()
        .expect("the game");
    let pgn = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. b4 Bxb4 5. c3 Ba5 6. d4 exd4 7. O-O d3 \
        8. Qb3 Qf6 9. e5 Qg6 10. Re1 Nge7 11. Ba3 b5 12. Qxb5 Rb8 13. Qa4 Bb6 14. Nbd2 Bb7 \
        15. Ne4 Qf5 16. Bxd3 Qh5 17. Nf6+ gxf6 18. exf6 Rg8 19. Rad1 Qxf3 20. Rxe7+ Nxe7 \
        21. Qxd7+ Kxd7 22. Bf5+ Ke8 23. Bd7+ Kf8 24. Bxe7# 1-0";
    // The public sees the round 4 s late: no worker learns a position before then.
    let delay = request(
        "PATCH",
        &r.url("/api/tournaments/1"),
        &[AUTH, ("Content-Type", "application/json")],
        Some(br#"{"delay_secs": 4}"#),
    );
    assert_eq!(delay.status, 200, "{}", delay.text());
    let up = request(
        "PUT",
        &r.url(&format!("/api/games/{game}/pgn")),
        &[AUTH],
        Some(pgn.as_bytes()),
    );
    assert_eq!(up.status, 200, "{}", up.text());
    let uploaded = Instant::now();
    let worker = ("Authorization", "Bearer worker-secret-1");
    let early = request(
        "POST",
        &r.url("/api/eval/next?wait_secs=2"),
        &[worker],
        None,
    );
    assert_eq!(
        early.status,
        204,
        "a position went out before it was public: {}",
        early.text()
    );
    let first = request(
        "POST",
        &r.url("/api/eval/next?wait_secs=10"),
        &[worker],
        None,
    );
    assert_eq!(first.status, 200, "{}", first.text());
    assert!(
        uploaded.elapsed() >= Duration::from_millis(3900),
        "handed out {:?} after the upload, before the 4 s delay",
        uploaded.elapsed()
    );
    // That lease is left to run out too (the first position goes to B later).
    let moves = get_json(&r.url(&format!("/api/games/{game}")))["moves"]
        .as_array()
        .cloned()
        .expect("moves");
    assert_eq!(moves.len(), 47);

    // Worker A takes a position and is stuck on it; it is killed.
    let seen = dir.join("stuck-seen");
    let stuck = stuck_engine(&dir, &seen);
    let mut a = eval_worker(&r, EVAL_TOKEN, &stuck.display().to_string());
    let taken = super::service::wait_until(20, "worker A to take a position", || {
        std::fs::read_to_string(&seen)
            .ok()
            .filter(|t| !t.trim().is_empty())
    });
    let a_fen = taken.lines().next().unwrap_or("").trim().to_string();
    let _ = a.kill();
    let _ = a.wait();
    // Worker B, with a real engine, evaluates everything, A's position too.
    let mut b = eval_worker(&r, EVAL_TOKEN, STOCKFISH);
    let positions: HashSet<String> = moves
        .iter()
        .filter(|m| !m["san"].as_str().unwrap_or("").ends_with('#'))
        .map(|m| key(m["fen"].as_str().unwrap_or("")))
        .collect();
    let start = Instant::now();
    let evaluated = super::service::wait_until(90, "every position evaluated", || {
        let g = get_json(&r.url(&format!("/api/games/{game}")));
        let done: HashMap<String, Value> = g["moves"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| !m["eval"].is_null())
            .map(|m| (key(m["fen"].as_str().unwrap_or("")), m["eval"].clone()))
            .collect();
        positions
            .iter()
            .all(|p| done.contains_key(p))
            .then_some(done)
    });
    let _ = b.kill();
    let _ = b.wait();
    println!(
        "{} positions evaluated by worker B in {:?} after A was killed",
        positions.len(),
        start.elapsed()
    );
    let a_eval = evaluated
        .get(&key(&a_fen))
        .unwrap_or_else(|| panic!("A's position {a_fen} was not evaluated"));
    assert!(
        a_eval["engine"]
            .as_str()
            .unwrap_or("")
            .contains("Stockfish"),
        "{a_eval}"
    );
    // The mate on the board is the game's end: nothing for an engine.
    assert!(moves.last().is_some_and(|m| m["eval"].is_null()));
    // An answer for a position nobody played is refused.
    let stranger = request(
        "POST",
        &r.url("/api/eval/answer"),
        &[
            ("Authorization", "Bearer worker-secret-1"),
            ("Content-Type", "application/json"),
        ],
        Some(
            json!({"fen": "8/8/8/8/8/8/8/K6k w - - 0 1", "cp": 0, "depth": 30, "engine": "x"})
                .to_string()
                .as_bytes(),
        ),
    );
    assert_eq!(stranger.status, 409, "{}", stranger.text());
}

/// A relay with a local worker and nothing to evaluate stops cleanly: the worker is inside
/// its wait for a position when the service's runtime ends, and must see the stop rather
/// than panic on the ended runtime.
#[test]
fn a_local_worker_waiting_for_a_position_lets_the_service_stop_cleanly() {
    if !stockfish_installed("local worker at stop") {
        return;
    }
    let dir = temp_dir("serve-eval-stop");
    let db = format!("sqlite://{}/relay.db", dir.display());
    for attempt in 0..3 {
        let mut r = Relay::serve(
            &dir,
            &["--db", &db, "--admin-token", TOKEN, "--eval-workers", "1"],
        );
        super::service::wait_until(20, "the local worker's engine", || {
            r.log_text()
                .contains("evaluation worker ready")
                .then_some(())
        });
        // Somewhere inside the worker's one-second wait for a position.
        std::thread::sleep(Duration::from_millis(300 + 200 * attempt));
        let started = Instant::now();
        assert!(r.terminate(), "no clean exit:\n{}", r.log_text());
        // The worker's thread may outlive `main` by a moment: give its message time to land.
        std::thread::sleep(Duration::from_millis(200));
        let log = r.log_text();
        assert!(!log.contains("panicked"), "a panic at stop:\n{log}");
        println!(
            "stop {attempt}: {:?} from SIGTERM to exit",
            started.elapsed()
        );
    }
}
