//! Several relays on one PostgreSQL: one reading the boards, one serving only clients
//! (`--no-boards`), each a real process. What one commits reaches the other's spectators once
//! and in order, also across a lost database connection, and arbiters may act on either.

use super::service::{
    Emulator, Relay, Socket, get, get_json, postgres_database, postgres_url, request, wait_until,
};
use super::temp_dir;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TOKEN: &str = "cluster-secret";

/// Every change message a WebSocket client of round 1 gets, in order: (seq, type, game, ply,
/// uci), with the snapshot's change number first.
type Log = Arc<Mutex<Vec<(i64, String, i64, u64, String)>>>;

/// Move messages that came with a running clock.
type Clocked = Arc<std::sync::atomic::AtomicUsize>;

/// The moves a client was told, by (game, ply).
fn moves(log: &[(i64, String, i64, u64, String)]) -> BTreeMap<(i64, u64), String> {
    let mut m = BTreeMap::new();
    for (_, kind, game, ply, uci) in log {
        if kind == "move" {
            m.insert((*game, *ply), uci.clone());
        }
    }
    m
}

fn listen(
    base: String,
    log: Log,
    clocked: Clocked,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut ws = Socket::connect(&format!(
            "{}/api/rounds/1/ws?moves=all",
            base.replacen("http://", "ws://", 1)
        ));
        while !stop.load(Ordering::Relaxed) {
            let Some(m) = ws.next(Duration::from_millis(300)) else {
                assert!(!ws.is_closed(), "the relay closed the socket");
                continue;
            };
            let kind = m["type"].as_str().unwrap_or("").to_string();
            let seq = m["seq"].as_i64().unwrap_or(-1);
            let game = m["game_id"].as_i64().unwrap_or(0);
            if kind == "move" && m["clock"]["running"].is_string() {
                clocked.fetch_add(1, Ordering::Relaxed);
            }
            let (ply, uci) = match kind.as_str() {
                "move" => (
                    m["move"]["ply"].as_u64().unwrap_or(0),
                    m["move"]["uci"].as_str().unwrap_or("").to_string(),
                ),
                "move_clock" => (m["ply"].as_u64().unwrap_or(0), String::new()),
                "truncate" => (m["from_ply"].as_u64().unwrap_or(0), String::new()),
                "snapshot" | "result" | "game" => (0, String::new()),
                _ => continue,
            };
            log.lock().expect("lock").push((seq, kind, game, ply, uci));
        }
    })
}

/// Terminates the database connections that listen for notifications (as a network cut or a
/// restarted pooler would), so the relay must notice and catch up from the change log.
fn cut_listeners(url: &str, db: &str) -> usize {
    let out = std::process::Command::new("psql")
        .args([
            url,
            "-qtA",
            "-c",
            &format!(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = '{db}' AND query ILIKE 'LISTEN%'"
            ),
        ])
        .output()
        .expect("psql");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// haproxy (Debian's) in front of `relays`, configured as `deploy/haproxy.cfg` but with
/// these addresses; `None` with a notice when it is not installed (a failure with
/// `RELAY_REQUIRE_ALL=1`).
fn haproxy_in_front(dir: &std::path::Path, relays: &[&Relay]) -> Option<(super::Proc, String)> {
    if std::process::Command::new("haproxy")
        .arg("-v")
        .output()
        .is_err()
    {
        let notice =
            "haproxy is not installed: the several-relays test runs without a proxy in front";
        if std::env::var("RELAY_REQUIRE_ALL").is_ok_and(|v| v == "1") {
            panic!("{notice} (RELAY_REQUIRE_ALL=1)");
        }
        eprintln!("{notice}");
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let template = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/haproxy.cfg"
    ))
    .expect("deploy/haproxy.cfg");
    let mut cfg = String::new();
    for line in template.lines() {
        let t = line.trim_start();
        if t.starts_with("bind ") {
            cfg.push_str(&format!("    bind 127.0.0.1:{port}\n"));
        } else if t.starts_with("server ") {
            continue;
        } else {
            cfg.push_str(line);
            cfg.push('\n');
        }
    }
    for (i, r) in relays.iter().enumerate() {
        let addr = r.base.trim_start_matches("http://");
        cfg.push_str(&format!(
            "    server web{} {addr} check inter 500ms\n",
            i + 1
        ));
    }
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, cfg).expect("haproxy.cfg");
    let child = std::process::Command::new("haproxy")
        .args(["-db", "-f", &path.display().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start haproxy");
    let base = format!("http://127.0.0.1:{port}");
    wait_until(10, "haproxy to answer", || {
        std::net::TcpStream::connect(("127.0.0.1", port))
            .ok()
            .map(|_| ())
    });
    Some((super::Proc { child }, base))
}

#[test]
fn a_relay_without_boards_shows_every_change_of_another_once_and_arbiters_act_on_either() {
    let Some(url) = postgres_url("the several-relays test") else {
        return;
    };
    let name = format!("relay_cluster_{}", std::process::id());
    let db = postgres_database(&url, &name);
    let dir = temp_dir("serve-cluster");
    let emu = Emulator::start(
        "serve-cluster-emu",
        &[
            "--boards", "4", "--speed", "4", "--noise", "0", "--seed", "5",
        ],
    );
    let ports = emu.ports();
    let reader = Relay::serve(
        &dir,
        &["--db", &db, "--port", &ports, "--admin-token", TOKEN],
    );
    let server = Relay::serve(&dir, &["--db", &db, "--no-boards", "--admin-token", TOKEN]);
    let h = get_json(&server.url("/health"));
    assert_eq!(
        h["ports"],
        Value::Array(vec![]),
        "--no-boards reads no port: {h}"
    );

    wait_until(30, "a first move", || {
        (get(&reader.url("/api/rounds/1/pgn")).text().contains("1. ")).then_some(())
    });
    let stop = Arc::new(AtomicBool::new(false));
    let (on_reader, on_server): (Log, Log) = Default::default();
    let clocked: Clocked = Default::default();
    let t1 = listen(
        reader.base.clone(),
        on_reader.clone(),
        Clocked::default(),
        stop.clone(),
    );
    let t2 = listen(
        server.base.clone(),
        on_server.clone(),
        clocked.clone(),
        stop.clone(),
    );
    // Spectators through a proxy in front of both, as docker-compose.yml runs it.
    let proxy = haproxy_in_front(&dir, &[&reader, &server]);
    let on_proxy: Log = Default::default();
    let t3 = proxy.as_ref().map(|(_, base)| {
        wait_until(10, "the proxy to pass requests", || {
            (get(&format!("{base}/health")).status == 200).then_some(())
        });
        listen(
            base.clone(),
            on_proxy.clone(),
            Clocked::default(),
            stop.clone(),
        )
    });

    std::thread::sleep(Duration::from_secs(6));
    // The connection that hears notifications dies: the server catches up from the log.
    let cut = cut_listeners(&url, &name);
    assert!(cut >= 2, "only {cut} listening connections were cut");
    std::thread::sleep(Duration::from_secs(6));

    // An arbiter on the relay without boards ends game 1; the relay reading its board takes
    // the result (its recorder carries on from it) and never writes over it.
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let a = request(
        "POST",
        &server.url("/api/games/1/result"),
        &headers,
        Some(br#"{"result":"1/2-1/2","termination":"agreed"}"#),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    wait_until(5, "the result on the reading relay", || {
        (get_json(&reader.url("/api/games/1"))["result"] == "1/2-1/2").then_some(())
    });

    // Two arbiters, one on each relay, both editing game 2 as they read it: the first
    // wins, the second is told of the conflict and changes nothing.
    let read = request("GET", &reader.url("/api/games/2"), &headers, None).json();
    let edits = read["edits"]
        .as_i64()
        .expect("an arbiter sees the edit count");
    let version = format!("\"{edits}\"");
    let with_version = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("If-Match", version.as_str()),
    ];
    let first = request(
        "POST",
        &reader.url("/api/games/2/result"),
        &with_version,
        Some(br#"{"result":"1-0"}"#),
    );
    assert_eq!(first.status, 200, "{}", first.text());
    let second = request(
        "POST",
        &server.url("/api/games/2/result"),
        &with_version,
        Some(br#"{"result":"0-1"}"#),
    );
    assert_eq!(second.status, 409, "{}", second.text());
    assert!(
        second.text().contains("another arbiter"),
        "{}",
        second.text()
    );
    std::thread::sleep(Duration::from_secs(6));

    // Both relays serve the same round, and their spectators were told the same changes.
    // (The running `[Clock]` tag is the board reader's alone: it reads the clocks.)
    let games_of = |r: &Relay| {
        get(&r.url("/api/rounds/1/pgn"))
            .text()
            .lines()
            .filter(|l| !l.starts_with("[Clock "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let pgn = wait_until(10, "both relays to serve the same PGN", || {
        let a = games_of(&reader);
        (a == games_of(&server)).then_some(a)
    });
    stop.store(true, Ordering::Relaxed);
    t1.join().expect("reader's client");
    t2.join().expect("server's client");
    if let Some(t) = t3 {
        t.join().expect("proxy's client");
        let n = moves(&on_proxy.lock().expect("lock"));
        assert!(
            n.len() >= 20,
            "only {} moves came through the proxy",
            n.len()
        );
    }
    for g in [1, 2] {
        let v = get_json(&reader.url(&format!("/api/games/{g}")));
        let want = if g == 1 { "1/2-1/2" } else { "1-0" };
        assert_eq!(v["result"], want, "game {g}: {v}");
    }
    let on_reader = on_reader.lock().expect("lock").clone();
    let on_server = on_server.lock().expect("lock").clone();
    // Each change number reaches the server's client once, in order (presses ride on later
    // changes with their own, lower numbers, so only moves, truncations and results count).
    let mut last = 0;
    for (seq, kind, ..) in &on_server {
        if kind == "snapshot" {
            last = *seq;
            continue;
        }
        if kind == "move" || kind == "truncate" || kind == "result" {
            assert!(
                *seq > last,
                "change {seq} ({kind}) came after {last}\n{on_server:?}\n{}",
                server.log_text()
            );
            last = *seq;
        }
    }
    let (a, b) = (moves(&on_reader), moves(&on_server));
    // Both clients were there from the same moment: the server's was told of every move the
    // reader's was (a move or two at the very start may have come in its snapshot instead).
    let missing: Vec<_> = a.keys().filter(|k| !b.contains_key(k)).collect();
    assert!(
        missing.len() <= 2,
        "the server's client was not told of {missing:?}\n{}",
        server.log_text()
    );
    assert!(
        b.len() >= 20,
        "only {} moves reached the server's client",
        b.len()
    );
    // The server's client joined later and so may have a move or two in its snapshot that
    // the other was told: compare what both were told.
    let both: Vec<_> = a.keys().filter(|k| b.contains_key(k)).collect();
    assert!(both.len() >= 20, "{} moves in common", both.len());
    for k in both {
        assert_eq!(a[k], b[k], "move {k:?} differs");
    }
    // Its console lists the e-boards the other reads, and says which relay reads them.
    let reader_name = get_json(&reader.url("/health"))["instance"]
        .as_str()
        .map(str::to_string)
        .expect("the reader's instance name");
    let boards = get_json(&server.url("/api/eboards"));
    let listed = boards.as_array().map_or(0, Vec::len);
    assert_eq!(listed, 4, "{boards}");
    assert!(
        boards
            .as_array()
            .into_iter()
            .flatten()
            .all(|e| e["read_by"] == reader_name.as_str() && e["game_id"].is_i64()),
        "{boards}"
    );
    // The relay without boards shows the clock running after each move, from the moves.
    let clocked = clocked.load(Ordering::Relaxed);
    assert!(
        clocked * 2 >= b.len(),
        "only {clocked} of {} moves came with a running clock on the server",
        b.len()
    );
    assert!(
        server
            .log_text()
            .contains("catching up from the change log"),
        "the server did not say it caught up:\n{}",
        server.log_text()
    );
    assert!(
        reader
            .log_text()
            .contains("another relay changed this board's game"),
        "the reading relay did not take the other's result:\n{}",
        reader.log_text()
    );
    let followed = get(&server.url("/metrics")).text();
    assert!(
        followed.contains("relay_changes_followed_total"),
        "{followed}"
    );
    eprintln!(
        "two relays: {} moves told on the reader, {} on the server ({clocked} with a running \
         clock); PGN {} bytes; cut {cut} listening connections; first edit {}, second 409",
        a.len(),
        b.len(),
        pgn.len(),
        first.status
    );
}
