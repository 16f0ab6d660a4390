//! The move-entry page in real Chromium: an operator opens the link an arbiter made for a
//! board without an e-board, moves the pieces with the mouse (legal moves only), types a
//! clock, loses the link for some moves (they wait on the device, in order) and gets it back;
//! takes a move back and sets the result. The relay stores each move once, spectators see
//! every one, and the round's PGN holds the game.

use super::browser::{Browser, browser_test, eventually};
use super::service::{Relay, Socket, get, get_json, request, sans};
use super::temp_dir;
use fantoccini::Locator;
use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "arbiter-secret-enter";

/// A TCP forwarder in front of the relay whose link can be cut (every connection through it
/// dropped, new ones refused) and restored: the venue's Wi-Fi.
struct Link {
    port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Link {
    fn to(target: String) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the link");
        let port = listener.local_addr().expect("address").port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (c, o) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if c.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let mut held = o.lock().unwrap_or_else(|p| p.into_inner());
                for s in [&client, &server] {
                    if let Ok(s) = s.try_clone() {
                        held.push(s);
                    }
                }
                drop(held);
                for (mut from, mut to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ]
                .into_iter()
                .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
                {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Link { port, cut, open }
    }

    fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::SeqCst);
        if cut {
            for s in self
                .open
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .drain(..)
            {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
}

fn send(r: &Relay, method: &str, path: &str, body: &Value) -> Value {
    let a = request(
        method,
        &r.url(path),
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &format!("Bearer {TOKEN}")),
        ],
        Some(body.to_string().as_bytes()),
    );
    assert!(a.status < 300, "{method} {path}: {} {}", a.status, a.text());
    a.json()
}

/// Clicks the square `sq` ("e2") of the board (White at the bottom), as a finger or mouse
/// does: chessground moves a piece on a click of its square and then of the target.
async fn click_square(b: &Browser, sq: &str) {
    let board = b
        .client()
        .find(Locator::Css("#board cg-board"))
        .await
        .expect("the board");
    let size = b
        .js(
            "const r = document.querySelector('#board cg-board').getBoundingClientRect(); return [r.width, r.height];",
            vec![],
        )
        .await;
    let (w, h) = (
        size[0].as_f64().unwrap_or(0.0),
        size[1].as_f64().unwrap_or(0.0),
    );
    let bytes = sq.as_bytes();
    let file = f64::from(bytes[0] - b'a');
    let rank = f64::from(bytes[1] - b'1');
    // Offsets from the board's centre to the square's.
    let x = (file + 0.5) * w / 8.0 - w / 2.0;
    let y = (7.0 - rank + 0.5) * h / 8.0 - h / 2.0;
    let click = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: board,
            duration: None,
            x,
            y,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    b.client()
        .perform_actions(click)
        .await
        .unwrap_or_else(|e| panic!("click {sq}: {e}"));
}

/// Plays `from`→`to` on the page and waits until the page lists `plies` moves.
async fn play(b: &Browser, from: &str, to: &str, plies: usize) {
    click_square(b, from).await;
    click_square(b, to).await;
    eventually!(10, format!("{from}{to} listed as move {plies}"), async {
        let n = b
            .js(
                "return document.querySelectorAll('#moves li').length;",
                vec![],
            )
            .await;
        (n.as_u64() == Some(plies as u64)).then_some(())
    });
}

async fn badge(b: &Browser) -> String {
    b.js(
        "return document.getElementById('live-status').textContent;",
        vec![],
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

#[test]
fn browser_move_entry_page_queues_moves_while_the_link_is_cut() {
    browser_test(
        "browser_move_entry_page_queues_moves_while_the_link_is_cut",
        || async {
            let dir = temp_dir("browser-enter");
            let db = format!("sqlite://{}/relay.db", dir.display());
            let none = format!("{}/no-such-port-*", dir.display());
            let r = Relay::serve(
                &dir,
                &["--db", &db, "--port", &none, "--admin-token", TOKEN],
            );
            let pairings = json!([
                {"board_no": 1, "white": {"name": "Alpha, A"}, "black": {"name": "Beta, B"}},
                {"board_no": 2, "white": {"name": "Gamma, C"}, "black": {"name": "Delta, D"}},
            ]);
            send(&r, "PUT", "/api/rounds/1/pairings", &pairings);
            let round = get_json(&r.url("/api/rounds/1"));
            let game = round["games"]
                .as_array()
                .and_then(|gs| gs.iter().find(|g| g["board_no"] == 2))
                .map(|g| g["id"].as_i64().unwrap_or(0))
                .expect("board 2's game");
            let op = send(
                &r,
                "POST",
                "/api/rounds/1/operators",
                &json!({"boards": [2]}),
            );
            let op = op["token"].as_str().expect("token").to_string();
            let mut spectator = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
            spectator.until(5, |m| m["type"] == "snapshot");

            let link = Link::to(r.base.trim_start_matches("http://").to_string());
            let b =
                Browser::start("browser_move_entry_page_queues_moves_while_the_link_is_cut").await;
            b.goto(&format!(
                "http://127.0.0.1:{}/enter.html?game={game}#token={op}",
                link.port
            ))
            .await;
            eventually!(10, "the page names the board", async {
                let t = b
                    .js(
                        "return document.getElementById('players').textContent;",
                        vec![],
                    )
                    .await;
                t.as_str().filter(|t| t.contains("Board 2")).map(|_| ())
            });
            // The token left the address bar once kept.
            let url = b.client().current_url().await.expect("url");
            assert!(!url.as_str().contains("token"), "{url}");

            // 1. e4 with the clock typed, e5; an illegal try (a rook through its pawn) moves nothing.
            b.type_into("#clock", "1:29:55").await;
            play(&b, "e2", "e4", 1).await;
            play(&b, "e7", "e5", 2).await;
            click_square(&b, "a1").await;
            click_square(&b, "a5").await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let n = b
                .js(
                    "return document.querySelectorAll('#moves li').length;",
                    vec![],
                )
                .await;
            assert_eq!(n, json!(2), "an illegal move is no move");
            eventually!(10, "both moves stored", async {
                let g = get_json(&r.url(&format!("/api/games/{game}")));
                (sans(&g).len() == 2).then_some(())
            });

            // The link goes: three moves and a takeback wait on the device, in order.
            link.set_cut(true);
            play(&b, "g1", "f3", 3).await;
            play(&b, "b8", "c6", 4).await;
            play(&b, "f1", "b5", 5).await;
            b.click("#takeback").await;
            play(&b, "f1", "c4", 5).await;
            eventually!(10, "the page says moves are waiting", async {
                let t = badge(&b).await;
                t.contains("waiting").then_some(t)
            });
            tokio::time::sleep(Duration::from_secs(3)).await;
            let g = get_json(&r.url(&format!("/api/games/{game}")));
            assert_eq!(
                sans(&g),
                ["e4", "e5"],
                "nothing reached the relay without a link"
            );
            // Back: everything goes, once, in order.
            link.set_cut(false);
            eventually!(30, "all sent", async {
                (badge(&b).await == "all sent").then_some(())
            });
            let g = get_json(&r.url(&format!("/api/games/{game}")));
            assert_eq!(sans(&g), ["e4", "e5", "Nf3", "Nc6", "Bc4"]);
            assert_eq!(g["moves"][0]["clk_ms"], 5_395_000);

            // The result, from the page.
            b.client()
                .find(Locator::Css("#result"))
                .await
                .expect("result select")
                .select_by_value("1-0")
                .await
                .expect("choose 1-0");
            b.click("#set-result").await;
            eventually!(10, "the result stored", async {
                let g = get_json(&r.url(&format!("/api/games/{game}")));
                (g["result"] == "1-0").then_some(())
            });
            b.screenshot("entered").await;
            b.quit().await;

            // Spectators saw every move as it was stored, the takeback too.
            let start = Instant::now();
            let frames = spectator.until(10, |m| m["type"] == "result");
            let seen: Vec<String> = frames
                .iter()
                .filter_map(|m| match m["type"].as_str() {
                    Some("move") => Some(m["move"]["san"].as_str()?.to_string()),
                    Some("truncate") => Some(format!("-{}", m["from_ply"])),
                    _ => None,
                })
                .collect();
            assert_eq!(
                seen,
                ["e4", "e5", "Nf3", "Nc6", "Bb5", "-5", "Bc4"],
                "{frames:?} after {:?}",
                start.elapsed()
            );
            let pgn = get(&r.url("/api/rounds/1/pgn")).text();
            assert!(pgn.contains("3. Bc4 1-0"), "{pgn}");
        },
    );
}

/// The games the emulated boards play: short, with clocks, ending in mate.
const HALL_GAMES: &str = "[Event \"Hall\"]\n[TimeControl \"300+0\"]\n[Result \"1-0\"]\n\n\
1. e4 {[%clk 0:04:59]} e5 {[%clk 0:04:59]} 2. Qh5 {[%clk 0:04:58]} Nc6 {[%clk 0:04:58]} \
3. Bc4 {[%clk 0:04:57]} Nf6 {[%clk 0:04:57]} 4. Qxf7# {[%clk 0:04:56]} 1-0\n\n\
[Event \"Hall\"]\n[TimeControl \"300+0\"]\n[Result \"0-1\"]\n\n\
1. f3 {[%clk 0:04:59]} e5 {[%clk 0:04:59]} 2. g4 {[%clk 0:04:58]} Qh4# {[%clk 0:04:58]} 0-1\n\n\
[Event \"Hall\"]\n[TimeControl \"300+0\"]\n[Result \"1-0\"]\n\n\
1. e4 {[%clk 0:04:59]} e5 {[%clk 0:04:59]} 2. Nf3 {[%clk 0:04:58]} d6 {[%clk 0:04:58]} \
3. Bc4 {[%clk 0:04:57]} Bg4 {[%clk 0:04:57]} 4. Nc3 {[%clk 0:04:56]} g6 {[%clk 0:04:56]} \
5. Nxe5 {[%clk 0:04:55]} Bxd1 {[%clk 0:04:55]} 6. Bxf7+ {[%clk 0:04:54]} Ke7 {[%clk 0:04:54]} \
7. Nd5# {[%clk 0:04:53]} 1-0\n";

/// A round of 8 boards, every source at once: 3 e-boards on emulated boards, 2 boards typed
/// on the move-entry page in Chromium (one with its link cut for some moves), 3 games from a
/// PGN URL that grows as a live round's file does, and the Lichess broadcast set up from
/// relay. The round PGN ends with all 8 games exact, a spectator saw every move, and the
/// Lichess stand-in holds all 8.
#[test]
fn browser_every_board_of_a_round_in_one_broadcast() {
    browser_test(
        "browser_every_board_of_a_round_in_one_broadcast",
        || async {
            use super::serve_lichess::{LICHESS_TOKEN, start_standin};
            use super::serve_sources::PgnServer;
            let dir = temp_dir("browser-every-board");
            let hall_pgn = dir.join("hall.pgn");
            std::fs::write(&hall_pgn, HALL_GAMES).expect("write the hall's games");
            let go = dir.join("go");
            let hall_pgn_arg = hall_pgn.display().to_string();
            let go_arg = go.display().to_string();
            let mut emu = super::service::Emulator::start(
                "browser-every-board-hall",
                &[
                    "--boards",
                    "3",
                    "--speed",
                    "5",
                    "--noise",
                    "0",
                    "--pgn",
                    &hall_pgn_arg,
                    "--start-file",
                    &go_arg,
                ],
            );
            let db = format!("sqlite://{}/relay.db", dir.display());
            let (lichess, standin) = start_standin(true);
            let r = Relay::serve(
                &dir,
                &[
                    "--db",
                    &db,
                    "--port",
                    &emu.ports(),
                    "--admin-token",
                    TOKEN,
                    "--lichess-token",
                    LICHESS_TOKEN,
                    "--lichess-url",
                    &lichess,
                ],
            );
            let pairings: Vec<Value> = (1..=8)
            .map(|b| json!({"board_no": b, "white": {"name": format!("White {b}")}, "black": {"name": format!("Black {b}")}}))
            .collect();
            send(&r, "PUT", "/api/rounds/1/pairings", &Value::Array(pairings));
            // Lichess, set up from relay before the round starts.
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
                .args([
                    "lichess",
                    "setup",
                    "--db",
                    &db,
                    "--tournament",
                    "1",
                    "--token",
                    LICHESS_TOKEN,
                    "--url",
                    &lichess,
                ])
                .output()
                .expect("relay lichess setup");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            // The e-boards take three boards; the others are typed or come from the source.
            let eboards: Vec<u64> = eventually!(30, "three e-boards on boards", async {
                let list = get_json(&r.url("/api/eboards"));
                let mut b: Vec<u64> = list
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e["board_no"].as_u64())
                    .collect();
                b.sort_unstable();
                (b.len() == 3).then_some(b)
            });
            let free: Vec<u64> = (1..=8).filter(|b| !eboards.contains(b)).collect();
            let (typed, sourced) = (free[..2].to_vec(), free[2..].to_vec());
            let mut spectator = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
            spectator.until(5, |m| m["type"] == "snapshot");
            std::fs::write(&go, b"").expect("start the hall's clocks");

            // The source: a file that grows.
            let source = PgnServer::start();
            let file = |moves: [&str; 3], results: [&str; 3]| {
                let mut text = String::new();
                for (i, b) in sourced.iter().enumerate() {
                    text.push_str(&format!(
                    "[Event \"Side hall\"]\n[Board \"{b}\"]\n[White \"White {b}\"]\n[Black \"Black {b}\"]\n[Result \"{}\"]\n\n{} {}\n\n",
                    results[i], moves[i], results[i]
                ));
                }
                text
            };
            source.set(&file(
                ["1. c4 {[%clk 1:30:00]}", "1. Nf3", "1. b3 e5"],
                ["*", "*", "*"],
            ));
            send(
                &r,
                "POST",
                "/api/rounds/1/sources",
                &json!({"url": format!("http://127.0.0.1:{}/side.pgn", source.port), "boards": format!("{}-{}", sourced[0], sourced[2])}),
            );

            // The two typed boards, in Chromium; the second loses its link for two moves.
            let op = send(
                &r,
                "POST",
                "/api/rounds/1/operators",
                &json!({"boards": typed}),
            );
            let op = op["token"].as_str().expect("token").to_string();
            let round = get_json(&r.url("/api/rounds/1"));
            let game_of = |board: u64| {
                round["games"]
                    .as_array()
                    .and_then(|gs| gs.iter().find(|g| g["board_no"] == board))
                    .and_then(|g| g["id"].as_i64())
                    .expect("a game on the board")
            };
            let link = Link::to(r.base.trim_start_matches("http://").to_string());
            let b = Browser::start("browser_every_board_of_a_round_in_one_broadcast").await;
            let open = |board: u64| {
                format!(
                    "http://127.0.0.1:{}/enter.html?game={}#token={op}",
                    link.port,
                    game_of(board)
                )
            };
            b.goto(&open(typed[0])).await;
            eventually!(10, "the first typed board's page", async {
                let t = b
                    .js(
                        "return document.getElementById('players').textContent;",
                        vec![],
                    )
                    .await;
                t.as_str()
                    .filter(|t| t.contains(&format!("Board {}", typed[0])))
                    .map(|_| ())
            });
            for (i, (from, to)) in [
                ("e2", "e4"),
                ("e7", "e5"),
                ("g1", "f3"),
                ("b8", "c6"),
                ("f1", "b5"),
                ("a7", "a6"),
            ]
            .into_iter()
            .enumerate()
            {
                play(&b, from, to, i + 1).await;
            }
            eventually!(20, "the first typed board sent", async {
                (badge(&b).await == "all sent").then_some(())
            });
            b.goto(&open(typed[1])).await;
            eventually!(10, "the second typed board's page", async {
                let t = b
                    .js(
                        "return document.getElementById('players').textContent;",
                        vec![],
                    )
                    .await;
                t.as_str()
                    .filter(|t| t.contains(&format!("Board {}", typed[1])))
                    .map(|_| ())
            });
            play(&b, "d2", "d4", 1).await;
            play(&b, "d7", "d5", 2).await;
            play(&b, "c2", "c4", 3).await;
            link.set_cut(true);
            play(&b, "e7", "e6", 4).await;
            play(&b, "b1", "c3", 5).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            link.set_cut(false);
            play(&b, "g8", "f6", 6).await;
            b.client()
                .find(Locator::Css("#result"))
                .await
                .expect("result select")
                .select_by_value("1/2-1/2")
                .await
                .expect("choose the draw");
            b.click("#set-result").await;
            eventually!(30, "the second typed board sent", async {
                (badge(&b).await == "all sent").then_some(())
            });
            b.quit().await;
            // The first typed game's result, by the arbiter.
            send(
                &r,
                "POST",
                &format!("/api/games/{}/result", game_of(typed[0])),
                &json!({"result": "1-0"}),
            );

            // The source's file grows to the end of its games.
            source.set(&file(
                [
                    "1. c4 {[%clk 1:30:00]} e5 {[%clk 1:29:58]} 2. Nc3",
                    "1. Nf3 d5 2. g3",
                    "1. b3 e5 2. Bb2 Nc6",
                ],
                ["1-0", "0-1", "1/2-1/2"],
            ));

            // Everything in: every game with its result (the hall's by mate).
            let games = eventually!(120, "all 8 games over", async {
                let g = get_json(&r.url("/api/rounds/1"))["games"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                (g.len() == 8 && g.iter().all(|g| g["result"] != "*")).then_some(g)
            });
            // The hall's boards would start their next games: stopped now.
            let _ = emu.child.kill();
            let full: Vec<Value> = games
                .iter()
                .map(|g| get_json(&r.url(&format!("/api/games/{}", g["id"]))))
                .collect();
            let on = |board: u64| full.iter().find(|g| g["board_no"] == board).expect("board");
            assert_eq!(sans(on(typed[0])), ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]);
            assert_eq!(sans(on(typed[1])), ["d4", "d5", "c4", "e6", "Nc3", "Nf6"]);
            assert_eq!(sans(on(sourced[0])), ["c4", "e5", "Nc3"]);
            assert_eq!(on(sourced[0])["moves"][1]["clk_ms"], 5_398_000);
            assert_eq!(sans(on(sourced[1])), ["Nf3", "d5", "g3"]);
            assert_eq!(sans(on(sourced[2])), ["b3", "e5", "Bb2", "Nc6"]);
            let hall: Vec<Vec<String>> = relay_core::pgn::read_games(HALL_GAMES)
                .into_iter()
                .map(|g| {
                    g.expect("hall game")
                        .moves
                        .iter()
                        .map(|m| m.san.to_string())
                        .collect()
                })
                .collect();
            for board in &eboards {
                assert!(
                    hall.contains(&sans(on(*board))),
                    "board {board}: {:?}",
                    sans(on(*board))
                );
            }

            // The round PGN holds the 8 games as they stand.
            let pgn = get(&r.url("/api/rounds/1/pgn")).text();
            let read: Vec<_> = relay_core::pgn::read_games(&pgn)
                .into_iter()
                .map(|g| g.expect("round PGN"))
                .collect();
            assert_eq!(read.len(), 8, "{pgn}");
            for g in &full {
                let board = g["board_no"].to_string();
                let p = read
                    .iter()
                    .find(|p| p.tags.get("Board") == Some(board.as_str()))
                    .expect("the board's game");
                let moves: Vec<String> = p.moves.iter().map(|m| m.san.to_string()).collect();
                assert_eq!(moves, sans(g), "board {board}");
                assert_eq!(
                    p.result.to_string(),
                    g["result"].as_str().unwrap_or(""),
                    "board {board}"
                );
            }

            // The spectator saw every move: its frames, takebacks applied, give every game.
            let mut frames = Vec::new();
            while let Some(m) = spectator.next(Duration::from_secs(1)) {
                frames.push(m);
            }
            let mut seen: std::collections::HashMap<i64, Vec<String>> = Default::default();
            for m in &frames {
                let Some(id) = m["game_id"].as_i64() else {
                    continue;
                };
                match m["type"].as_str() {
                    Some("move") => {
                        let ply = m["move"]["ply"].as_u64().unwrap_or(0) as usize;
                        let list = seen.entry(id).or_default();
                        list.truncate(ply.saturating_sub(1));
                        list.push(m["move"]["san"].as_str().unwrap_or("").to_string());
                    }
                    Some("truncate") => {
                        let from = m["from_ply"].as_u64().unwrap_or(1) as usize;
                        seen.entry(id).or_default().truncate(from - 1);
                    }
                    _ => {}
                }
            }
            for g in &full {
                let id = g["id"].as_i64().expect("id");
                assert_eq!(
                    seen.get(&id).cloned().unwrap_or_default(),
                    sans(g),
                    "board {}",
                    g["board_no"]
                );
            }

            // Lichess, set up from relay, ends with all 8.
            let ids: Vec<String> = full.iter().map(|g| format!("relay-{}", g["id"])).collect();
            eventually!(30, "all 8 on the Lichess stand-in", async {
                let s = standin.lock().expect("lock");
                ids.iter()
                    .all(|id| {
                        let want = full
                            .iter()
                            .find(|g| format!("relay-{}", g["id"]) == *id)
                            .map(|g| sans(g).len());
                        s.games.get(id).map(|(_, g)| g.moves.len()) == want
                    })
                    .then_some(())
            });
        },
    );
}
