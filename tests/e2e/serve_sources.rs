//! A round taking games from a PGN URL it polls, through the real binary: a test web server
//! whose file grows as a live round's does (with an ETag, as DGT LiveChess Cloud and relay
//! serve theirs); games matched by `[Board]`, `[Round "r.b"]` and by players; moves and
//! `[%clk]` as the source has them; 304s while the file is unchanged; a game kept where it
//! differs from the source (a clash for the arbiter); errors counted and backed off; the
//! source kept over a restart and stopped by DELETE.

use super::service::{Answer, Relay, Socket, get_json, request, sans, wait_until};
use super::temp_dir;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const TOKEN: &str = "arbiter-secret-sources";

/// A web server with one PGN file that a test changes, answering `If-None-Match` with 304.
pub(super) struct PgnServer {
    pub(super) port: u16,
    body: Arc<Mutex<String>>,
    full: Arc<AtomicU64>,
    unchanged: Arc<AtomicU64>,
    failing: Arc<AtomicBool>,
}

impl PgnServer {
    pub(super) fn start() -> PgnServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let body: Arc<Mutex<String>> = Arc::default();
        let (full, unchanged) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let failing = Arc::new(AtomicBool::new(false));
        let (b, f, u, x) = (
            body.clone(),
            full.clone(),
            unchanged.clone(),
            failing.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut asked_tag = None;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("if-none-match:") {
                        asked_tag = Some(v.trim().to_string());
                    }
                    line.clear();
                }
                let mut out = stream;
                if x.load(Ordering::SeqCst) {
                    let _ = out.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    continue;
                }
                let text = b.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let tag = format!(
                    "\"{:x}-{}\"",
                    text.len(),
                    text.bytes().map(u64::from).sum::<u64>()
                );
                if asked_tag.as_deref() == Some(tag.as_str()) {
                    u.fetch_add(1, Ordering::SeqCst);
                    let _ = out.write_all(
                        format!(
                            "HTTP/1.1 304 Not Modified\r\nETag: {tag}\r\nConnection: close\r\n\r\n"
                        )
                        .as_bytes(),
                    );
                } else {
                    f.fetch_add(1, Ordering::SeqCst);
                    let _ = out.write_all(format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/x-chess-pgn\r\nETag: {tag}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                        text.len()
                    ).as_bytes());
                }
            }
        });
        PgnServer {
            port,
            body,
            full,
            unchanged,
            failing,
        }
    }

    pub(super) fn set(&self, text: &str) {
        *self.body.lock().unwrap_or_else(|p| p.into_inner()) = text.to_string();
    }
}

fn serve(dir: &std::path::Path) -> Relay {
    let db = format!("sqlite://{}/relay.db", dir.display());
    let none = format!("{}/no-such-port-*", dir.display());
    Relay::serve(dir, &["--db", &db, "--port", &none, "--admin-token", TOKEN])
}

fn admin(r: &Relay, method: &str, path: &str, body: Option<&Value>) -> Answer {
    let text = body.map(Value::to_string).unwrap_or_default();
    request(
        method,
        &r.url(path),
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &format!("Bearer {TOKEN}")),
        ],
        body.map(|_| text.as_bytes()),
    )
}

/// The moves of board `board` of round 1.
fn board_sans(r: &Relay, board: u64) -> Vec<String> {
    let round = get_json(&r.url("/api/rounds/1"));
    let id = round["games"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["board_no"] == board))
        .map(|g| g["id"].clone())
        .unwrap_or_default();
    sans(&get_json(&r.url(&format!("/api/games/{id}"))))
}

fn game_on(r: &Relay, board: u64) -> Value {
    let round = get_json(&r.url("/api/rounds/1"));
    let id = round["games"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["board_no"] == board))
        .map(|g| g["id"].clone())
        .unwrap_or_default();
    get_json(&r.url(&format!("/api/games/{id}")))
}

const HEAD: &str = "[Event \"Open\"]\n[Site \"Hall B\"]\n[Date \"2026.11.30\"]\n";

fn pgn(games: &[(&str, &str, &str, &str)]) -> String {
    let mut out = String::new();
    for (tags, white, black, moves) in games {
        out.push_str(&format!(
            "{HEAD}{tags}[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"*\"]\n\n{moves}\n\n"
        ));
    }
    out
}

#[test]
fn a_round_follows_a_pgn_source_and_keeps_what_it_must() {
    let dir = temp_dir("serve-sources");
    let mut r = serve(&dir);
    let pairings = json!([
        {"board_no": 1, "white": {"name": "Alpha, A"}, "black": {"name": "Beta, B"}},
        {"board_no": 2, "white": {"name": "Gamma, C"}, "black": {"name": "Delta, D"}},
        {"board_no": 3, "white": {"name": "Eps, E"}, "black": {"name": "Zeta, Z"}},
        {"board_no": 4, "white": {"name": "Eta, H"}, "black": {"name": "Theta, T"}},
    ]);
    let a = admin(&r, "PUT", "/api/rounds/1/pairings", Some(&pairings));
    assert!(a.status < 300, "{}", a.text());
    let server = PgnServer::start();
    // Board 2 by [Board], board 3 by [Round "r.b"], board 4 by its players (names written
    // another way), board 1 out of the source's range.
    server.set(&pgn(&[
        (
            "[Round \"1\"]\n[Board \"2\"]\n",
            "Gamma, C",
            "Delta, D",
            "1. e4 {[%clk 1:30:55]} e5 {[%clk 1:30:50]} *",
        ),
        (
            "[Round \"1.3\"]\n",
            "Eps, E",
            "Zeta, Z",
            "1. d4 {[%clk 1:30:40]} *",
        ),
        ("[Round \"1\"]\n", "ETA H", "theta t", "*"),
        (
            "[Round \"1\"]\n[Board \"1\"]\n",
            "Alpha, A",
            "Beta, B",
            "1. c4 *",
        ),
    ]));
    let mut spectator = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
    spectator.until(5, |m| m["type"] == "snapshot");

    // Refused: a non-HTTP address, a bad range, no token.
    for (body, status) in [
        (json!({"url": "file:///etc/passwd"}), 400),
        (
            json!({"url": format!("http://127.0.0.1:{}/r.pgn", server.port), "boards": "4-2"}),
            400,
        ),
        (
            json!({"url": format!("http://127.0.0.1:{}/r.pgn", server.port), "boards": "x"}),
            400,
        ),
    ] {
        let a = admin(&r, "POST", "/api/rounds/1/sources", Some(&body));
        assert_eq!(a.status, status, "{body}: {}", a.text());
    }
    let url = format!("http://127.0.0.1:{}/round.pgn", server.port);
    let a = request(
        "POST",
        &r.url("/api/rounds/1/sources"),
        &[("Content-Type", "application/json")],
        Some(json!({"url": url}).to_string().as_bytes()),
    );
    assert_eq!(a.status, 401, "{}", a.text());
    let a = admin(
        &r,
        "POST",
        "/api/rounds/1/sources",
        Some(&json!({"url": url, "boards": "2-4"})),
    );
    assert_eq!(a.status, 201, "{}", a.text());
    let id = a.json()["id"].as_i64().expect("source id");

    wait_until(15, "the source's moves on boards 2 and 3", || {
        (board_sans(&r, 2) == ["e4", "e5"] && board_sans(&r, 3) == ["d4"]).then_some(())
    });
    let g2 = game_on(&r, 2);
    assert_eq!(g2["moves"][0]["clk_ms"], 5_455_000, "{g2}");
    assert!(board_sans(&r, 1).is_empty(), "board 1 is not the source's");
    // The arbiter types a move on board 4 before the source has one.
    let g4 = game_on(&r, 4)["id"].as_i64().expect("id");
    let a = admin(
        &r,
        "POST",
        &format!("/api/games/{g4}/moves"),
        Some(&json!({"san": "e4"})),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    // Unchanged, the file costs 304s.
    wait_until(10, "conditional polls answered 304", || {
        (server.unchanged.load(Ordering::SeqCst) >= 2).then_some(())
    });

    // The file grows: board 2 goes on and ends, board 3 goes on, board 4 disagrees.
    server.set(&pgn(&[
        ("[Round \"1\"]\n[Board \"2\"]\n", "Gamma, C", "Delta, D", "1. e4 {[%clk 1:30:55]} e5 {[%clk 1:30:50]} 2. Qh5 {[%clk 1:30:10]} Nc6 3. Bc4 Nf6 4. Qxf7# 1-0"),
        ("[Round \"1.3\"]\n", "Eps, E", "Zeta, Z", "1. d4 {[%clk 1:30:40]} d5 *"),
        ("[Round \"1\"]\n", "ETA H", "theta t", "1. c4 *"),
        ("[Round \"1\"]\n[Board \"1\"]\n", "Alpha, A", "Beta, B", "1. c4 *"),
    ]));
    wait_until(15, "the grown file's moves", || {
        (board_sans(&r, 2).len() == 7 && board_sans(&r, 3) == ["d4", "d5"]).then_some(())
    });
    wait_until(10, "board 2's result", || {
        (game_on(&r, 2)["result"] == "1-0").then_some(())
    });
    assert_eq!(board_sans(&r, 4), ["e4"], "the typed game is kept");
    let list = wait_until(10, "the clash shown", || {
        let l = admin(&r, "GET", "/api/rounds/1/sources", None).json();
        l[0]["clashes"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
            .then_some(l)
    });
    let s = &list[0];
    assert_eq!(s["id"], id);
    assert!(
        s["clashes"][0]
            .as_str()
            .is_some_and(|c| c.contains("board 4") && c.contains("kept")),
        "{s}"
    );
    assert_eq!(
        (s["games"].clone(), s["matched"].clone()),
        (json!(4), json!(3)),
        "{s}"
    );
    assert!(
        s["unmatched"][0]
            .as_str()
            .is_some_and(|u| u.contains("Alpha")),
        "{s}"
    );
    assert_eq!(s["last_status"], "200", "{s}");

    // Spectators saw every move of the source's, one by one.
    let frames = spectator.until(10, |m| m["type"] == "move" && m["move"]["san"] == "d5");
    let moves: Vec<&str> = frames
        .iter()
        .filter(|m| m["type"] == "move")
        .filter_map(|m| m["move"]["san"].as_str())
        .collect();
    for san in ["e4", "e5", "d4", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#", "d5"] {
        assert!(moves.contains(&san), "{san} not seen: {moves:?}");
    }

    // The source fails: counted, said, and the round keeps what it has.
    server.failing.store(true, Ordering::SeqCst);
    let s = wait_until(15, "the failure shown", || {
        let l = admin(&r, "GET", "/api/rounds/1/sources", None).json();
        l[0]["last_status"]
            .as_str()
            .is_some_and(|t| t.contains("500"))
            .then_some(l[0].clone())
    });
    assert!(s["errors"].as_u64().is_some_and(|e| e >= 1), "{s}");
    server.failing.store(false, Ordering::SeqCst);

    // Kept over a restart: polled again (a full read first), the round unchanged.
    r.kill();
    let full_before = server.full.load(Ordering::SeqCst);
    let r = serve(&dir);
    wait_until(15, "polled after the restart", || {
        (server.full.load(Ordering::SeqCst) > full_before).then_some(())
    });
    let list = admin(&r, "GET", "/api/rounds/1/sources", None).json();
    assert_eq!(list[0]["url"], url.as_str(), "{list}");
    assert_eq!(board_sans(&r, 3), ["d4", "d5"]);

    // Stopped: no more moves from it.
    let a = admin(&r, "DELETE", &format!("/api/rounds/1/sources/{id}"), None);
    assert_eq!(a.status, 200, "{}", a.text());
    let a = admin(&r, "DELETE", &format!("/api/rounds/1/sources/{id}"), None);
    assert_eq!(a.status, 404, "{}", a.text());
    server.set(&pgn(&[(
        "[Round \"1.3\"]\n",
        "Eps, E",
        "Zeta, Z",
        "1. d4 d5 2. c4 *",
    )]));
    std::thread::sleep(std::time::Duration::from_secs(5));
    assert_eq!(board_sans(&r, 3), ["d4", "d5"]);
    assert_eq!(
        admin(&r, "GET", "/api/rounds/1/sources", None).json(),
        json!([])
    );
}
