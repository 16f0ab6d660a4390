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
