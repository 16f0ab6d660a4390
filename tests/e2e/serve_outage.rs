//! The database goes away under a running service (PostgreSQL behind a TCP proxy the test
//! cuts, as a restart or a network fault would): boards keep being read, `/health` says what
//! is wrong, writes are retried, and once the database is back everything read meanwhile is
//! stored, in order, nothing lost.

use super::service::{
    Emulator, Relay, get, get_json, postgres_database, postgres_url, sans, wait_until,
};
use super::temp_dir;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A TCP proxy to PostgreSQL that can be cut (every connection closed, new ones dropped).
struct Proxy {
    port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy port");
        let port = listener.local_addr().expect("addr").port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (c, o) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if c.load(Ordering::Relaxed) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                {
                    let mut o = o.lock().expect("lock");
                    o.extend(
                        [client.try_clone(), server.try_clone()]
                            .into_iter()
                            .flatten(),
                    );
                }
                pipe(
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                );
                pipe(server, client);
            }
        });
        Proxy { port, cut, open }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::Relaxed);
        for s in self.open.lock().expect("lock").drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.cut.store(false, Ordering::Relaxed);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

fn metric(r: &Relay, name: &str) -> u64 {
    get(&r.url("/metrics"))
        .text()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn stored_moves(r: &Relay) -> Option<Vec<Vec<String>>> {
    let round = get(&r.url("/api/rounds/1"));
    (round.status == 200).then(|| {
        round.json()["games"]
            .as_array()
            .into_iter()
            .flatten()
            .map(sans)
            .collect()
    })
}

#[test]
fn a_database_outage_loses_no_reading() {
    let Some(url) = postgres_url("the database outage test") else {
        return;
    };
    // A database of our own on the test server, reached through the proxy.
    let name = format!("relay_outage_{}", std::process::id());
    postgres_database(&url, &name);
    let (user_host, _) = url.rsplit_once('/').expect("URL with a database");
    let host = user_host.rsplit_once('@').map_or(user_host, |(_, h)| h);
    let user = user_host
        .strip_prefix("postgres://")
        .or_else(|| user_host.strip_prefix("postgresql://"))
        .and_then(|s| s.split_once('@'))
        .map_or("postgres", |(u, _)| u);
    let proxy = Proxy::start(host.to_string());
    let db = format!("postgres://{user}@127.0.0.1:{}/{name}", proxy.port);

    let emu = Emulator::start(
        "serve-outage",
        &[
            "--boards",
            "3",
            "--speed",
            "6",
            "--noise",
            "0",
            "--hold-secs",
            "24",
            "--seed",
            "5",
        ],
    );
    let dir = temp_dir("serve-outage-db");
    let ports = emu.ports();
    let r = Relay::serve(&dir, &["--db", &db, "--port", &ports]);
    wait_until(60, "a few moves stored", || {
        stored_moves(&r).filter(|g| g.iter().map(Vec::len).sum::<usize>() >= 4)
    });

    let before = stored_moves(&r).map_or(0, |g| g.iter().map(Vec::len).sum::<usize>());
    proxy.cut();
    let health = wait_until(20, "/health to report the outage", || {
        let h = get(&r.url("/health"));
        (h.status == 503).then(|| h.json())
    });
    assert_eq!(health["status"], "degraded", "{health}");
    let messages_at_cut = metric(&r, "relay_board_messages_total");
    std::thread::sleep(Duration::from_secs(8));
    let during = get_json(&r.url("/api/eboards"));
    assert!(
        metric(&r, "relay_board_messages_total") > messages_at_cut + 10,
        "readings stopped during the outage"
    );
    assert!(
        during
            .as_array()
            .is_some_and(|b| b.iter().all(|e| e["connected"] == Value::Bool(true)))
    );
    let pending = get(&r.url("/health")).json()["store"]["pending_writes"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        pending > 0,
        "nothing waiting for the database during the outage"
    );

    proxy.restore();
    wait_until(40, "/health to recover and the queue to empty", || {
        let h = get(&r.url("/health"));
        (h.status == 200 && h.json()["store"]["pending_writes"] == 0).then_some(())
    });
    assert!(metric(&r, "relay_store_errors_total") > 0);
    let after = wait_until(30, "moves after the outage", || {
        stored_moves(&r).filter(|g| g.iter().map(Vec::len).sum::<usize>() > before + 2)
    });
    let known: Vec<Vec<String>> =
        relay_core::pgn::read_games(include_str!("../../relay/data/classics.pgn"))
            .into_iter()
            .map(|g| {
                g.expect("bundled")
                    .moves
                    .iter()
                    .map(|m| m.san.to_string())
                    .collect()
            })
            .collect();
    for g in &after {
        assert!(
            known.iter().any(|k| k.starts_with(g)),
            "a stored game has a gap or a stray move: {g:?}\n{}",
            r.log_text()
        );
    }
    eprintln!(
        "outage test: {before} moves before the cut, {} after; {pending} jobs were waiting",
        after.iter().map(Vec::len).sum::<usize>()
    );
    let mut r = r;
    assert!(r.terminate(), "no clean stop:\n{}", r.log_text());
    drop(emu);
    let _ = std::process::Command::new("psql")
        .args([
            url.as_str(),
            "-q",
            "-c",
            &format!("DROP DATABASE IF EXISTS {name}"),
        ])
        .output();
}
