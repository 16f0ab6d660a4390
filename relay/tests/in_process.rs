//! The service in-process: the router answered with `oneshot` (no listener, no port) over the
//! real hall, writer and SQLite store. What only a real process shows (signals, ptys, the
//! browser, kills) stays in the end-to-end tests of `tests/e2e`.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use boards::protocol::{ClockMessage, ClockSide, Message, Orientation, Placement};
use boards::transport::PortEvent;
use relay::serve::api::{app, round_json};
use relay::serve::feeds::SnapshotOf;
use relay::serve::hall::PortInput;
use relay::serve::{Carry, Core, Stores};
use relay_core::recorder::RecorderConfig;
use relay_store::Store;
use relay_store::{GameId, RoundId};
use serde_json::{Value, json};
use shakmaty::Position;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tower::ServiceExt;

const TOKEN: &str = "in-process-secret";

/// A fresh SQLite file of its own for each test (tests of this file run side by side).
fn db_url() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir =
        boards::testdata::temp_dir(&format!("in-process-{}", N.fetch_add(1, Ordering::Relaxed)));
    format!("sqlite:{}", dir.join("relay.db").display())
}

async fn start() -> (Core, Router) {
    start_with(RecorderConfig::default()).await
}

async fn start_with(cfg: RecorderConfig) -> (Core, Router) {
    let url = db_url();
    let readers = Store::open(&url).await.expect("store");
    let current = readers
        .create_auto_round("Relay test", "2026-11-24")
        .await
        .expect("round");
    let core = Core::start(
        Stores::open(readers, &url).await.expect("store"),
        Some(TOKEN.into()),
        current,
        Carry::default(),
        cfg,
        Default::default(),
        1,
    )
    .expect("the writer's and the hall's threads");
    let router = app(core.shared.clone(), None, None);
    (core, router)
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Value,
}

async fn call(
    app: &Router,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    auth: Option<&str>,
) -> Answer {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(t) = auth {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let req = req
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_vec())))
        .expect("request");
    let res = app.clone().oneshot(req).await.expect("infallible router");
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = axum::body::to_bytes(res.into_body(), 16 << 20)
        .await
        .expect("body");
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    Answer {
        status,
        headers,
        body,
    }
}

async fn admin(app: &Router, method: &str, path: &str, body: Value) -> Answer {
    let text = body.to_string();
    call(app, method, path, Some(text.as_bytes()), Some(TOKEN)).await
}

#[tokio::test]
async fn the_router_answers_bad_requests_clearly_and_changes_nothing() {
    let (_core, app) = start().await;
    assert_eq!(
        call(&app, "GET", "/health", None, None).await.status,
        StatusCode::OK
    );
    let before = call(&app, "GET", "/api/tournaments", None, None).await.body;

    // No token, a wrong token, malformed JSON, an unknown field: each refused, named.
    let t = br#"{"name": "Open"}"#;
    let none = call(&app, "POST", "/api/tournaments", Some(t), None).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        none.headers
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.as_bytes()),
        Some(&b"Bearer"[..])
    );
    assert!(
        none.body["error"]
            .as_str()
            .is_some_and(|e| e.contains("admin token")),
        "{}",
        none.body
    );
    let wrong = call(&app, "POST", "/api/tournaments", Some(t), Some("not-it")).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN, "{}", wrong.body);
    let bad = call(
        &app,
        "POST",
        "/api/tournaments",
        Some(b"{not json"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.body["error"]
            .as_str()
            .is_some_and(|e| e.contains("malformed JSON")),
        "{}",
        bad.body
    );
    let unknown = admin(
        &app,
        "POST",
        "/api/tournaments",
        json!({"name": "x", "colour": 1}),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.body);
    assert_eq!(
        call(&app, "GET", "/api/tournaments", None, None).await.body,
        before
    );

    // Unknown ids are 404 before anything else, sockets included; a plain GET of a socket
    // is told what the endpoint is.
    for p in [
        "/api/rounds/999",
        "/api/games/abc",
        "/api/rounds/999/ws",
        "/api/games/999/ws",
    ] {
        let a = call(&app, "GET", p, None, None).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{p}: {}", a.body);
        assert!(a.body["error"].is_string(), "{p}");
    }
    let plain = call(&app, "GET", "/api/rounds/1/ws", None, None).await;
    assert_eq!(plain.status, StatusCode::BAD_REQUEST);
    assert!(
        plain.body["error"]
            .as_str()
            .is_some_and(|e| e.contains("WebSocket")),
        "{}",
        plain.body
    );

    // The contract for pages and platforms names every message.
    let schema = call(&app, "GET", "/api/ws-messages.schema.json", None, None).await;
    assert_eq!(schema.status, StatusCode::OK);
    let text = schema.body.to_string();
    for kind in [
        "snapshot",
        "move",
        "move_clock",
        "truncate",
        "result",
        "game",
        "clocks",
    ] {
        assert!(text.contains(&format!("\"{kind}\"")), "{kind}");
    }
}

/// Waits until the live feed's view stands at the store's change number of the round.
async fn caught_up(core: &Core, round: i64) -> i64 {
    let feed = core.shared.feeds.live(RoundId::from(round));
    for _ in 0..200 {
        let want = core
            .shared
            .store
            .round(RoundId::from(round))
            .await
            .expect("round")
            .seq;
        let (seq, _) = feed
            .snapshot(&core.shared.lookup, &core.shared.metrics, SnapshotOf::Full)
            .await
            .expect("snapshot");
        if seq == want {
            return seq.get();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the feed's view never reached the store's change number");
}

/// The SAN of every move of a game as the API gives it.
fn sans_of(game: &Value) -> Vec<&str> {
    game["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter_map(|m| m["san"].as_str())
        .collect()
}

/// The `round` or `game` of a snapshot, its parts put together as a page does.
fn snapshot_body(parts: &[relay::serve::wire::Frame], key: &str) -> Value {
    let mut v: Value = serde_json::from_str(parts[0].json()).expect("snapshot JSON");
    assert_eq!(v["type"], "snapshot");
    assert_eq!(v["more"].as_u64().unwrap_or(0) as usize, parts.len() - 1);
    let (holder, list) = if v["round"].is_object() {
        ("round", "games")
    } else {
        ("game", "moves")
    };
    for p in &parts[1..] {
        let more: Value = serde_json::from_str(p.json()).expect("part JSON");
        assert_eq!(more["type"], list);
        let items = more[list].as_array().cloned().expect("items");
        v[holder][list].as_array_mut().expect("list").extend(items);
    }
    v[key].clone()
}

#[tokio::test]
async fn the_view_kept_in_memory_is_the_view_the_store_gives() {
    let (core, app) = start().await;
    let t = admin(
        &app,
        "POST",
        "/api/tournaments",
        json!({"name": "Open", "time_control": "5400+30"}),
    )
    .await;
    assert_eq!(t.status, StatusCode::CREATED, "{}", t.body);
    let tid = t.body["id"].as_i64().expect("id");
    let r = admin(
        &app,
        "POST",
        &format!("/api/tournaments/{tid}/rounds"),
        json!({"number": "1"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let rid = r.body["id"].as_i64().expect("id");
    let pairings = json!([
        {"board_no": 1, "white": {"name": "Anderssen, Adolf", "rating": 2600}, "black": {"name": "Kieseritzky, Lionel"}},
        {"board_no": 2, "white": {"name": "Morphy, Paul"}, "black": {"name": "Duke Karl"}},
        {"board_no": 3, "white": {"name": "Steinitz, William"}, "black": {"name": "Zukertort, Johannes"}},
    ]);
    let p = admin(
        &app,
        "PUT",
        &format!("/api/rounds/{rid}/pairings"),
        pairings,
    )
    .await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    let round = call(&app, "GET", &format!("/api/rounds/{rid}"), None, None)
        .await
        .body;
    let ids: Vec<i64> = round["games"]
        .as_array()
        .expect("games")
        .iter()
        .filter_map(|g| g["id"].as_i64())
        .collect();
    assert_eq!(ids.len(), 3);

    // The view is built now, before anything is played: what follows reaches it only as
    // the messages clients get.
    caught_up(&core, rid).await;

    let play = |game: i64, sans: &'static [&'static str]| {
        let app = app.clone();
        async move {
            for (i, san) in sans.iter().enumerate() {
                let m = admin(
                    &app,
                    "POST",
                    &format!("/api/games/{game}/move"),
                    json!({"ply": i + 1, "san": san}),
                )
                .await;
                assert_eq!(m.status, StatusCode::OK, "{san}: {}", m.body);
            }
        }
    };
    play(ids[0], &["e4", "e5", "f4", "exf4", "Bc4", "Qh4+", "Kf1"]).await;
    play(ids[1], &["e4", "e5", "Nf3", "d6"]).await;
    // A takeback, a correction, a result, and a game replaced from PGN.
    let cut = admin(
        &app,
        "POST",
        &format!("/api/games/{}/truncate", ids[0]),
        json!({"ply": 6}),
    )
    .await;
    assert_eq!(cut.status, StatusCode::OK, "{}", cut.body);
    let fixed = admin(
        &app,
        "POST",
        &format!("/api/games/{}/move", ids[0]),
        json!({"ply": 6, "san": "Nf6"}),
    )
    .await;
    assert_eq!(fixed.status, StatusCode::OK, "{}", fixed.body);
    let back = admin(
        &app,
        "POST",
        &format!("/api/games/{}/truncate", ids[1]),
        json!({"ply": 4}),
    )
    .await;
    assert_eq!(back.status, StatusCode::OK, "{}", back.body);
    let res = admin(
        &app,
        "POST",
        &format!("/api/games/{}/result", ids[1]),
        json!({"result": "1-0", "termination": "resignation"}),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let pgn = "[White \"Steinitz, William\"]\n[Black \"Zukertort, Johannes\"]\n[Result \"*\"]\n\n1. d4 { [%clk 1:29:50] } d5 { [%clk 1:29:40] } 2. c4 *\n";
    let put = call(
        &app,
        "PUT",
        &format!("/api/games/{}/pgn", ids[2]),
        Some(pgn.as_bytes()),
        Some(TOKEN),
    )
    .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);

    caught_up(&core, rid).await;
    let feed = core.shared.feeds.live(RoundId::from(rid));
    let stored = serde_json::to_value(
        round_json(&core.shared.lookup, RoundId::from(rid), true)
            .await
            .expect("round"),
    )
    .expect("json");
    let (_, full) = feed
        .snapshot(&core.shared.lookup, &core.shared.metrics, SnapshotOf::Full)
        .await
        .expect("full");
    assert_eq!(snapshot_body(&full, "round"), stored);
    // Spectators' snapshot: the same with each game's last move only.
    let (_, summary) = feed
        .snapshot(
            &core.shared.lookup,
            &core.shared.metrics,
            SnapshotOf::Summary,
        )
        .await
        .expect("summary");
    let summary = snapshot_body(&summary, "round");
    for (s, g) in summary["games"]
        .as_array()
        .expect("games")
        .iter()
        .zip(stored["games"].as_array().expect("games"))
    {
        let last: Vec<Value> = g["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .last()
            .cloned()
            .into_iter()
            .collect();
        assert_eq!(s["moves"], Value::Array(last));
        assert_eq!(s["fen"], g["fen"]);
        assert_eq!((&s["result"], &s["status"]), (&g["result"], &g["status"]));
    }
    // A game page's snapshot is the game as the store has it.
    for id in &ids {
        let (_, game) = feed
            .snapshot(
                &core.shared.lookup,
                &core.shared.metrics,
                SnapshotOf::Game(GameId::from(*id)),
            )
            .await
            .expect("game");
        let mut from_store = call(&app, "GET", &format!("/api/games/{id}"), None, Some(TOKEN))
            .await
            .body;
        // Arbiters also get the game's edit count (what an edit names in If-Match) and its
        // record (illegal moves, clock corrections, joined late, moves recovered), which no feed carries;
        // everyone the game's tournament (for its standings and spoiler-free default).
        assert!(from_store["edits"].is_i64(), "{from_store}");
        assert!(from_store["tournament_id"].is_i64(), "{from_store}");
        assert_eq!(from_store["illegal_moves"], json!([]), "{from_store}");
        if let Some(o) = from_store.as_object_mut() {
            for k in [
                "edits",
                "tournament_id",
                "illegal_moves",
                "clock_adjustments",
                "joined_late",
                "recovered",
            ] {
                o.remove(k);
            }
        }
        assert_eq!(snapshot_body(&game, "game"), from_store, "game {id}");
    }
    let first = &stored["games"][0];
    let sans = sans_of(first);
    assert_eq!(sans, ["e4", "e5", "f4", "exf4", "Bc4", "Nf6"]);
    assert_eq!(stored["games"][1]["result"], "1-0");
    assert_eq!(
        stored["games"][1]["moves"].as_array().map(Vec::len),
        Some(3)
    );
    assert_eq!(
        stored["games"][2]["moves"].as_array().map(Vec::len),
        Some(3)
    );
}

const PORT: &str = "/dev/in-process-0";
const SERIAL: &str = "01025";

/// What a reader thread hands the hall when the board on `PORT` reports `board`.
fn reading(board: &shakmaty::Board) -> PortInput {
    PortInput {
        path: PORT.into(),
        event: PortEvent::Message {
            serial: Some(SERIAL.into()),
            message: Message::BoardDump {
                placement: Placement::from_board(board, Orientation::Normal),
            },
            raw: vec![],
            at: std::time::SystemTime::now(),
        },
    }
}

/// What a reader thread hands the hall when the board on `PORT` has told its serial number.
fn identified() -> PortInput {
    PortInput {
        path: PORT.into(),
        event: PortEvent::Identified {
            serial: SERIAL.into(),
            address: None,
            path: PORT.into(),
        },
    }
}

/// The board after `sans` from the start position.
fn after(sans: &[&str]) -> shakmaty::Board {
    let mut pos = shakmaty::Chess::default();
    for san in sans {
        boards::testdata::play_san(&mut pos, san);
    }
    pos.board().clone()
}

async fn eboard(app: &Router) -> Value {
    let list = call(app, "GET", "/api/eboards", None, Some(TOKEN))
        .await
        .body;
    list.as_array()
        .and_then(|l| l.iter().find(|e| e["serial"] == SERIAL))
        .cloned()
        .expect("the e-board is listed")
}

#[tokio::test]
async fn an_eboard_in_sync_shows_the_board_as_last_read() {
    let cfg = RecorderConfig {
        settle_ms: 50,
        ..RecorderConfig::default()
    };
    let (core, app) = start_with(cfg).await;
    let send = |i: PortInput| core.ports.send(i).expect("the hall takes readings");
    send(identified());
    send(reading(&shakmaty::Board::default()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    send(reading(&after(&["e4"])));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A piece in the hand: not a move, and still in sync, but the board as read.
    let mut lifted = after(&["e4"]);
    lifted.discard_piece_at(shakmaty::Square::E7);
    send(reading(&lifted));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let e = eboard(&app).await;
    assert_eq!(e["in_sync"], true, "{e}");
    assert_eq!(e["board_fen"], lifted.board_fen().to_string(), "{e}");
    // The move read from the board is stored and served.
    let game = e["game_id"].as_i64().expect("the e-board is on a game");
    let g = call(&app, "GET", &format!("/api/games/{game}"), None, None)
        .await
        .body;
    let sans = sans_of(&g);
    assert_eq!(sans, ["e4"]);
}

/// A clock reading from the board on `PORT`: `left`/`right` seconds, who runs, a fallen flag.
fn clock(left: u32, right: u32, running: Option<ClockSide>, flag: Option<ClockSide>) -> PortInput {
    PortInput {
        path: PORT.into(),
        event: PortEvent::Message {
            serial: Some(SERIAL.into()),
            message: Message::Clock {
                clock: ClockMessage::Time(boards::testdata::clock_reading(
                    left, right, running, flag,
                )),
            },
            raw: vec![],
            at: std::time::SystemTime::now(),
        },
    }
}

/// A flag falls and the players go on: the time forfeit is a proposal on the e-board, every
/// move after it is recorded with its clock (0:00:00 for the flagged side), and the e-board
/// says how many moves came after the proposal.
#[tokio::test]
async fn moves_after_a_flag_fall_are_recorded_and_counted_on_the_eboard() {
    let cfg = RecorderConfig {
        settle_ms: 50,
        ..RecorderConfig::default()
    };
    let (core, app) = start_with(cfg).await;
    let send = |i: PortInput| core.ports.send(i).expect("the hall takes readings");
    let pause = || tokio::time::sleep(Duration::from_millis(150));
    send(identified());
    send(reading(&shakmaty::Board::default()));
    send(clock(60, 60, None, None));
    pause().await;
    // White is on the left: the clock is started for White.
    send(clock(60, 60, Some(ClockSide::Left), None));
    pause().await;
    send(reading(&after(&["e4"])));
    pause().await;
    send(clock(12, 60, Some(ClockSide::Right), None));
    pause().await;
    send(reading(&after(&["e4", "e5"])));
    pause().await;
    send(clock(12, 8, Some(ClockSide::Left), None));
    pause().await;
    // White's flag falls; White plays on, and so does Black.
    send(clock(0, 8, Some(ClockSide::Left), Some(ClockSide::Left)));
    pause().await;
    send(reading(&after(&["e4", "e5", "Nf3"])));
    pause().await;
    send(clock(0, 8, Some(ClockSide::Right), Some(ClockSide::Left)));
    pause().await;
    send(reading(&after(&["e4", "e5", "Nf3", "Nc6"])));
    pause().await;
    send(clock(0, 5, Some(ClockSide::Left), Some(ClockSide::Left)));
    pause().await;
    let e = eboard(&app).await;
    assert_eq!(e["proposal"]["reason"], "time_forfeit", "{e}");
    assert_eq!(e["proposal"]["result"], "0-1", "{e}");
    assert_eq!(e["proposal"]["at_ply"], 2, "{e}");
    assert_eq!(e["proposal"]["moves_after"], 2, "{e}");
    let game = e["game_id"].as_i64().expect("the e-board is on a game");
    let g = call(&app, "GET", &format!("/api/games/{game}"), None, None)
        .await
        .body;
    let moves: Vec<(String, Option<u64>)> = g["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| {
            (
                m["san"].as_str().unwrap_or("").to_string(),
                m["clk_ms"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("e4".to_string(), Some(12_000)),
            ("e5".to_string(), Some(8_000)),
            ("Nf3".to_string(), Some(0)),
            ("Nc6".to_string(), Some(5_000)),
        ],
        "{g}"
    );
    assert_eq!(g["result"], "*", "a proposal ends nothing: {g}");
}

/// A venue's batch for the cloud route: one tournament, one round, one game with `ucis`.
fn push_batch(batch: i64, ucis: &[&str], result: &str) -> Value {
    let moves: Vec<Value> = ucis
        .iter()
        .enumerate()
        .map(|(i, u)| {
            json!({"ply": i + 1, "san": "?", "uci": u, "clk_ms": 5_400_000 - i as u64 * 1000,
                   "emt_ms": 1000, "accepted_at_ms": 1_700_000_000_000i64 + i as i64, "fen_after": "?"})
        })
        .collect();
    json!({
        "origin": "venue-a", "name": "hall laptop", "batch": batch,
        "tournaments": [{"id": 7, "name": "Venue Open", "site": "Hall", "start_date": null, "end_date": null,
                         "time_control": null, "delay_secs": 0,
                         "rounds": [{"id": 9, "tournament_id": 7, "number": "3", "date": null, "delay_secs": null,
                                     "final": false, "seq": 0, "auto": false}]}],
        "games": [{"id": 11, "round_id": 9,
                   "pairing": {"board_no": 1, "white": {"name": "A"}, "black": {"name": "B"}},
                   "result": result, "termination": null,
                   "status": if result == "*" { "live" } else { "finished" },
                   "start_fen": null, "chess960": false, "orientation": null, "result_at_ms": null,
                   "edits": 0, "moves": moves}]
    })
}

async fn tournaments(app: &Router) -> Value {
    call(app, "GET", "/api/tournaments", None, None).await.body
}

/// The tournament the venue of [`push_batch`] pushed, as this relay lists it.
async fn venue_tournament(app: &Router) -> Value {
    let ts = tournaments(app).await;
    ts.as_array()
        .expect("list")
        .iter()
        .find(|t| t["name"] == "Venue Open")
        .expect("mirrored")
        .clone()
}

async fn first_game(app: &Router, round: i64) -> Value {
    call(app, "GET", &format!("/api/rounds/{round}"), None, None)
        .await
        .body["games"][0]
        .clone()
}

async fn push(app: &Router, token: Option<&str>, body: &Value) -> Answer {
    let text = body.to_string();
    call(app, "POST", "/api/push", Some(text.as_bytes()), token).await
}

#[tokio::test]
async fn pushed_batches_are_checked_applied_once_and_never_written_over_an_arbiters_edit() {
    const PUSH: &str = "push-token-x";
    let (core, app) = start().await;
    // A relay that takes no pushes says so.
    let off = push(&app, Some(PUSH), &push_batch(1, &["e2e4"], "*")).await;
    assert_eq!(off.status, StatusCode::FORBIDDEN, "{:?}", off.body);
    core.shared.accept_pushes(PUSH.into());
    let before = tournaments(&app).await;

    // No token, a wrong one, bad JSON, an illegal move: refused, nothing stored.
    let b = push_batch(1, &["e2e4", "e7e5"], "*");
    assert_eq!(push(&app, None, &b).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        push(&app, Some("wrong-token"), &b).await.status,
        StatusCode::FORBIDDEN
    );
    let bad = call(&app, "POST", "/api/push", Some(b"{\"origin\":"), Some(PUSH)).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let illegal = push(&app, Some(PUSH), &push_batch(1, &["e2e4", "e7e4"], "*")).await;
    assert_eq!(illegal.status, StatusCode::BAD_REQUEST);
    assert!(
        illegal.body["error"]
            .as_str()
            .unwrap_or("")
            .contains("e7e4"),
        "{:?}",
        illegal.body
    );
    assert_eq!(
        tournaments(&app).await,
        before,
        "a refused push stored something"
    );

    // Applied: two moves; again (same number: stale; higher number: nothing differs) no more.
    let ok = push(&app, Some(PUSH), &b).await;
    assert_eq!(ok.status, StatusCode::OK, "{:?}", ok.body);
    // The players (a pairing change) and two moves.
    assert_eq!(ok.body["changes"], 3);
    let again = push(&app, Some(PUSH), &b).await;
    assert_eq!(again.body["stale"], true, "{:?}", again.body);
    let same = push(&app, Some(PUSH), &push_batch(2, &["e2e4", "e7e5"], "*")).await;
    assert_eq!(
        (same.body["stale"].clone(), same.body["changes"].clone()),
        (json!(false), json!(0))
    );
    let t = venue_tournament(&app).await;
    let round = t["rounds"][0]["id"].as_i64().expect("round");
    let g = first_game(&app, round).await;
    let gid = g["id"].as_i64().expect("game");
    assert_eq!(g["moves"][1]["san"], "e5", "SAN worked out by the cloud");
    assert_eq!(g["white"]["name"], "A");

    // A takeback and another move at the venue: a truncation and the new move.
    let back = push(
        &app,
        Some(PUSH),
        &push_batch(3, &["e2e4", "c7c5", "g1f3"], "*"),
    )
    .await;
    assert_eq!(back.body["changes"], 3, "{:?}", back.body);
    let moves = |g: &Value| {
        g["moves"]
            .as_array()
            .map(|m| {
                m.iter()
                    .map(|m| m["uci"].as_str().unwrap_or("").to_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        moves(&first_game(&app, round).await),
        ["e2e4", "c7c5", "g1f3"]
    );
    // The change log (what spectators are told) has each change once.
    let changes = call(
        &app,
        "GET",
        &format!("/api/rounds/{round}/changes?since=0"),
        None,
        None,
    )
    .await;
    let kinds: Vec<String> = changes.body["changes"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| c["kind"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        kinds.iter().filter(|k| *k == "move").count(),
        4,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| *k == "truncate").count(),
        1,
        "{kinds:?}"
    );

    // An arbiter here sets a result; the venue's next version is held back, not written over.
    let r = admin(
        &app,
        "POST",
        &format!("/api/games/{gid}/result"),
        json!({"result": "0-1"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    let held = push(
        &app,
        Some(PUSH),
        &push_batch(4, &["e2e4", "c7c5", "g1f3", "d7d6"], "*"),
    )
    .await;
    assert_eq!(held.body["changes"], 0);
    assert_eq!(
        held.body["conflicts"][0]["cloud_game_id"], gid,
        "{:?}",
        held.body
    );
    assert_eq!(first_game(&app, round).await["result"], "0-1");
    let health = call(&app, "GET", "/health", None, None).await.body;
    assert_eq!(
        health["pushed_from"][0]["conflicts"][0]["game_id"], 11,
        "{health}"
    );
    // Taking the venue's version settles it.
    let take = admin(
        &app,
        "POST",
        &format!("/api/games/{gid}/take-venue"),
        json!({}),
    )
    .await;
    assert_eq!(take.status, StatusCode::OK, "{:?}", take.body);
    let g = first_game(&app, round).await;
    assert_eq!((moves(&g).len(), g["result"].clone()), (4, json!("*")));
    let next = push(
        &app,
        Some(PUSH),
        &push_batch(5, &["e2e4", "c7c5", "g1f3", "d7d6", "d2d4"], "*"),
    )
    .await;
    assert_eq!(
        (next.body["changes"].clone(), next.body["conflicts"].clone()),
        (json!(1), json!([]))
    );
}

#[tokio::test]
async fn a_pushed_tournaments_delay_applies_on_the_cloud() {
    const PUSH: &str = "push-token-y";
    let (core, app) = start().await;
    core.shared.accept_pushes(PUSH.into());
    let mut b = push_batch(1, &["d2d4", "g8f6"], "*");
    b["tournaments"][0]["delay_secs"] = json!(60);
    let now = relay_store::now_ms();
    for m in b["games"][0]["moves"].as_array_mut().expect("moves") {
        m["accepted_at_ms"] = json!(now);
    }
    let ok = push(&app, Some(PUSH), &b).await;
    assert_eq!(ok.status, StatusCode::OK, "{:?}", ok.body);
    let t = venue_tournament(&app).await;
    assert_eq!(t["delay_secs"], 60);
    let round = t["rounds"][0]["id"].as_i64().expect("round");
    // Spectators see the game without its moves for a minute; arbiters see them.
    let public = first_game(&app, round).await;
    assert_eq!(public["moves"], json!([]), "{public}");
    let live = call(
        &app,
        "GET",
        &format!("/api/rounds/{round}"),
        None,
        Some(TOKEN),
    )
    .await;
    assert_eq!(
        live.body["games"][0]["moves"].as_array().map(Vec::len),
        Some(2)
    );
}

/// A GET with no token, answered as status, headers and the body's bytes (files, not JSON).
async fn raw_get(app: &Router, path: String) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let req = Request::builder()
        .uri(path)
        .body(Body::empty())
        .expect("request");
    let res = app.clone().oneshot(req).await.expect("infallible router");
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .expect("body");
    (status, headers, bytes.to_vec())
}

#[tokio::test]
async fn a_round_exports_as_pgn_archive_epd_pgc_and_cbf() {
    let (core, app) = start().await;
    core.shared.accept_pushes("push-token-z".into());
    let ok = push(
        &app,
        Some("push-token-z"),
        &push_batch(1, &["e2e4", "e7e5", "g1f3"], "*"),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{:?}", ok.body);
    let round = venue_tournament(&app).await["rounds"][0]["id"]
        .as_i64()
        .expect("round");
    let raw = |path: String| raw_get(&app, path);
    let (status, headers, epd) = raw(format!("/api/rounds/{round}/export?format=epd")).await;
    let text = String::from_utf8_lossy(&epd).to_string();
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers[header::CONTENT_TYPE], "text/plain; charset=utf-8");
    assert!(
        headers[header::CONTENT_DISPOSITION]
            .to_str()
            .unwrap_or("")
            .contains("round-3.epd"),
        "{headers:?}"
    );
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.lines()
            .nth(1)
            .unwrap_or("")
            .starts_with("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"),
        "{text}"
    );
    let (_, _, fin) = raw(format!("/api/rounds/{round}/export?format=epd&final=1")).await;
    assert_eq!(String::from_utf8_lossy(&fin).lines().count(), 1);
    let (status, headers, pgn) = raw(format!("/api/rounds/{round}/export?format=archive")).await;
    let pgn = String::from_utf8_lossy(&pgn).to_string();
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap_or("")
            .starts_with("application/x-chess-pgn")
    );
    assert!(
        pgn.contains("1. e4") && pgn.contains("[Round \"3.1\"]"),
        "{pgn}"
    );
    // The binary formats read back with the core's readers: PGC, and CBF with its index.
    let (status, headers, pgc) = raw(format!("/api/rounds/{round}/export?format=pgc")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/octet-stream");
    let games: Vec<_> = relay_core::pgc::games(pgc.as_slice())
        .collect::<Result<_, _>>()
        .expect("our PGC reads");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].moves.len(), 3);
    let (status, headers, cbf) = raw(format!("/api/rounds/{round}/export?format=cbf")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_DISPOSITION]
            .to_str()
            .unwrap_or("")
            .contains("round-3.cbf"),
        "{headers:?}"
    );
    let (status, _, cbi) = raw(format!("/api/rounds/{round}/export?format=cbi")).await;
    assert_eq!(status, StatusCode::OK);
    let games: Vec<_> = relay_core::cbf::games(&cbf, Some(&cbi))
        .expect("the index reads")
        .collect::<Result<_, _>>()
        .expect("our CBF reads");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].moves[2].san.to_string(), "Nf3");
    let (status, _, bad) = raw(format!("/api/rounds/{round}/export?format=cbf9")).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&bad)
    );
    let (status, _, _) = raw("/api/rounds/999999/export".to_string()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A game the format cannot hold is left out of the export and named in the answer's headers;
/// `strict=1` refuses the whole export instead (422), as before.
#[tokio::test]
async fn an_export_leaves_out_a_game_the_format_cannot_hold_and_names_it() {
    let (core, app) = start().await;
    core.shared.accept_pushes("push-token-w".into());
    let mut b = push_batch(1, &["e2e4", "e7e5"], "*");
    let mut second = b["games"][0].clone();
    second["id"] = json!(12);
    // A name in letters code page 850 lacks: CBF cannot hold it.
    second["pairing"] = json!({"board_no": 2, "white": {"name": "Иванов, Иван"},
                               "black": {"name": "Carlsen, Magnus"}});
    b["games"].as_array_mut().expect("games").push(second);
    let ok = push(&app, Some("push-token-w"), &b).await;
    assert_eq!(ok.status, StatusCode::OK, "{:?}", ok.body);
    let round = venue_tournament(&app).await["rounds"][0]["id"]
        .as_i64()
        .expect("round");
    let get = |path: String| raw_get(&app, path);
    let (status, headers, cbf) = get(format!("/api/rounds/{round}/export?format=cbf")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["x-relay-games-written"], "1");
    assert_eq!(headers["x-relay-games-skipped"], "1");
    let why = headers["x-relay-game-skipped"].to_str().expect("ascii");
    assert!(why.contains("code page (850) lacks"), "{why}");
    let games: Vec<_> = relay_core::cbf::games(&cbf, None)
        .expect("reads")
        .collect::<Result<_, _>>()
        .expect("our CBF reads");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].tags.get("White"), Some("A"));
    // PGN holds both.
    let (_, headers, _) = get(format!("/api/rounds/{round}/export?format=pgn")).await;
    assert_eq!(headers["x-relay-games-written"], "2");
    assert_eq!(headers["x-relay-games-skipped"], "0");
    let (status, _, body) = get(format!("/api/rounds/{round}/export?format=cbf&strict=1")).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        String::from_utf8_lossy(&body)
    );
}

/// Illegal moves through the whole service: the hall's recorder sees White's knight jump and
/// the press, the arbiter put the position back and give Black two minutes, and later a
/// press without a move by White. The record (illegal moves with their count and what the
/// Laws prescribe, the correction) is the arbiter's: in the game JSON and PGN with the token,
/// not in the public ones until the tournament says so (and then as of the delay). The
/// prescribed result for the second one is given with its termination, in the audit trail.
#[tokio::test]
async fn illegal_moves_go_on_the_arbiters_record_and_the_ruling_sets_the_result() {
    let cfg = RecorderConfig {
        settle_ms: 50,
        ..RecorderConfig::default()
    };
    let (core, app) = start_with(cfg).await;
    let send = |i: PortInput| core.ports.send(i).expect("the hall takes readings");
    let pause = || tokio::time::sleep(Duration::from_millis(150));
    // The press is judged 1.5 s after it, the board settled.
    let judged = || tokio::time::sleep(Duration::from_millis(2_200));
    send(identified());
    send(reading(&shakmaty::Board::default()));
    send(clock(300, 300, None, None));
    pause().await;
    send(clock(300, 300, Some(ClockSide::Left), None));
    pause().await;
    send(reading(&after(&["e4"])));
    pause().await;
    send(clock(299, 300, Some(ClockSide::Right), None));
    pause().await;
    send(reading(&after(&["e4", "e5"])));
    pause().await;
    send(clock(299, 299, Some(ClockSide::Left), None));
    pause().await;
    // White's knight jumps to g4; White presses.
    let mut jump = after(&["e4", "e5"]);
    let knight = jump.remove_piece_at(shakmaty::Square::G1).expect("knight");
    jump.set_piece_at(shakmaty::Square::G4, knight);
    send(reading(&jump));
    pause().await;
    send(clock(298, 299, Some(ClockSide::Right), None));
    judged().await;
    // The arbiter stops the clock, puts the knight back, gives Black two minutes.
    send(clock(298, 297, None, None));
    send(reading(&after(&["e4", "e5"])));
    pause().await;
    send(clock(298, 417, None, None));
    pause().await;
    send(clock(298, 417, Some(ClockSide::Left), None));
    pause().await;
    send(reading(&after(&["e4", "e5", "Nf3"])));
    pause().await;
    send(clock(296, 417, Some(ClockSide::Right), None));
    pause().await;
    send(reading(&after(&["e4", "e5", "Nf3", "Nc6"])));
    pause().await;
    send(clock(296, 415, Some(ClockSide::Left), None));
    pause().await;
    // White presses without a move.
    send(clock(295, 415, Some(ClockSide::Right), None));
    judged().await;

    let game = eboard(&app).await["game_id"]
        .as_i64()
        .expect("the e-board is on a game");
    let record = call(
        &app,
        "GET",
        &format!("/api/games/{game}/record"),
        None,
        Some(TOKEN),
    )
    .await
    .body;
    let illegal = record["illegal_moves"].as_array().expect("illegal moves");
    assert_eq!(illegal.len(), 2, "{record}");
    assert_eq!(
        (
            &illegal[0]["ply"],
            &illegal[0]["color"],
            &illegal[0]["uci"],
            &illegal[0]["kind"]
        ),
        (
            &json!(3),
            &json!("white"),
            &json!("g1g4"),
            &json!("move_not_allowed")
        ),
        "{record}"
    );
    assert_eq!(illegal[0]["count"], 1);
    assert!(
        illegal[0]["prescribed"]
            .as_str()
            .expect("text")
            .contains("two minutes")
    );
    assert_eq!(
        (
            &illegal[1]["ply"],
            &illegal[1]["kind"],
            &illegal[1]["count"],
            &illegal[1]["result"]
        ),
        (
            &json!(5),
            &json!("press_without_move"),
            &json!(2),
            &json!("0-1")
        ),
        "{record}"
    );
    assert_eq!(
        record["clock_adjustments"],
        json!([{"id": record["clock_adjustments"][0]["id"], "ply": 3, "color": "black", "delta_ms": 120_000, "at_ms": record["clock_adjustments"][0]["at_ms"]}]),
        "{record}"
    );
    // The game's moves and clocks are untouched by it.
    let g = call(
        &app,
        "GET",
        &format!("/api/games/{game}"),
        None,
        Some(TOKEN),
    )
    .await
    .body;
    assert_eq!(sans_of(&g), ["e4", "e5", "Nf3", "Nc6"]);
    assert_eq!(g["moves"][2]["clk_ms"], 296_000, "{g}");
    assert_eq!(g["illegal_moves"].as_array().map(Vec::len), Some(2));
    // The arbiter's PGN has the notes; the public's game JSON and PGN do not.
    let pgn_of = |auth: Option<&'static str>| {
        let app = app.clone();
        async move {
            let req = Request::builder()
                .uri(format!("/api/games/{game}/pgn"))
                .header(
                    header::AUTHORIZATION,
                    auth.map_or(String::new(), |t| format!("Bearer {t}")),
                );
            let req = if auth.is_some() {
                req
            } else {
                Request::builder().uri(format!("/api/games/{game}/pgn"))
            };
            let res = app
                .oneshot(req.body(Body::empty()).expect("request"))
                .await
                .expect("router");
            let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
                .await
                .expect("body");
            String::from_utf8_lossy(&bytes).to_string()
        }
    };
    // (PGN wraps its comments: the words are compared.)
    let words = |t: String| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let arbiters = words(pgn_of(Some(TOKEN)).await);
    for note in [
        "1... e5 {[%clk 0:04:59] [%emt 0:00:00] Illegal move by White (first in this game): g1g4, a piece moved as it cannot move, clock pressed. Clock corrected: Black +0:02:00.}",
        "Illegal move by White (second in this game): clock pressed without a move.}",
    ] {
        assert!(arbiters.contains(note), "{note}\n{arbiters}");
    }
    let public = pgn_of(None).await;
    assert!(!public.contains("Illegal"), "{public}");
    let g = call(&app, "GET", &format!("/api/games/{game}"), None, None)
        .await
        .body;
    assert!(g.get("illegal_moves").is_none(), "{g}");
    // The tournament shows it to spectators from now on.
    let t = g["tournament_id"].as_i64().unwrap_or(1);
    let edit = admin(
        &app,
        "PATCH",
        &format!("/api/tournaments/{t}"),
        json!({"public_incidents": true}),
    )
    .await;
    assert_eq!(edit.status, StatusCode::OK, "{}", edit.body);
    let g = call(&app, "GET", &format!("/api/games/{game}"), None, None)
        .await
        .body;
    assert_eq!(g["illegal_moves"].as_array().map(Vec::len), Some(2), "{g}");
    assert!(pgn_of(None).await.contains("Illegal move by White"));

    // Open ones are listed for the console; a first one has no result to give.
    let open = call(
        &app,
        "GET",
        "/api/rounds/1/illegal-moves",
        None,
        Some(TOKEN),
    )
    .await
    .body;
    assert_eq!(open.as_array().map(Vec::len), Some(2), "{open}");
    let first = illegal[0]["id"].as_i64().expect("id");
    let second = illegal[1]["id"].as_i64().expect("id");
    let refused = admin(
        &app,
        "POST",
        &format!("/api/games/{game}/illegal-moves"),
        json!({"incident": first, "ruling": "result"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    let bad = admin(
        &app,
        "POST",
        &format!("/api/games/{game}/illegal-moves"),
        json!({"incident": first, "ruling": "forfeit"}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    let ruled = admin(
        &app,
        "POST",
        &format!("/api/games/{game}/illegal-moves"),
        json!({"incident": second, "ruling": "result"}),
    )
    .await;
    assert_eq!(ruled.status, StatusCode::OK, "{}", ruled.body);
    assert_eq!(ruled.body["illegal_move"]["ruling"], "result");
    let again = admin(
        &app,
        "POST",
        &format!("/api/games/{game}/illegal-moves"),
        json!({"incident": second, "ruling": "dismissed"}),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    let g = call(
        &app,
        "GET",
        &format!("/api/games/{game}"),
        None,
        Some(TOKEN),
    )
    .await
    .body;
    assert_eq!(
        (&g["result"], &g["termination"]),
        (&json!("0-1"), &json!("rules infraction")),
        "{g}"
    );
    let trail = call(
        &app,
        "GET",
        &format!("/api/games/{game}/audit"),
        None,
        Some(TOKEN),
    )
    .await
    .body;
    assert!(trail.to_string().contains("incident_ruling"), "{trail}");
    let open = call(
        &app,
        "GET",
        "/api/rounds/1/illegal-moves",
        None,
        Some(TOKEN),
    )
    .await
    .body;
    assert_eq!(open.as_array().map(Vec::len), Some(1), "{open}");
    assert!(arbiters.contains("[Result \"*\"]"));
}

/// A tournament's event key through the API: checked, unique, kept by an edit that does not
/// name it, and taken away by `null` (as a round's own delay falls back to the tournament's
/// with `null`: plain serde read `null` as "not given", so neither did anything).
#[tokio::test]
async fn an_event_key_is_checked_unique_and_null_takes_it_away() {
    let (_core, app) = start().await;
    let made = admin(
        &app,
        "POST",
        "/api/tournaments",
        json!({"name": "Open", "event_key": "open-2026"}),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let t = made.body["id"].as_i64().expect("id");
    let other = admin(&app, "POST", "/api/tournaments", json!({"name": "Women"})).await;
    let w = other.body["id"].as_i64().expect("id");
    let key = |v: &Value| v["event_key"].clone();
    let patch = |id: i64, body: Value| {
        let app = app.clone();
        async move { admin(&app, "PATCH", &format!("/api/tournaments/{id}"), body).await }
    };
    let taken = admin(
        &app,
        "POST",
        "/api/tournaments",
        json!({"name": "Again", "event_key": "open-2026"}),
    )
    .await;
    assert_eq!(taken.status, StatusCode::CONFLICT, "{}", taken.body);
    let taken = patch(w, json!({"event_key": "open-2026"})).await;
    assert_eq!(taken.status, StatusCode::CONFLICT, "{}", taken.body);
    for bad in ["two words", "x;y", &"k".repeat(65)] {
        let r = patch(w, json!({"event_key": bad})).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.body);
    }
    let r = patch(t, json!({"delay_secs": 60})).await;
    assert_eq!(
        key(&r.body),
        "open-2026",
        "an edit without the key keeps it"
    );
    let r = patch(t, json!({"event_key": null, "site": null})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(key(&r.body), Value::Null, "null takes the key away");
    let r = patch(w, json!({"event_key": " open-2026 "})).await;
    assert_eq!(key(&r.body), "open-2026", "free again, and trimmed");
    // A round's own delay: set, then null falls back to the tournament's.
    let round = admin(
        &app,
        "POST",
        &format!("/api/tournaments/{w}/rounds"),
        json!({"number": "1", "delay_secs": 30}),
    )
    .await;
    let r = round.body["id"].as_i64().expect("round");
    let edited = admin(
        &app,
        "PATCH",
        &format!("/api/rounds/{r}"),
        json!({"delay_secs": null}),
    )
    .await;
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    assert_eq!(edited.body["delay_secs"], Value::Null, "{}", edited.body);
}

/// A `001` line of a one-round TRF: start rank in columns 5–8, the name from 15, the cell of
/// round 1 from column 92.
fn trf_player(n: u32, cell: &str) -> String {
    let head = format!("001 {n:>4}      Player {n}");
    format!("{head:<91}{cell}\n")
}

/// A team league's round where one team left two of its eight boards empty: the other
/// team's players there won by forfeit against nobody (`0000 - +`), and those points are
/// the match's. Relay showed 1–5 over the six games played for a match that was 1–7.
#[tokio::test]
async fn a_team_match_counts_the_boards_won_by_forfeit_against_nobody() {
    let (_core, app) = start().await;
    let mut trf = String::from("012 Team league\n");
    // Team A is 1–8, team B 9–16; A has White on the odd boards and wins board 1 only.
    for board in 1..=6u32 {
        let (a, b) = (board, board + 8);
        let (ca, cb) = if board % 2 == 1 {
            ('w', 'b')
        } else {
            ('b', 'w')
        };
        let (ra, rb) = if board == 1 { ('1', '0') } else { ('0', '1') };
        trf.push_str(&trf_player(a, &format!("{b:>4} {ca} {ra}")));
        trf.push_str(&trf_player(b, &format!("{a:>4} {cb} {rb}")));
    }
    for (a, b) in [(7, 15), (8, 16)] {
        trf.push_str(&trf_player(a, "0000 - -"));
        trf.push_str(&trf_player(b, "0000 - +"));
    }
    for (name, first) in [("A", 1u32), ("B", 9)] {
        let mut line = format!("013 {name:<32}");
        for p in first..first + 8 {
            line.push_str(&format!("{p:>4} "));
        }
        trf.push_str(&line);
        trf.push('\n');
    }
    let done = call(
        &app,
        "POST",
        "/api/tournaments/trf",
        Some(trf.as_bytes()),
        Some(TOKEN),
    )
    .await;
    assert_eq!(done.status, StatusCode::CREATED, "{}", done.body);
    let id = done.body["tournament_id"].as_i64().expect("tournament id");
    let t = call(&app, "GET", &format!("/api/tournaments/{id}"), None, None).await;
    let round = t.body["rounds"][0]["id"].as_i64().expect("round 1");
    let view = call(
        &app,
        "GET",
        &format!("/api/rounds/{round}"),
        None,
        Some(TOKEN),
    )
    .await;
    let matches = view.body["matches"].as_array().expect("matches");
    assert_eq!(matches.len(), 1, "{}", view.body["matches"]);
    let m = &matches[0];
    assert_eq!(
        (m["first"].as_str(), m["second"].as_str()),
        (Some("A"), Some("B"))
    );
    assert_eq!(
        (m["first_points"].as_f64(), m["second_points"].as_f64()),
        (Some(1.0), Some(7.0)),
        "{m}"
    );
    let byes = view.body["byes"].as_array().expect("byes");
    assert!(
        byes.iter().all(|b| b["team"] == "B"),
        "{}",
        view.body["byes"]
    );
}
