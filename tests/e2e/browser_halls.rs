//! Several halls, one event, in the cloud relay's console (real headless Chromium). Two venue
//! relays, played here by hand-made batches, push one event key to a cloud relay: hall A
//! boards 1 and 2, hall B boards 101 and 1, where hall A's game already is. The console shows
//! each board's hall with its link, the clash with a form to place hall B's game, which an
//! arbiter places on board 201 (after a taken board is refused); then hall A's board 2
//! renumbered onto hall B's 101, shown as staying on board 2 and placed on board 5; and the
//! tournament's event key, edited from the console.

use super::browser::{Browser, TOKEN, blocking, browser_test, eventually, try_json};
use super::service::{Relay, agent, request};
use super::temp_dir;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

const PUSH_TOKEN: &str = "push-secret-1";
const EVENT: &str = "olympiad-2026";

/// A venue's tournament as it pushes it: one round, numbered 1, under the event's key.
fn tournament(id: i64, name: &str, round: i64) -> Value {
    json!({
        "id": id, "name": name, "site": null, "start_date": "2026-11-28", "end_date": null,
        "time_control": "5400+30", "delay_secs": 0, "event_key": EVENT,
        "rounds": [{
            "id": round, "tournament_id": id, "number": "1", "date": "2026-11-28",
            "delay_secs": null, "final": false, "seq": 0, "auto": false,
        }],
    })
}

/// A venue's game: its moves in UCI from the start (the cloud replays them and works out the
/// SAN and positions itself), plies from 1.
fn game(
    id: i64,
    round: i64,
    board: u32,
    white: &str,
    black: &str,
    moves: &[(&str, &str)],
) -> Value {
    json!({
        "id": id, "round_id": round,
        "pairing": {"board_no": board, "white": {"name": white}, "black": {"name": black}},
        "result": "*", "termination": null, "status": "live", "start_fen": null, "chess960": false,
        "orientation": null, "result_at_ms": null, "edits": 0,
        "moves": moves.iter().enumerate().map(|(i, (uci, san))| json!({
            "ply": i + 1, "san": san, "uci": uci, "clk_ms": 5_400_000 - 1000 * i as u64,
            "emt_ms": 1000, "accepted_at_ms": 1_764_000_000_000_i64 + 1000 * i as i64, "fen_after": "",
        })).collect::<Vec<_>>(),
    })
}

/// One of the two halls: what it pushes, and the number of its last batch.
struct Hall {
    origin: &'static str,
    name: &'static str,
    tournament: Value,
    batch: AtomicI64,
}

impl Hall {
    fn batch(&self, games: Vec<Value>) -> Vec<u8> {
        let n = self.batch.fetch_add(1, Ordering::SeqCst) + 1;
        json!({
            "origin": self.origin, "name": self.name, "batch": n,
            "tournaments": [self.tournament], "games": games,
        })
        .to_string()
        .into_bytes()
    }

    /// Pushes `games` (the whole state of each) as a venue does; the cloud's reply.
    fn push(&self, base: &str, games: Vec<Value>) -> Value {
        let body = self.batch(games);
        let auth = format!("Bearer {PUSH_TOKEN}");
        let answer = blocking(|| {
            request(
                "POST",
                &format!("{base}/api/push"),
                &[
                    ("Content-Type", "application/json"),
                    ("Authorization", auth.as_str()),
                ],
                Some(&body),
            )
        });
        assert_eq!(
            answer.status,
            200,
            "{} pushed: {}",
            self.name,
            answer.text()
        );
        answer.json()
    }
}

/// What a venue sends when nothing changed (every few seconds, as a real venue's heartbeat),
/// so that both halls' links stay "up" however long the browser takes. Ends soon after
/// `stop` is set, sending nothing more.
fn heartbeats(
    base: String,
    halls: Arc<[Hall; 2]>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let auth = format!("Bearer {PUSH_TOKEN}");
        loop {
            for _ in 0..30 {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            for hall in halls.iter() {
                // The cloud may be gone at the end of the test: an error here is no failure.
                let _ = agent()
                    .post(&format!("{base}/api/push"))
                    .header("Authorization", &auth)
                    .header("Content-Type", "application/json")
                    .send(&hall.batch(Vec::new())[..]);
            }
        }
    })
}

/// Each games row of the console: board, hall cell text, its `data-link`, and whether the
/// Hall column shows.
const READ_ROWS: &str = r#"
return [...document.querySelectorAll('#games tbody tr')].map((row) => {
  const hall = row.querySelector('td.hall');
  return { board: Number(row.querySelector('.board-no').textContent), hall: hall.textContent,
           link: hall.dataset.link || null, shown: getComputedStyle(hall).display !== 'none' };
});
"#;

/// The venues table's clash and the alert banner's, as the console shows them.
const READ_CLASH: &str = r#"
const item = (li) => li && { text: li.textContent, form: li.querySelector('form.settle-form') !== null,
  placeholder: li.querySelector('form.settle-form input')?.placeholder ?? null,
  button: li.querySelector('form.settle-form button')?.textContent ?? null,
  take: li.querySelector('button.take-venue') !== null };
const banner = document.getElementById('alert-banner');
return { venue: item(document.querySelector('#venues li[data-clash]')),
         alert: banner.hidden ? null : item([...document.querySelectorAll('#alert-list li')].find((li) => li.textContent.includes('hall-b'))) };
"#;

/// The venues table's item for hall A's game renumbered onto a board hall B's game holds.
const RENUMBERED_LI: &str = "#venues li[data-clash][data-renumbered]";

/// That item's text and whether it has the form to place the game, or null.
const READ_RENUMBERED: &str = r#"
const li = [...document.querySelectorAll('#venues li[data-clash]')].find((li) => li.textContent.includes('renumbered'));
if (!li) return null;
li.dataset.renumbered = 'yes';
return { text: li.textContent, form: li.querySelector('form.settle-form') !== null };
"#;

/// The text of the console's error banner, or null while it is hidden.
const READ_ERROR: &str =
    "const e = document.getElementById('error'); return e.hidden ? null : e.textContent;";

/// hall-b's clashes in `/health`.
fn clashes(base: &str) -> Option<Vec<Value>> {
    let health = try_json(&format!("{base}/health"))?;
    let halls = health["pushed_from"].as_array()?;
    let b = halls.iter().find(|v| v["name"] == "hall-b")?;
    Some(b["conflicts"].as_array()?.clone())
}

#[test]
fn browser_halls_each_board_its_hall_and_a_clash_placed_from_the_console() {
    browser_test("halls", || async {
        let dir = temp_dir("browser-halls");
        let db = format!("sqlite://{}", dir.join("cloud.db").display());
        let cloud = blocking(|| {
            Relay::serve(
                &dir,
                &[
                    "--db",
                    db.as_str(),
                    "--no-boards",
                    "--admin-token",
                    TOKEN,
                    "--accept-push-token",
                    PUSH_TOKEN,
                ],
            )
        });
        let halls = Arc::new([
            Hall {
                origin: "0a1b2c3d-hall-a",
                name: "hall-a",
                tournament: tournament(7, "Olympiad", 70),
                batch: AtomicI64::new(0),
            },
            Hall {
                origin: "4e5f6a7b-hall-b",
                name: "hall-b",
                tournament: tournament(3, "Olympiad (hall B)", 30),
                batch: AtomicI64::new(0),
            },
        ]);
        let [a, b_hall] = &*halls;
        let reply = a.push(
            &cloud.base,
            vec![
                game(
                    71,
                    70,
                    1,
                    "Anand",
                    "Gukesh",
                    &[("e2e4", "e4"), ("e7e5", "e5")],
                ),
                game(72, 70, 2, "Carlsen", "Ding", &[("d2d4", "d4")]),
            ],
        );
        assert_eq!(reply["conflicts"], json!([]), "{reply}");
        // Hall B's board 1 is a board hall A's game holds: held back, a clash.
        let reply = b_hall.push(
            &cloud.base,
            vec![
                game(31, 30, 101, "Hou", "Ju", &[("c2c4", "c4")]),
                game(33, 30, 1, "Yifan", "Lei", &[("g1f3", "Nf3")]),
            ],
        );
        let clash = &reply["conflicts"][0];
        assert_eq!(
            (&clash["clash"], &clash["game_id"], &clash["board_no"]),
            (&json!(true), &json!(33), &json!(1)),
            "{reply}"
        );
        let stop = Arc::new(AtomicBool::new(false));
        let beating = heartbeats(cloud.base.clone(), halls.clone(), stop.clone());

        let tournaments = try_json(&cloud.url("/api/tournaments")).expect("tournaments");
        assert_eq!(
            tournaments.as_array().map(Vec::len),
            Some(1),
            "one tournament for the event: {tournaments}"
        );
        let tid = tournaments[0]["id"].as_i64().expect("tournament id");
        let round = tournaments[0]["rounds"][0]["id"]
            .as_i64()
            .expect("round id");

        let b = Browser::start("halls").await;
        let opened = Instant::now();
        b.client()
            .set_window_size(1280, 1700)
            .await
            .expect("a window that shows the whole console");
        b.goto(&cloud.url(&format!("/console.html?round={round}")))
            .await;
        b.enter_token().await;

        // Each board its hall, from /health, with the link up.
        let rows = eventually!(20, "three rows, each with its hall", async {
            let rows = b.js(READ_ROWS, vec![]).await;
            let list = rows.as_array()?;
            (list.len() == 3 && list.iter().all(|r| r["link"].is_string())).then_some(rows)
        });
        println!(
            "rows {} ms after opening the console: {rows}",
            opened.elapsed().as_millis()
        );
        let row = |board: i64| {
            rows.as_array()
                .into_iter()
                .flatten()
                .find(|r| r["board"] == board)
                .cloned()
                .unwrap_or_else(|| panic!("no row of board {board}: {rows}"))
        };
        for (board, hall) in [(1, "hall-a"), (2, "hall-a"), (101, "hall-b")] {
            let r = row(board);
            assert_eq!(r["hall"], format!("{hall} · up"), "board {board}: {r}");
            assert_eq!(r["link"], "up", "board {board}: {r}");
            assert_eq!(r["shown"], true, "the Hall column is hidden: {r}");
        }
        let header_shown = b
            .js(
                "return getComputedStyle(document.querySelector('#games th.hall')).display !== 'none';",
                vec![],
            )
            .await;
        assert_eq!(header_shown, true, "the Hall header is hidden");

        // The clash, in the venues table and the alert, with the form instead of the
        // take-venue button, naming the hall that holds the board.
        let shown = eventually!(15, "the clash with its form", async {
            let v = b.js(READ_CLASH, vec![]).await;
            (v["venue"]["form"] == true && v["alert"]["form"] == true).then_some(v)
        });
        println!("the clash as shown: {shown}");
        for place in ["venue", "alert"] {
            let item = &shown[place];
            let text = item["text"].as_str().unwrap_or("");
            // The board, the hall holding it and the hall waiting (the round is read from the
            // server's message, whose wording is not held here).
            assert!(
                text.contains("board 1")
                    && text.contains("hall hall-a's game holds it")
                    && text.contains("hall-b's game for it is held back"),
                "{place}: {item}"
            );
            assert_eq!(item["placeholder"], "board", "{place}: {item}");
            assert_eq!(item["button"], "Place on board", "{place}: {item}");
            assert_eq!(
                item["take"], false,
                "{place}: a take-venue button on a clash: {item}"
            );
        }
        // The tournament's event key, as the pushes set it.
        let key = eventually!(10, "the event key in the tournament's form", async {
            let v = b
                .js("return document.getElementById('event-key').value;", vec![])
                .await;
            v.as_str().filter(|k| !k.is_empty()).map(str::to_string)
        });
        assert_eq!(key, EVENT);
        // Three panels abreast below the games: none pushes the page wider than the window.
        let wide = b
            .js(
                "const w = document.documentElement.clientWidth;
                 const out = [...document.querySelectorAll('main *')]
                   .filter((e) => e.getBoundingClientRect().right > w + 1 && !e.closest('.table-wrap'))
                   .map((e) => e.id || e.className || e.tagName);
                 return { scroll: document.documentElement.scrollWidth - w, out };",
                vec![],
            )
            .await;
        assert_eq!(wide["scroll"], 0, "the console scrolls sideways: {wide}");
        b.screenshot("clash").await;

        // A board that is taken is refused, and the console says so.
        let field = "#venues form.settle-form input";
        b.type_into(field, "2").await;
        b.click("#venues form.settle-form button").await;
        let error = eventually!(10, "the refusal of a taken board", async {
            b.js(READ_ERROR, vec![]).await.as_str().map(str::to_string)
        });
        println!("placing on board 2: {error}");
        assert!(
            error.contains("board 2") && error.contains("Placing the game held back from board 1"),
            "{error}"
        );
        assert_eq!(
            clashes(&cloud.base).map(|c| c.len()),
            Some(1),
            "a refused board settled the clash"
        );

        // Board 201 is free: hall B's game goes there, and is hall B's on the console.
        b.type_into(field, "201").await;
        b.click("#venues form.settle-form button").await;
        let placed = eventually!(15, "board 201 in the games table, hall-b's", async {
            let rows = b.js(READ_ROWS, vec![]).await;
            rows.as_array()?
                .iter()
                .find(|r| r["board"] == 201 && r["hall"] == "hall-b · up")
                .cloned()
        });
        assert_eq!(placed["link"], "up", "{placed}");
        assert_eq!(
            b.js(READ_ERROR, vec![]).await,
            Value::Null,
            "the refusal is still shown"
        );
        assert_eq!(
            clashes(&cloud.base),
            Some(Vec::new()),
            "the clash is still in /health"
        );
        let after = eventually!(10, "the clash gone from the console", async {
            let v = b.js(READ_CLASH, vec![]).await;
            (v["venue"].is_null() && v["alert"]["form"] == false).then_some(v)
        });
        assert!(
            after["alert"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("since resolved")),
            "{after}"
        );
        let api = try_json(&cloud.url(&format!("/api/rounds/{round}"))).expect("the round");
        let mut boards: Vec<(i64, String, usize)> = api["games"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|g| {
                (
                    g["board_no"].as_i64().unwrap_or(0),
                    g["white"]["name"].as_str().unwrap_or("").to_string(),
                    g["moves"].as_array().map_or(0, Vec::len),
                )
            })
            .collect();
        boards.sort();
        assert_eq!(
            boards,
            [
                (1, "Anand".to_string(), 2),
                (2, "Carlsen".to_string(), 1),
                (101, "Hou".to_string(), 1),
                (201, "Yifan".to_string(), 1)
            ],
            "{api}"
        );

        // Hall A renumbers board 2 onto 101, hall B's here: its game stays on board 2, and
        // the console says so, with the same form; placed on board 5, it is hall A's there.
        let reply = a.push(
            &cloud.base,
            vec![game(72, 70, 101, "Carlsen", "Ding", &[("d2d4", "d4")])],
        );
        assert_eq!(reply["conflicts"][0]["board_no"], 101, "{reply}");
        let renumbered = eventually!(15, "the renumbered game's clash", async {
            let v = b.js(READ_RENUMBERED, vec![]).await;
            (v["form"] == true).then_some(v)
        });
        println!("the renumbered game as shown: {renumbered}");
        let text = renumbered["text"].as_str().unwrap_or("");
        assert!(
            text.contains("board 101")
                && text.contains("hall hall-b's game holds it")
                && text.contains("hall-a renumbered its game to it, which stays on board 2 here"),
            "{renumbered}"
        );
        b.type_into(&format!("{RENUMBERED_LI} form.settle-form input"), "5")
            .await;
        b.click(&format!("{RENUMBERED_LI} form.settle-form button"))
            .await;
        eventually!(15, "board 5 in the games table, hall-a's", async {
            let rows = b.js(READ_ROWS, vec![]).await;
            let rows = rows.as_array()?;
            let on = |n: i64| rows.iter().find(|r| r["board"] == n).cloned();
            (on(5)?["hall"] == "hall-a · up" && on(2).is_none()).then_some(())
        });
        eventually!(10, "the renumbered game's clash gone", async {
            let v = b.js(READ_RENUMBERED, vec![]).await;
            v.is_null().then_some(())
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        b.screenshot("console").await;
        // The venues stop: the event key is edited from here on without them.
        stop.store(true, Ordering::SeqCst);
        blocking(|| beating.join()).expect("the heartbeats ended");

        // The event key from the console: the browser refuses what is no key, the server a
        // key another tournament has, and a good one is saved.
        let mismatch = b
            .js(
                "const f = document.getElementById('event-key'); f.value = 'two words';
                 const bad = f.validity.patternMismatch; f.value = arguments[0]; return bad;",
                vec![json!(EVENT)],
            )
            .await;
        assert_eq!(mismatch, true, "the field takes a key with a space");
        let other = blocking(|| {
            request(
                "POST",
                &cloud.url("/api/tournaments"),
                &[
                    ("Content-Type", "application/json"),
                    ("Authorization", &format!("Bearer {TOKEN}")),
                ],
                Some(br#"{"name": "Another event", "event_key": "club-open"}"#),
            )
        });
        assert_eq!(other.status, 201, "{}", other.text());
        let message = "return document.getElementById('tournament-settings-msg').textContent;";
        b.type_into("#event-key", "club-open").await;
        b.click("#event-key-save").await;
        let refused = eventually!(10, "the 409 under the form", async {
            let v = b.js(message, vec![]).await;
            v.as_str()
                .filter(|t| t.contains("club-open"))
                .map(str::to_string)
        });
        assert!(refused.starts_with("Saving the event key"), "{refused}");
        b.type_into("#event-key", "olympiad-2026.cloud").await;
        b.click("#event-key-save").await;
        eventually!(10, "the key saved", async {
            let v = b.js(message, vec![]).await;
            (v == "Event key set to olympiad-2026.cloud.").then_some(())
        });
        let t = try_json(&cloud.url(&format!("/api/tournaments/{tid}"))).expect("tournament");
        assert_eq!(t["event_key"], "olympiad-2026.cloud", "{t}");
        // Blank takes it away.
        b.type_into("#event-key", "").await;
        b.click("#event-key-save").await;
        eventually!(10, "the key taken away", async {
            let t = try_json(&cloud.url(&format!("/api/tournaments/{tid}")))?;
            t["event_key"].is_null().then_some(())
        });
        b.quit().await;
    });
}
