//! `relay serve` reading emulated boards over pseudo-terminals (a separate `relay emulate`
//! process, as real boards would be): the games it stores and serves are the games played,
//! and a service killed with SIGKILL at random moments loses nothing a client saw and stores
//! nothing twice.

use super::service::{
    Emulator, Relay, Socket, get, get_json, postgres_database, postgres_url, sans, wait_until,
};
use super::temp_dir;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The bundled games the emulator plays, as SAN lists.
fn classics() -> Vec<Vec<String>> {
    let text = include_str!("../../relay/data/classics.pgn");
    relay_core::pgn::read_games(text)
        .into_iter()
        .map(|g| {
            g.expect("bundled game")
                .moves
                .iter()
                .map(|m| m.san.to_string())
                .collect()
        })
        .collect()
}

/// Every game of every round, by id.
fn all_games(r: &Relay) -> BTreeMap<i64, Value> {
    let mut out = BTreeMap::new();
    for t in get_json(&r.url("/api/tournaments"))
        .as_array()
        .into_iter()
        .flatten()
    {
        for round in t["rounds"].as_array().into_iter().flatten() {
            let id = round["id"].as_i64().expect("round id");
            for g in get_json(&r.url(&format!("/api/rounds/{id}")))["games"]
                .as_array()
                .into_iter()
                .flatten()
            {
                out.insert(g["id"].as_i64().expect("game id"), g.clone());
            }
        }
    }
    out
}

#[test]
fn clocks_from_lever_presses_after_the_move_reach_spectators_as_stored() {
    // At 4x the lever is pressed 60–175 ms after the piece is put down: after a 50 ms settle
    // time has judged the move, so the clock comes from the press, held by the feed for the
    // round's next change to carry (or sent alone a second later).
    let emu = Emulator::start(
        "serve-presses",
        &[
            "--boards", "2", "--speed", "4", "--noise", "0", "--seed", "3",
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let r = Relay::serve(
        &emu.dir,
        &["--db", &db, "--port", &ports, "--settle-ms", "50"],
    );
    let mut ws = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
    let mut heard: Clocks = HashMap::new();
    let (mut presses, mut carried) = (0, 0);
    let end = Instant::now() + Duration::from_secs(25);
    while Instant::now() < end {
        let Some(m) = ws.next(Duration::from_millis(200)) else {
            continue;
        };
        hear_clock(&mut heard, &m);
        presses += usize::from(m["type"] == "move_clock");
        carried += usize::from(ws.last_frame_carried);
    }
    // Presses wait at most a second for a change to carry them.
    std::thread::sleep(Duration::from_millis(1500));
    // Only presses now: a move heard this late may still wait for its own.
    while let Some(m) = ws.next(Duration::from_millis(300)) {
        if m["type"] == "move_clock" {
            hear_clock(&mut heard, &m);
        }
    }
    ws.close();
    assert!(
        presses >= 5,
        "only {presses} lever presses came after their moves"
    );
    assert!(carried > 0, "no press rode on a later change");
    let round = get_json(&r.url("/api/rounds/1"));
    let mut checked = 0;
    for g in round["games"].as_array().into_iter().flatten() {
        let gid = g["id"].as_i64().unwrap_or(0);
        for m in g["moves"].as_array().into_iter().flatten() {
            let ply = m["ply"].as_u64().unwrap_or(0);
            let Some(h) = heard.get(&(gid, ply)) else {
                continue;
            };
            assert_eq!(
                *h,
                m["clk_ms"].as_u64(),
                "game {gid} ply {ply}: the spectator's clock is not the stored one"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} moves checked");
}

/// Each move's clock (ms) by (game, ply), as a spectator heard it.
type Clocks = HashMap<(i64, u64), Option<u64>>;

/// Notes the clock a `move` or `move_clock` message gives its move.
fn hear_clock(heard: &mut Clocks, m: &Value) {
    let gid = m["game_id"].as_i64().unwrap_or(0);
    let (ply, clk) = match m["type"].as_str() {
        Some("move") => (m["move"]["ply"].as_u64(), m["move"]["clk_ms"].as_u64()),
        Some("move_clock") => (m["ply"].as_u64(), m["clk_ms"].as_u64()),
        _ => return,
    };
    if let Some(p) = ply {
        heard.insert((gid, p), clk);
    }
}

#[test]
fn a_round_played_on_emulated_boards_is_served_as_the_games_played() {
    let emu = Emulator::start(
        "serve-boards",
        &[
            "--boards",
            "3",
            "--speed",
            "20",
            "--hold-secs",
            "60",
            "--seed",
            "7",
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let r = Relay::serve(&emu.dir, &["--db", &db, "--port", &ports]);
    let mut ws = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
    let snap = ws.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(snap["type"], "snapshot");

    // Moves arrive over the socket as they are committed, in order.
    let msgs = ws.until(60, |m| m["type"] == "move" && m["move"]["ply"] == 4);
    let seqs: Vec<i64> = msgs
        .iter()
        .filter(|m| !["clock", "clocks", "eboard"].contains(&m["type"].as_str().unwrap_or("")))
        .filter_map(|m| m["seq"].as_i64())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "seq not increasing: {seqs:?}"
    );
    assert!(
        msgs.iter().any(|m| m["type"] == "clock"),
        "no running clock announced"
    );
    // A spectator follows on: the clock of every move it hears of (with the move, or from
    // its lever press, carried by a later change) must end as the store has it.
    let heard: Arc<Mutex<Clocks>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let listener = {
        let (heard, stop) = (heard.clone(), stop.clone());
        std::thread::spawn(move || {
            let note = |m: &Value| hear_clock(&mut heard.lock().expect("lock"), m);
            for m in &msgs {
                note(m);
            }
            while !stop.load(Ordering::Relaxed) {
                if let Some(m) = ws.next(Duration::from_millis(200)) {
                    note(&m);
                }
            }
            ws.close();
        })
    };

    // Each e-board plays its first game to the end, then the next game starts (next round).
    let games = wait_until(240, "every board's first game to end", || {
        let round = get_json(&r.url("/api/rounds/1"));
        let boards = get_json(&r.url("/api/eboards"));
        let moved_on = boards
            .as_array()
            .is_some_and(|b| b.len() == 3 && b.iter().all(|e| e["round_id"].as_i64() > Some(1)));
        moved_on.then(|| round["games"].as_array().cloned().unwrap_or_default())
    });
    assert_eq!(games.len(), 3);
    // Presses wait at most a second for a change to carry them.
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    listener.join().expect("listener");
    let heard = heard.lock().expect("lock").clone();
    for g in &games {
        let gid = g["id"].as_i64().unwrap_or(0);
        for m in g["moves"].as_array().into_iter().flatten() {
            let ply = m["ply"].as_u64().unwrap_or(0);
            if ply <= 4 && !heard.contains_key(&(gid, ply)) {
                continue; // played before the spectator came: in its snapshot, not heard
            }
            assert_eq!(
                heard.get(&(gid, ply)).copied().flatten(),
                m["clk_ms"].as_u64(),
                "game {gid} ply {ply}: the spectator's clock is not the stored one"
            );
        }
    }
    let known = classics();
    for g in &games {
        let played = sans(g);
        assert!(
            known.contains(&played),
            "board {} recorded a game that was not played: {played:?}\n{}",
            g["board_no"],
            r.log_text()
        );
        assert!(
            g["moves"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|m| m["clk_ms"].is_u64()),
            "a move without its clock: {g}"
        );
    }
    // The round PGN has the same games, by board number, with a clock after every move.
    let pgn = get(&r.url("/api/rounds/1/pgn")).text();
    let parsed: Vec<_> = relay_core::pgn::read_games(&pgn)
        .into_iter()
        .map(|g| g.expect("our own PGN reads back"))
        .collect();
    assert_eq!(parsed.len(), 3);
    for (i, (p, g)) in parsed.iter().zip(&games).enumerate() {
        assert_eq!(p.tags.get("Board"), Some((i + 1).to_string().as_str()));
        let s: Vec<String> = p.moves.iter().map(|m| m.san.to_string()).collect();
        assert_eq!(s, sans(g));
        assert!(p.moves.iter().all(|m| m.clk.is_some() && m.emt.is_some()));
    }
    let mut r = r;
    assert!(r.terminate(), "no clean stop:\n{}", r.log_text());

    // The black box: the stored raw messages of an e-board give its game again.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["replay", "--db", &db, "--serial", "00001"])
        .output()
        .expect("relay replay");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replayed = relay_core::pgn::read_games(&String::from_utf8_lossy(&out.stdout));
    let first: Vec<String> = replayed
        .first()
        .and_then(|g| g.as_ref().ok())
        .map(|g| g.moves.iter().map(|m| m.san.to_string()).collect())
        .unwrap_or_default();
    assert!(
        games.iter().any(|g| sans(g) == first),
        "the raw log of e-board 00001 replays to {first:?}, which is not a stored game"
    );
}

/// Two e-boards on two ports that both report serial 01025 (a repaired board, a clone, a
/// misconfigured Bluetooth adapter): both games are recorded, the second board under
/// `01025@<port>`, and the console's e-board list and the log name both ports.
#[test]
fn two_boards_reporting_the_same_serial_are_both_recorded_and_warned_about() {
    let dir = temp_dir("serve-same-serial-db");
    same_serial(
        "serve-same-serial",
        &format!("sqlite://{}/relay.db", dir.display()),
    );
}

#[test]
fn two_boards_reporting_the_same_serial_on_postgres() {
    let Some(url) = postgres_url("the same-serial test on PostgreSQL") else {
        return;
    };
    let db = postgres_database(&url, &format!("relay_same_serial_{}", std::process::id()));
    same_serial("serve-same-serial-pg", &db);
}

fn same_serial(name: &str, db: &str) {
    let emu = Emulator::start(
        name,
        &[
            "--boards",
            "2",
            "--serials",
            "1025,1025",
            "--speed",
            "20",
            "--noise",
            "0",
            "--seed",
            "5",
        ],
    );
    let r = Relay::serve(&emu.dir, &["--db", db, "--port", &emu.ports()]);
    let known = classics();
    let boards = wait_until(120, "both boards' games to have 10 moves", || {
        let boards = get_json(&r.url("/api/eboards")).as_array()?.clone();
        let games = all_games(&r);
        let played = |e: &Value| {
            e["game_id"]
                .as_i64()
                .and_then(|g| games.get(&g))
                .map_or(0, |g| sans(g).len())
        };
        (boards.len() == 2 && boards.iter().all(|e| played(e) >= 10)).then_some(boards)
    });
    let mut ids: Vec<&str> = boards.iter().filter_map(|e| e["serial"].as_str()).collect();
    ids.sort();
    assert_eq!(ids[0], "01025", "{boards:?}");
    assert!(ids[1].starts_with("01025@dgt-"), "{boards:?}");
    for e in &boards {
        let warning = e["warning"].as_str().unwrap_or("");
        assert!(
            warning.contains("links/dgt-1") && warning.contains("links/dgt-2"),
            "e-board {} does not warn about the other port: {e}",
            e["serial"]
        );
    }
    let games = all_games(&r);
    let mut ids = BTreeSet::new();
    for e in &boards {
        let gid = e["game_id"].as_i64().expect("game");
        assert!(ids.insert(gid), "both boards on one game: {boards:?}");
        let played = sans(&games[&gid]);
        assert!(
            known.iter().any(|k| k.starts_with(&played)),
            "e-board {} recorded moves that were not played: {played:?}",
            e["serial"]
        );
    }
    assert!(
        r.log_text()
            .contains("two e-boards report the same serial number"),
        "no warning in the log"
    );
}

/// What an HTTP client polling the service saw: (game, ply) → UCI.
type Seen = Arc<Mutex<BTreeMap<(i64, u64), String>>>;

fn poll(
    base: Arc<Mutex<String>>,
    seen: Seen,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let b = base.lock().expect("lock").clone();
            let agent = super::service::agent();
            let rounds: Vec<i64> = agent
                .get(&format!("{b}/api/tournaments"))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .and_then(|v| {
                    v.as_array().map(|ts| {
                        ts.iter()
                            .flat_map(|t| t["rounds"].as_array().cloned().unwrap_or_default())
                            .filter_map(|r| r["id"].as_i64())
                            .collect()
                    })
                })
                .unwrap_or_default();
            for id in rounds {
                let Some(v) = agent
                    .get(&format!("{b}/api/rounds/{id}"))
                    .call()
                    .ok()
                    .and_then(|mut r| r.body_mut().read_to_string().ok())
                    .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                else {
                    continue;
                };
                let mut s = seen.lock().expect("lock");
                for g in v["games"].as_array().into_iter().flatten() {
                    let gid = g["id"].as_i64().unwrap_or(0);
                    for m in g["moves"].as_array().into_iter().flatten() {
                        if let (Some(p), Some(u)) = (m["ply"].as_u64(), m["uci"].as_str()) {
                            s.insert((gid, p), u.to_string());
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(150));
        }
    })
}

/// What a WebSocket client following round 1 saw, reconnecting with `?since=` after each
/// restart: (game, ply) → UCI. Unlike the poller, it is told of moves as they are announced,
/// so a move announced before it was committed and then lost would show here.
fn follow_round(
    base: Arc<Mutex<String>>,
    seen: Seen,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut last_seq: Option<i64> = None;
        let mut connections = 0;
        while !stop.load(Ordering::Relaxed) {
            let b = base.lock().expect("lock").replacen("http://", "ws://", 1);
            let url = match last_seq {
                Some(n) => format!("{b}/api/rounds/1/ws?moves=all&since={n}"),
                None => format!("{b}/api/rounds/1/ws?moves=all"),
            };
            let Ok(mut ws) = Socket::try_connect(&url) else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            connections += 1;
            while !stop.load(Ordering::Relaxed) {
                // `None` is a quiet moment or a dropped connection; a dropped one fails the
                // next read too, and a quiet one is told apart by trying again.
                let Some(m) = ws.next(Duration::from_millis(300)) else {
                    if ws.is_closed() {
                        break;
                    }
                    continue;
                };
                let mut s = seen.lock().expect("lock");
                match m["type"].as_str() {
                    Some("snapshot") => {
                        for g in m["round"]["games"].as_array().into_iter().flatten() {
                            let gid = g["id"].as_i64().unwrap_or(0);
                            for mv in g["moves"].as_array().into_iter().flatten() {
                                if let (Some(p), Some(u)) = (mv["ply"].as_u64(), mv["uci"].as_str())
                                {
                                    s.insert((gid, p), u.to_string());
                                }
                            }
                        }
                    }
                    Some("move") => {
                        let gid = m["game_id"].as_i64().unwrap_or(0);
                        if let (Some(p), Some(u)) =
                            (m["move"]["ply"].as_u64(), m["move"]["uci"].as_str())
                        {
                            s.insert((gid, p), u.to_string());
                        }
                    }
                    Some("truncate") => {
                        let gid = m["game_id"].as_i64().unwrap_or(0);
                        let from = m["from_ply"].as_u64().unwrap_or(u64::MAX);
                        s.retain(|(g, p), _| *g != gid || *p < from);
                    }
                    _ => {}
                }
                if let Some(n) = m["seq"].as_i64() {
                    last_seq = Some(last_seq.map_or(n, |l| l.max(n)));
                }
            }
        }
        connections
    })
}

#[test]
fn killed_at_random_moments_the_service_loses_nothing_and_doubles_nothing() {
    let dir = temp_dir("serve-crash-db");
    killed_at_random_moments(
        "serve-crash",
        &format!("sqlite://{}/relay.db", dir.display()),
        &dir,
    );
}

#[test]
fn killed_at_random_moments_on_postgres_nothing_is_lost_or_doubled() {
    let Some(url) = postgres_url("the PostgreSQL crash test") else {
        return;
    };
    let db = postgres_database(&url, &format!("relay_crash_{}", std::process::id()));
    killed_at_random_moments("serve-crash-pg", &db, &temp_dir("serve-crash-pg-dir"));
}

/// Two relays on the same ports and the same PostgreSQL: one reads, the other waits. The one
/// reading is SIGKILLed [`kill_count`] times (`RELAY_KILLS`); each time the standby must be
/// reading every port within 5 s, a new standby is started, and in the end nothing is lost
/// or doubled and every clock is right.
#[test]
fn a_standby_takes_over_the_boards_when_the_reading_relay_is_killed() {
    let Some(url) = postgres_url("the standby take-over test") else {
        return;
    };
    let db = postgres_database(&url, &format!("relay_standby_{}", std::process::id()));
    killed_at_random_moments_with("serve-standby", &db, &temp_dir("serve-standby-dir"), true);
}

/// Whether a relay reads every port it wants (from its `/health`).
fn reads_all_ports(r: &Relay) -> bool {
    let h = get_json(&r.url("/health"));
    h["ports"]
        .as_array()
        .is_some_and(|p| !p.is_empty() && p.iter().all(|p| p["read_here"] == true))
}

/// The service reading 4 emulated boards into `db` is killed with SIGKILL [`kill_count`] times at random
/// moments and started again; a polling client and a WebSocket client watch throughout.
fn killed_at_random_moments(name: &str, db: &str, dir: &std::path::Path) {
    killed_at_random_moments_with(name, db, dir, false);
}

/// The kill test; with `standby`, a second relay waits on the same ports and takes over from
/// the killed one (which comes back as the next standby) instead of a restart.
fn killed_at_random_moments_with(name: &str, db: &str, dir: &std::path::Path, standby: bool) {
    let press_log = dir.join("presses.jsonl");
    let press_log_s = press_log.display().to_string();
    let emu = Emulator::start(
        name,
        &[
            "--press-log",
            &press_log_s,
            "--boards",
            "4",
            "--speed",
            "4",
            "--noise",
            "0",
            "--hold-secs",
            "16",
            "--seed",
            "11",
        ],
    );
    let ports = emu.ports();
    let args = ["--db", db, "--port", ports.as_str()];
    let mut r = Relay::serve(dir, &args);
    let mut waiting = None;
    if standby {
        wait_until(20, "the first relay to read every port", || {
            reads_all_ports(&r).then_some(())
        });
        waiting = Some(Relay::serve(dir, &args));
    }
    let mut takeovers = Vec::new();
    let base = Arc::new(Mutex::new(r.base.clone()));
    let seen: Seen = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let poller = poll(base.clone(), seen.clone(), stop.clone());
    let pushed: Seen = Arc::default();
    let follower = follow_round(base.clone(), pushed.clone(), stop.clone());

    // Random moments from the clock's nanoseconds; printed so a failure can be retraced.
    let mut state = Instant::now().elapsed().as_nanos() as u64 ^ u64::from(std::process::id());
    let mut next = move |lo: u64, hi: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lo + state % (hi - lo)
    };
    let mut logs = Vec::new();
    let mut kills = Vec::new();
    let mut told_at_last_kill = 0;
    std::thread::sleep(Duration::from_secs(6));
    for _ in 0..kill_count() {
        let wait = next(1500, 6000);
        std::thread::sleep(Duration::from_millis(wait));
        r.kill();
        let count = seen.lock().expect("lock").len();
        kills.push((wait, count));
        told_at_last_kill = pushed.lock().expect("lock").len();
        logs.push(r.log_text());
        if let Some(s) = waiting.take() {
            // The standby takes the ports by itself; the killed one comes back as the next
            // standby.
            let killed_at = Instant::now();
            wait_until(10, "the standby to read every port", || {
                reads_all_ports(&s).then_some(())
            });
            let took = killed_at.elapsed();
            assert!(
                took <= Duration::from_secs(5),
                "the standby took {took:?} to read the ports"
            );
            takeovers.push(took.as_millis());
            r = s;
            *base.lock().expect("lock") = r.base.clone();
            waiting = Some(Relay::serve(dir, &args));
            continue;
        }
        std::thread::sleep(Duration::from_millis(next(100, 1500)));
        r = Relay::serve(dir, &args);
        *base.lock().expect("lock") = r.base.clone();
    }
    if standby {
        eprintln!("standby take-overs (ms from SIGKILL to every port read): {takeovers:?}");
    }
    let at_last_kill = kills.last().map_or(0, |k| k.1);
    std::thread::sleep(Duration::from_secs(12));
    stop.store(true, Ordering::Relaxed);
    poller.join().expect("poller");
    let connections = follower.join().expect("WebSocket follower");
    let pushed = pushed.lock().expect("lock").clone();
    let seen = seen.lock().expect("lock").clone();
    let games = all_games(&r);
    let context = || {
        format!(
            "kills (ms waited, moves seen): {kills:?}\nlast log:\n{}",
            r.log_text()
        )
    };

    // Everything a client saw (polling, or told over the WebSocket) is stored, at the same
    // ply, once (a ply holds one move).
    assert!(
        connections > kill_count(),
        "the WebSocket client connected {connections} times for {} lives of the service",
        kill_count() + 1
    );
    for ((g, ply), uci) in seen.iter().chain(&pushed) {
        let stored = games
            .get(g)
            .and_then(|v| {
                v["moves"]
                    .as_array()
                    .and_then(|ms| ms.get((*ply - 1) as usize))
                    .cloned()
            })
            .unwrap_or(Value::Null);
        assert_eq!(
            stored["uci"].as_str(),
            Some(uci.as_str()),
            "game {g} ply {ply} was seen as {uci} but is stored as {stored}\n{}",
            context()
        );
    }
    // Every stored game is the start of a game the boards played: nothing doubled or skipped.
    let known = classics();
    let mut total = 0;
    for g in games.values() {
        let s = sans(g);
        let plies: Vec<u64> = g["moves"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["ply"].as_u64())
            .collect();
        assert_eq!(
            plies,
            (1..=s.len() as u64).collect::<Vec<_>>(),
            "plies not 1..n: {g}"
        );
        assert!(
            known.iter().any(|k| k.starts_with(&s)),
            "game {} is not a game that was played: {s:?}\n{}",
            g["id"],
            context()
        );
        total += s.len();
    }
    // Every clock stored is what the clock showed after that move's press (within the
    // display's second): a press the service did not see leaves its move without a clock,
    // never with another press's time.
    let truth = press_truth(&press_log);
    let (mut clocks, mut wrong, mut unknown) = (0, Vec::new(), 0);
    for g in games.values() {
        let s = sans(g);
        let serial = g["eboard"].as_str().unwrap_or("");
        let candidates: Vec<usize> = known
            .iter()
            .enumerate()
            .filter(|(i, k)| k.starts_with(&s) && truth.contains_key(&(serial.to_string(), *i, 1)))
            .map(|(i, _)| i)
            .collect();
        let [played] = candidates[..] else {
            continue;
        };
        for m in g["moves"].as_array().into_iter().flatten() {
            let ply = m["ply"].as_u64().unwrap_or(0);
            let Some(want) = truth.get(&(serial.to_string(), played, ply)) else {
                continue;
            };
            match m["clk_ms"].as_u64() {
                Some(got) => {
                    clocks += 1;
                    if got.abs_diff(*want) > 1_000 {
                        wrong.push(format!(
                            "game {} ply {ply}: {got} ms stored, the clock showed {want}",
                            g["id"]
                        ));
                    }
                }
                None => unknown += 1,
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {clocks} clocks wrong:\n{}\n{}",
        wrong.len(),
        wrong.join("\n"),
        context()
    );
    assert!(clocks >= 20, "only {clocks} clocks checked");
    // The games went on after the last restart.
    assert!(
        seen.len() > at_last_kill && total >= seen.len(),
        "no move after the last restart ({} seen, {at_last_kill} at the last kill)\n{}",
        seen.len(),
        context()
    );
    let distinct: BTreeSet<i64> = seen.keys().map(|k| k.0).collect();
    assert!(
        distinct.len() >= 4,
        "fewer than 4 games seen\n{}",
        context()
    );
    let _ = logs;
    assert!(
        pushed.len() > told_at_last_kill,
        "the WebSocket client was told of {} moves, {told_at_last_kill} by the last kill (it \
         follows round 1; the poller every round)",
        pushed.len()
    );
    eprintln!(
        "crash test on {db}: kills (ms waited, moves polled) {kills:?}; {} moves polled, {} told over \
         {connections} WebSocket connections, {total} stored in {} games; {clocks} clocks right, \
         {unknown} left out (presses not seen)",
        seen.len(),
        pushed.len(),
        games.len()
    );
    assert!(r.terminate(), "no clean stop:\n{}", r.log_text());
}

/// How many times the kill tests kill the service: 6, or `RELAY_KILLS` for a longer soak
/// (the README's `RELAY_KILLS=25 cargo test -p relay --test e2e killed_at_random`).
fn kill_count() -> usize {
    std::env::var("RELAY_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(6)
}

/// The emulator's press log: (serial, game index, ply) → what the mover's clock showed.
fn press_truth(path: &std::path::Path) -> HashMap<(String, usize, u64), u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            Some((
                (
                    v["serial"].as_str()?.to_string(),
                    v["game"].as_u64()? as usize,
                    v["ply"].as_u64()?,
                ),
                v["clk_ms"].as_u64()?,
            ))
        })
        .collect()
}

/// The relay starts while a game is being played: the e-board shows up without a game; the
/// clock running while the board stands says whose turn it is, and the first move made from
/// it says that player's colour, so the game is recorded from that position (marked as joined
/// late) with every move after it, no arbiter needed.
#[test]
fn a_game_joined_in_the_middle_is_recorded_from_the_board_by_the_running_clock() {
    let emu = Emulator::start(
        "serve-join",
        &[
            "--boards",
            "1",
            "--speed",
            "4",
            "--noise",
            "0",
            "--seed",
            "3",
            // A board whose memory holds nothing: the game cannot be read back from its
            // start (a board that remembers is recovered instead: serve_memory.rs).
            "--forgetful",
        ],
    );
    std::thread::sleep(Duration::from_secs(5));
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
            "arbiter-secret-1",
        ],
    );
    // The first bundled game (Légal's mate).
    let game = relay_core::pgn::read_games(include_str!("../../relay/data/classics.pgn"))
        .into_iter()
        .next()
        .expect("a game")
        .expect("bundled game");
    let placements: Vec<String> = (0..=game.moves.len())
        .map(|k| {
            use shakmaty::Position;
            game.position_at(k).board().board_fen().to_string()
        })
        .collect();
    let stored = wait_until(40, "moves after the joined position", || {
        let g = get_json(&r.url("/api/rounds/1"))["games"]
            .as_array()?
            .first()?
            .clone();
        (!g["moves"].as_array()?.is_empty()).then_some(g)
    });
    let start = stored["start_fen"]
        .as_str()
        .expect("a start fen: joined late");
    let ply = placements
        .iter()
        .position(|p| start.starts_with(p.as_str()))
        .unwrap_or_else(|| panic!("{start} is no position of the game"));
    assert!(ply >= 1, "joined at the start?");
    let turn = if ply % 2 == 0 { " w " } else { " b " };
    assert!(
        start.contains(turn),
        "{start}: the side to move at ply {ply}"
    );
    let expected: Vec<String> = game.moves[ply..]
        .iter()
        .map(|m| m.san.to_string())
        .collect();
    let got = sans(&stored);
    assert!(
        expected.starts_with(&got),
        "moves after joining {got:?} are not the game's {expected:?}"
    );
    let id = stored["id"].as_i64().expect("id");
    // The arbiter's record says so, and the arbiter's PGN.
    let auth = ("Authorization", "Bearer arbiter-secret-1");
    let answer = super::service::request("GET", &r.url(&format!("/api/games/{id}")), &[auth], None);
    let json: serde_json::Value = serde_json::from_str(&answer.text()).expect("json");
    assert_eq!(json["joined_late"], true, "{json}");
    let pgn = super::service::request(
        "GET",
        &r.url(&format!("/api/games/{id}/pgn")),
        &[auth],
        None,
    );
    assert!(pgn.text().contains("Joined late"), "{}", pgn.text());
    assert!(pgn.text().contains("[SetUp \"1\"]"), "{}", pgn.text());
    // Spectators get the game from its position without the arbiter's note.
    let public = super::service::request("GET", &r.url(&format!("/api/games/{id}/pgn")), &[], None);
    assert!(public.text().contains("[SetUp \"1\"]") && !public.text().contains("Joined late"));
}
