//! A venue relay (SQLite, emulated boards on pseudo-terminals) pushing to a cloud relay
//! (PostgreSQL, no boards), each a real process, with the link between them through a proxy
//! this test cuts (the venue killed and started again meanwhile), and the cloud killed once:
//! at the end both serve the same rounds, and the cloud's change log holds every move once.

use super::service::{
    Emulator, Relay, get, get_json, kill_the_pusher, postgres_database, postgres_url, push_target,
    pushing_pair, request, wait_until,
};
use super::temp_dir;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PUSH: &str = "push-secret-1";
const TOKEN: &str = "arbiter-secret";

/// A TCP proxy the test controls: while cut, every connection is closed and new ones are
/// closed as soon as they come (a dead hall Wi-Fi, as far as the venue can tell).
pub struct CutProxy {
    addr: String,
    cut: Arc<AtomicBool>,
    target: Arc<Mutex<String>>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl CutProxy {
    pub fn start(target: &str) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let p = CutProxy {
            addr,
            cut: Default::default(),
            target: Arc::new(Mutex::new(target.to_string())),
            open: Default::default(),
        };
        let (cut, target, open) = (p.cut.clone(), p.target.clone(), p.open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if cut.load(Ordering::Relaxed) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let to = target.lock().expect("lock").clone();
                let Ok(server) = TcpStream::connect(&to) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                for s in [&client, &server] {
                    if let Ok(c) = s.try_clone() {
                        open.lock().expect("lock").push(c);
                    }
                }
                let pipe = |mut from: TcpStream, mut to: TcpStream| {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16384];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Write);
                    });
                };
                if let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) {
                    pipe(client, s2);
                    pipe(server, c2);
                }
            }
        });
        p
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::Relaxed);
        if cut {
            for s in self.open.lock().expect("lock").drain(..) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }

    fn retarget(&self, base: &str) {
        *self.target.lock().expect("lock") = base.trim_start_matches("http://").to_string();
    }
}

/// A round's PGN without the running `[Clock]` tag (a moment's reading, not the game).
pub fn games_of(r: &Relay, round: i64) -> String {
    get(&r.url(&format!("/api/rounds/{round}/pgn")))
        .text()
        .lines()
        .filter(|l| !l.starts_with("[Clock "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The cloud's round with the venue's number, by the cloud's tournaments list.
fn cloud_round(cloud: &Relay, number: &str) -> Option<i64> {
    let ts = get_json(&cloud.url("/api/tournaments"));
    ts.as_array()?
        .iter()
        .flat_map(|t| t["rounds"].as_array().cloned().unwrap_or_default())
        .find(|r| r["number"] == number)
        .and_then(|r| r["id"].as_i64())
}

/// Every round of the venue, as (number, venue id, cloud id), once the cloud has them all.
fn rounds_in_sync(venue: &Relay, cloud: &Relay) -> Option<Vec<(String, i64, i64)>> {
    let ts = get_json(&venue.url("/api/tournaments"));
    let mut out = Vec::new();
    for r in ts
        .as_array()?
        .iter()
        .flat_map(|t| t["rounds"].as_array().cloned().unwrap_or_default())
    {
        let number = r["number"].as_str()?.to_string();
        let v = r["id"].as_i64()?;
        let c = cloud_round(cloud, &number)?;
        if games_of(venue, v) != games_of(cloud, c) {
            return None;
        }
        out.push((number, v, c));
    }
    (!out.is_empty()).then_some(out)
}

/// Waits until both relays serve the same rounds; on a timeout, says how they differ.
fn wait_in_sync(venue: &Relay, cloud: &Relay, secs: u64, what: &str) -> Vec<(String, i64, i64)> {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(r) = rounds_in_sync(venue, cloud) {
            return r;
        }
        if Instant::now() > end {
            let v = get(&venue.url("/api/tournaments")).text();
            let c = get(&cloud.url("/api/tournaments")).text();
            let first = |r: &Relay| games_of(r, 1);
            panic!(
                "timed out waiting for {what}\nvenue tournaments {v}\ncloud tournaments {c}\nvenue upstream {}\nvenue round 1:\n{}\ncloud round 1:\n{}\n--- venue log\n{}\n--- cloud log\n{}",
                push_target(venue),
                first(venue),
                first(cloud),
                venue
                    .log_text()
                    .lines()
                    .rev()
                    .take(40)
                    .collect::<Vec<_>>()
                    .join("\n"),
                cloud
                    .log_text()
                    .lines()
                    .rev()
                    .take(40)
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Reads the cloud's change log and checks that no ply was announced twice without a
/// truncation in between. Returns the number of moves announced.
pub fn moves_announced_once(db: &str) -> usize {
    let out = std::process::Command::new("psql")
        .args([
            db,
            "-At",
            "-F",
            "|",
            "-c",
            "SELECT game_id, kind, payload FROM changes WHERE game_id IS NOT NULL ORDER BY round_id, seq",
        ])
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut have: BTreeMap<i64, BTreeSet<u64>> = BTreeMap::new();
    let mut moves = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut parts = line.splitn(3, '|');
        let (Some(game), Some(kind), Some(payload)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let game: i64 = game.parse().expect("game id");
        let p: Value = serde_json::from_str(payload).unwrap_or(Value::Null);
        let plies = have.entry(game).or_default();
        match kind {
            "move" => {
                let ply = p["ply"].as_u64().expect("ply");
                assert!(
                    plies.insert(ply),
                    "game {game}: ply {ply} was announced twice"
                );
                moves += 1;
            }
            "truncate" => {
                let from = p["from_ply"].as_u64().expect("from_ply");
                plies.retain(|x| *x < from);
            }
            _ => {}
        }
    }
    moves
}

/// A venue relay on `db` reading `ports`, pushing to the cloud relay at `to`.
fn venue_args<'a>(db: &'a str, ports: &'a str, to: &'a str) -> [&'a str; 10] {
    [
        "--db",
        db,
        "--port",
        ports,
        "--push-to",
        to,
        "--push-token",
        PUSH,
        "--admin-token",
        TOKEN,
    ]
}

#[test]
fn a_venue_pushes_to_a_cloud_relay_through_a_cut_link_and_a_killed_cloud() {
    let Some(url) = postgres_url("the venue → cloud push test") else {
        return;
    };
    let cut_secs: u64 = std::env::var("RELAY_PUSH_CUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let db = postgres_database(&url, &format!("relay_push_{}", std::process::id()));
    let dir = temp_dir("serve-upstream");
    let emu = Emulator::start(
        "serve-upstream-emu",
        &[
            "--boards", "4", "--speed", "4", "--noise", "0.1", "--seed", "11",
        ],
    );
    let cloud_args = [
        "--db",
        db.as_str(),
        "--no-boards",
        "--accept-push-token",
        PUSH,
        "--admin-token",
        TOKEN,
    ];
    let mut cloud = Relay::serve(&dir, &cloud_args);

    // Without the token, or with a wrong one, nothing is stored.
    let batch = br#"{"origin":"intruder","name":"x","batch":1,"tournaments":[{"id":1,"name":"Fake","site":null,"start_date":null,"end_date":null,"time_control":null,"delay_secs":0,"rounds":[]}],"games":[]}"#;
    let none = request(
        "POST",
        &cloud.url("/api/push"),
        &[("Content-Type", "application/json")],
        Some(batch),
    );
    assert_eq!(none.status, 401, "{}", none.text());
    let wrong = request(
        "POST",
        &cloud.url("/api/push"),
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer nope-nope-nope"),
        ],
        Some(batch),
    );
    assert_eq!(wrong.status, 403, "{}", wrong.text());
    assert_eq!(
        get_json(&cloud.url("/api/tournaments")),
        Value::Array(vec![]),
        "a refused push stored something"
    );

    let proxy = CutProxy::start(cloud.base.trim_start_matches("http://"));
    let venue_db = format!("sqlite://{}", dir.join("venue.db").display());
    let ports = emu.ports();
    let proxy_url = proxy.url();
    let venue_args = venue_args(&venue_db, &ports, &proxy_url);
    let mut venue = Relay::serve(&dir, &venue_args);
    wait_until(40, "the first moves on the cloud relay", || {
        let c = cloud_round(&cloud, "1")?;
        games_of(&cloud, c).contains("1. ").then_some(())
    });

    // The link goes down: the venue queues, says so, and the games go on there.
    proxy.set_cut(true);
    let cut_at = Instant::now();
    let down = wait_until(
        30,
        "the venue to see the link down with changes queued",
        || {
            let u = push_target(&venue);
            (u["last_error"].is_string() && u["queued"].as_i64().unwrap_or(0) > 0).then_some(u)
        },
    );
    eprintln!("link cut: {down}");
    // The venue is killed with changes queued, and started again: its outbox is its store.
    venue.kill();
    venue = Relay::serve(&dir, &venue_args);
    wait_until(30, "the restarted venue to queue again", || {
        (push_target(&venue)["queued"].as_i64().unwrap_or(0) > 0).then_some(())
    });
    std::thread::sleep(Duration::from_secs(cut_secs).saturating_sub(cut_at.elapsed()));
    let queued = push_target(&venue)["queued"].as_i64().unwrap_or(0);
    proxy.set_cut(false);
    let back = Instant::now();
    let rounds = wait_in_sync(&venue, &cloud, 30, "the cloud to catch up after the cut");
    eprintln!(
        "after a {cut_secs} s cut with {queued} changes queued, the cloud had everything {} ms after the link came back ({} rounds)",
        back.elapsed().as_millis(),
        rounds.len()
    );

    // The cloud dies; the venue queues again; the cloud comes back on the same database.
    cloud.kill();
    std::thread::sleep(Duration::from_secs(5));
    cloud = Relay::serve(&dir, &cloud_args);
    proxy.retarget(&cloud.base);
    let back = Instant::now();
    wait_in_sync(
        &venue,
        &cloud,
        30,
        "the cloud to catch up after its restart",
    );
    eprintln!(
        "the restarted cloud had everything {} ms after it came back",
        back.elapsed().as_millis()
    );

    // An arbiter in the cloud corrects a game; then the venue's arbiter changes the same
    // game: the venue's version is held back, never written over the cloud's, and both
    // relays say so.
    let (_, venue_round, cloud_round_id) = rounds[0].clone();
    let vgame = get_json(&venue.url(&format!("/api/rounds/{venue_round}")))["games"][0].clone();
    let board = vgame["board_no"].as_u64().expect("board");
    let cgames = get_json(&cloud.url(&format!("/api/rounds/{cloud_round_id}")))["games"].clone();
    let cgame = cgames
        .as_array()
        .expect("games")
        .iter()
        .find(|g| g["board_no"].as_u64() == Some(board))
        .expect("the same board in the cloud")
        .clone();
    let (vid, cid) = (
        vgame["id"].as_i64().expect("id"),
        cgame["id"].as_i64().expect("id"),
    );
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let r = request(
        "POST",
        &cloud.url(&format!("/api/games/{cid}/result")),
        &headers,
        Some(br#"{"result":"0-1","termination":"cloud arbiter"}"#),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = request(
        "POST",
        &venue.url(&format!("/api/games/{vid}/result")),
        &headers,
        Some(br#"{"result":"1-0","termination":"venue arbiter"}"#),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let conflict = wait_until(15, "the conflict on the venue's console", || {
        let u = push_target(&venue);
        u["conflicts"].as_array().filter(|c| !c.is_empty()).cloned()
    });
    assert_eq!(conflict[0]["game_id"].as_i64(), Some(vid), "{conflict:?}");
    let held = get_json(&cloud.url("/health"))["pushed_from"][0]["conflicts"].clone();
    assert_eq!(held[0]["cloud_game_id"].as_i64(), Some(cid), "{held}");
    assert_eq!(
        get_json(&cloud.url(&format!("/api/games/{cid}")))["result"],
        "0-1",
        "the cloud's correction was written over"
    );
    // The cloud's arbiter takes the venue's version: the game follows the venue again.
    let r = request(
        "POST",
        &cloud.url(&format!("/api/games/{cid}/take-venue")),
        &headers,
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        get_json(&cloud.url(&format!("/api/games/{cid}")))["result"],
        "1-0"
    );
    wait_until(15, "the conflict to clear on the venue's console", || {
        push_target(&venue)["conflicts"]
            .as_array()
            .is_some_and(|c| c.is_empty())
            .then_some(())
    });

    // At the end both serve the same rounds, and the cloud announced every move once.
    let rounds = wait_in_sync(&venue, &cloud, 30, "both relays to serve the same rounds");
    // The boards may still be playing: what the venue holds now must reach the cloud's
    // spectators (a move the venue stores after this is not counted against the cloud).
    let venue_moves: usize = rounds
        .iter()
        .map(|(_, v, _)| {
            get_json(&venue.url(&format!("/api/rounds/{v}")))["games"]
                .as_array()
                .map(|gs| {
                    gs.iter()
                        .map(|g| g["moves"].as_array().map_or(0, Vec::len))
                        .sum::<usize>()
                })
                .unwrap_or(0)
        })
        .sum();
    let end = Instant::now() + Duration::from_secs(15);
    let mut moves = moves_announced_once(&db);
    while moves < venue_moves && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
        moves = moves_announced_once(&db);
    }
    eprintln!(
        "{} rounds the same on both; the cloud announced {moves} moves, the venue holds {venue_moves}",
        rounds.len()
    );
    assert!(venue_moves >= 40, "only {venue_moves} moves were played");
    assert!(
        moves >= venue_moves,
        "the cloud announced {moves} moves for the venue's {venue_moves}"
    );
    let _ = emu;
}

/// Two venue relays on one PostgreSQL read the same ports and are both told to push to the
/// cloud, as a standby is started: one pushes, the other stands by. SIGKILL the pushing relay
/// and the standby pushes from where the store stands: the cloud ends serving what the venue
/// does, every move once, the moves played after the kill included.
#[test]
fn of_two_venue_relays_on_one_postgresql_one_pushes_and_the_standby_takes_over() {
    let Some(url) = postgres_url("the venue standby push test") else {
        return;
    };
    let venue_db = postgres_database(&url, &format!("relay_push_venue_{}", std::process::id()));
    let cloud_db = postgres_database(&url, &format!("relay_push_cloud_{}", std::process::id()));
    let dir = temp_dir("serve-upstream-standby");
    let emu = Emulator::start(
        "serve-upstream-standby-emu",
        &[
            "--boards", "4", "--speed", "10", "--noise", "0", "--seed", "7",
        ],
    );
    let cloud = Relay::serve(
        &dir,
        &[
            "--db",
            &cloud_db,
            "--no-boards",
            "--accept-push-token",
            PUSH,
            "--admin-token",
            TOKEN,
        ],
    );
    let ports = emu.ports();
    let venue_args = venue_args(&venue_db, &ports, &cloud.base);
    let (mut first, second) = pushing_pair(&dir, &venue_args, Duration::from_secs(4));
    let at_kill = moves_announced_once(&cloud_db);
    kill_the_pusher(&mut first, &second);
    wait_until(60, "moves played after the kill on the cloud", || {
        (moves_announced_once(&cloud_db) >= at_kill + 8).then_some(())
    });
    wait_in_sync(
        &second,
        &cloud,
        60,
        "the cloud to serve what the venue does",
    );
    let moves = moves_announced_once(&cloud_db);
    eprintln!("{moves} moves on the cloud, each once ({at_kill} at the kill)");
    let _ = emu;
}
