//! Several halls, one event: two venue relays (their own SQLite and emulated boards, on
//! pseudo-terminals) with one event key and first boards 1 and 101 push to one cloud relay
//! (PostgreSQL, no boards), each through a proxy this test can cut. The cloud serves one
//! tournament with one round holding every board of both halls, its round PGN the halls'
//! games exactly; one hall's link cut for 30 s holds back only that hall's boards and loses
//! nothing; a third hall started on purpose with the same first board clashes, is shown on
//! both sides, and is settled by the cloud's arbiter. A second test renumbers boards at a hall
//! and follows them in the cloud.

use super::serve_lichess::{
    LICHESS_TOKEN, MORE_ROUNDS, ROUND_ID, holds_what_the_relay_holds, start_standin,
};
use super::serve_upstream::{CutProxy, games_of, moves_announced_once};
use super::service::{
    Emulator, Relay, Socket, get_json, postgres_database, postgres_url, push_target, request,
    wait_until,
};
use super::temp_dir;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const PUSH: &str = "push-secret-1";
const TOKEN: &str = "arbiter-secret";
const KEY: &str = "olympiad-2026";

/// The games of a round PGN, each without the running `[Clock]` tag, by their Round tag.
fn pgn_games(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for game in text.split("\n\n[Event ").filter(|g| !g.trim().is_empty()) {
        let game = game.trim_start_matches("[Event ");
        let round = game
            .lines()
            .find_map(|l| l.strip_prefix("[Round \""))
            .map(|r| r.trim_end_matches("\"]").to_string())
            .unwrap_or_default();
        let body: Vec<&str> = game.lines().filter(|l| !l.starts_with("[Clock ")).collect();
        out.insert(round, body.join("\n").trim().to_string());
    }
    out
}

/// The relay's only round's id (a venue) or the round of the event (the cloud).
fn the_round(r: &Relay) -> Option<i64> {
    let ts = get_json(&r.url("/api/tournaments"));
    let ts = ts.as_array()?;
    let t = ts.iter().find(|t| t["event_key"] == KEY)?;
    t["rounds"].as_array()?.first()?["id"].as_i64()
}

/// Plies per board of a relay's round.
fn plies(r: &Relay, round: i64) -> BTreeMap<u64, usize> {
    get_json(&r.url(&format!("/api/rounds/{round}")))["games"]
        .as_array()
        .map(|gs| {
            gs.iter()
                .map(|g| {
                    let board = g["board_no"].as_u64().unwrap_or(0);
                    (board, g["moves"].as_array().map_or(0, Vec::len))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The cloud's round PGN equals the halls' round PGNs put together, game for game.
fn pgn_in_sync(cloud: &Relay, halls: &[&Relay]) -> Option<usize> {
    let c = pgn_games(&games_of(cloud, the_round(cloud)?));
    let mut want = BTreeMap::new();
    for h in halls {
        want.extend(pgn_games(&games_of(h, the_round(h)?)));
    }
    (c == want).then_some(c.len())
}

fn venue(dir: &std::path::Path, name: &str, emu: &Emulator, to: &str, first: &str) -> Relay {
    let db = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
    let ports = emu.ports();
    Relay::serve(
        dir,
        &[
            "--db",
            &db,
            "--port",
            &ports,
            "--push-to",
            to,
            "--push-token",
            PUSH,
            "--admin-token",
            TOKEN,
            "--event-key",
            KEY,
            "--first-board",
            first,
            "--hall-name",
            name,
        ],
    )
}

/// The cloud relay: on `db`, no boards, taking the halls' pushes, with `more` options.
fn cloud(dir: &std::path::Path, db: &str, more: &[&str]) -> Relay {
    let mut args = vec![
        "--db",
        db,
        "--no-boards",
        "--accept-push-token",
        PUSH,
        "--admin-token",
        TOKEN,
    ];
    args.extend_from_slice(more);
    Relay::serve(dir, &args)
}

fn venue_from(cloud: &Relay, name: &str) -> Value {
    get_json(&cloud.url("/health"))["pushed_from"]
        .as_array()
        .and_then(|v| v.iter().find(|s| s["name"] == name).cloned())
        .unwrap_or(Value::Null)
}

#[test]
fn two_halls_fill_one_round_through_a_cut_link_and_a_clash_is_settled() {
    let Some(url) = postgres_url("the several-halls test") else {
        return;
    };
    let cut_secs: u64 = std::env::var("RELAY_HALLS_CUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let db = postgres_database(&url, &format!("relay_halls_{}", std::process::id()));
    let dir = temp_dir("serve-halls");
    // The cloud pushes the event's round to a Lichess stand-in: boards 1-100, 101-200 and
    // 201-300 each to a Lichess round of their own, as Lichess holds 100 boards a round.
    let (lichess, standin) = start_standin(true);
    let lichess_rounds = format!("{ROUND_ID},{},{}", MORE_ROUNDS[0], MORE_ROUNDS[1]);
    let cloud = cloud(
        &dir,
        &db,
        &[
            "--lichess-round",
            &lichess_rounds,
            "--lichess-token",
            LICHESS_TOKEN,
            "--lichess-url",
            &lichess,
        ],
    );
    let hall = |name: &str, serials: &str, seed: &str| {
        Emulator::start(
            name,
            &[
                "--boards",
                "3",
                "--speed",
                "4",
                "--seed",
                seed,
                "--serials",
                serials,
            ],
        )
    };
    let (emu_a, emu_b) = (
        hall("halls-a", "1001,1002,1003", "31"),
        hall("halls-b", "2001,2002,2003", "32"),
    );
    let (proxy_a, proxy_b) = (
        CutProxy::start(cloud.base.trim_start_matches("http://")),
        CutProxy::start(cloud.base.trim_start_matches("http://")),
    );
    let (to_a, to_b) = (proxy_a.url(), proxy_b.url());
    let a = venue(&dir, "hall-a", &emu_a, &to_a, "1");
    let b = venue(&dir, "hall-b", &emu_b, &to_b, "101");

    // One tournament, one round, every board of both halls, the round PGN exact.
    let started = Instant::now();
    wait_until(
        60,
        "one round in the cloud with both halls' six boards, moving",
        || {
            let ts = get_json(&cloud.url("/api/tournaments"));
            let ts = ts.as_array()?;
            (ts.len() == 1 && ts[0]["rounds"].as_array()?.len() == 1).then_some(())?;
            let p = plies(&cloud, the_round(&cloud)?);
            let boards: Vec<u64> = p.keys().copied().collect();
            (boards == [1, 2, 3, 101, 102, 103] && p.values().all(|n| *n > 0)).then_some(())
        },
    );
    let n = wait_until(30, "the cloud's round PGN to be the halls' games", || {
        pgn_in_sync(&cloud, &[&a, &b])
    });
    eprintln!(
        "one round of {n} games in the cloud, its PGN the halls' exactly, {} ms after start",
        started.elapsed().as_millis()
    );
    let round = the_round(&cloud).expect("round");
    // A spectator of the cloud's round from here to the end.
    let stop = Arc::new(AtomicBool::new(false));
    let spectator = {
        let (url, stop) = (
            cloud.ws_url(&format!("/api/rounds/{round}/ws")),
            stop.clone(),
        );
        std::thread::spawn(move || {
            let mut ws = Socket::connect(&url);
            let mut heard = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if let Some(m) = ws.next(Duration::from_millis(200)) {
                    heard.push(m);
                }
            }
            ws.close();
            heard
        })
    };
    let sources = get_json(&cloud.url("/health"))["pushed_from"].clone();
    assert_eq!(sources.as_array().map(Vec::len), Some(2), "{sources}");
    for s in sources.as_array().expect("sources") {
        assert_eq!(s["link"], "up", "{s}");
        assert_eq!(s["games"].as_array().map(Vec::len), Some(3), "{s}");
    }

    // Hall B's link is cut: its boards wait, hall A's keep coming, nothing is lost.
    let ra = the_round(&a).expect("hall A's round");
    let rb = the_round(&b).expect("hall B's round");
    let b_at_cut = plies(&cloud, round)
        .into_iter()
        .filter(|(k, _)| *k > 100)
        .collect::<BTreeMap<_, _>>();
    proxy_b.set_cut(true);
    let cut_at = Instant::now();
    let mut a_lag_ms = Vec::new();
    let mut b_frozen = true;
    while cut_at.elapsed() < Duration::from_secs(cut_secs) {
        // Hall A's boards in the cloud catch up with hall A within a few seconds.
        let want = plies(&a, ra);
        let asked = Instant::now();
        let caught = (|| loop {
            let c = plies(&cloud, round);
            if want
                .iter()
                .all(|(k, n)| c.get(k).copied().unwrap_or(0) >= *n)
            {
                return true;
            }
            if asked.elapsed() > Duration::from_secs(10) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        })();
        assert!(
            caught,
            "hall A's boards stopped reaching the cloud while hall B's link was cut"
        );
        a_lag_ms.push(asked.elapsed().as_millis());
        let c = plies(&cloud, round);
        b_frozen &= b_at_cut.iter().all(|(k, n)| c.get(k) == Some(n));
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        b_frozen,
        "hall B's boards moved in the cloud while its link was cut"
    );
    let b_moved: usize = plies(&b, rb).values().sum::<usize>() - b_at_cut.values().sum::<usize>();
    let silent = venue_from(&cloud, "hall-b");
    let a_src = venue_from(&cloud, "hall-a");
    let b_target = push_target(&b);
    eprintln!(
        "hall B cut for {cut_secs} s: hall B played {b_moved} plies meanwhile, queued {} changes, last error {}; cloud says hall B {} (last heard {} ms before), hall A {}; hall A's boards reached the cloud within {} ms (median), {} ms (max) of being asked",
        b_target["queued"],
        b_target["last_error"],
        silent["link"],
        silent["applied_at_ms"]
            .as_i64()
            .map_or(0, |t| super::service::epoch_ms() - t),
        a_src["link"],
        median(&a_lag_ms),
        a_lag_ms.iter().max().copied().unwrap_or(0),
    );
    assert!(
        b_moved > 0,
        "hall B played nothing during the cut: the test shows nothing"
    );
    assert_eq!(a_src["link"], "up");
    if cut_secs >= 30 {
        assert_eq!(silent["link"], "silent", "{silent}");
    }
    proxy_b.set_cut(false);
    let back = Instant::now();
    wait_until(60, "the cloud to catch up with hall B", || {
        pgn_in_sync(&cloud, &[&a, &b])
    });
    eprintln!(
        "hall B's link back: the cloud's round PGN was both halls' games again {} ms later",
        back.elapsed().as_millis()
    );
    wait_until(20, "hall B's link up again in the cloud", || {
        (venue_from(&cloud, "hall-b")["link"] == "up").then_some(())
    });

    // A third hall started with the same first board as hall A: its board 1 clashes.
    let emu_c = Emulator::start(
        "halls-c",
        &[
            "--boards",
            "1",
            "--speed",
            "4",
            "--seed",
            "33",
            "--serials",
            "3001",
        ],
    );
    let proxy_c = CutProxy::start(cloud.base.trim_start_matches("http://"));
    let to_c = proxy_c.url();
    let c = venue(&dir, "hall-c", &emu_c, &to_c, "1");
    let on_venue = wait_until(40, "the clash on hall C's console", || {
        push_target(&c)["conflicts"]
            .as_array()
            .filter(|v| !v.is_empty())
            .cloned()
    });
    assert_eq!(on_venue[0]["clash"], true, "{on_venue:?}");
    assert_eq!(on_venue[0]["board_no"], 1, "{on_venue:?}");
    let on_cloud = venue_from(&cloud, "hall-c");
    let clash = on_cloud["conflicts"][0].clone();
    assert_eq!(clash["clash"], true, "{on_cloud}");
    eprintln!("the clash, on hall C: {}", on_venue[0]["message"]);
    // Hall A's board 1 is untouched: still hall A's game.
    let c_round = the_round(&c).expect("hall C's round");
    assert_eq!(
        pgn_games(&games_of(&cloud, round)).get("1.1"),
        pgn_games(&games_of(&a, ra)).get("1.1"),
    );
    // The cloud's arbiter settles it: a taken board is refused, board 201 takes hall C's game.
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let origin = on_cloud["origin"].as_str().expect("origin").to_string();
    let settle = |board: u32| {
        let body =
            serde_json::json!({"origin": origin, "game_id": clash["game_id"], "board_no": board})
                .to_string();
        request(
            "POST",
            &cloud.url("/api/push/settle"),
            &headers,
            Some(body.as_bytes()),
        )
    };
    let r = settle(101);
    assert_eq!(r.status, 409, "{}", r.text());
    let r = settle(201);
    assert_eq!(r.status, 200, "{}", r.text());
    wait_until(20, "the clash to clear on both sides", || {
        let venue_clear = push_target(&c)["conflicts"]
            .as_array()
            .is_some_and(Vec::is_empty);
        let cloud_clear = venue_from(&cloud, "hall-c")["conflicts"]
            .as_array()
            .is_some_and(Vec::is_empty);
        (venue_clear && cloud_clear).then_some(())
    });
    // Hall C's game follows it on board 201.
    wait_until(30, "hall C's moves on board 201", || {
        let want = plies(&c, c_round).get(&1).copied()?;
        let have = plies(&cloud, round).get(&201).copied()?;
        (have >= want && want > 0).then_some(())
    });
    // Its e-board, as the cloud lists it, is on board 201 too.
    wait_until(20, "hall C's e-board on board 201 in the cloud", || {
        let boards = get_json(&cloud.url("/api/eboards"));
        let e = boards
            .as_array()?
            .iter()
            .find(|e| e["serial"] == "03001")?
            .clone();
        (e["board_no"] == 201).then_some(())
    });
    let c_game = pgn_games(&games_of(&c, c_round))
        .remove("1.1")
        .expect("hall C's game");
    let in_cloud = pgn_games(&games_of(&cloud, round))
        .remove("1.201")
        .expect("board 201");
    let moves = |g: &str| {
        g.lines()
            .filter(|l| !l.starts_with('['))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        moves(&in_cloud).starts_with(
            moves(&c_game)
                .trim_end_matches(" *")
                .trim_end_matches('*')
                .trim_end()
        ),
        "hall C's game differs on board 201:\n{c_game}\n---\n{in_cloud}"
    );

    // The spectator heard every hall's moves once each, in order, ending as the cloud has them.
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Relaxed);
    let heard = spectator.join().expect("the spectator");
    let games = spectator_games(&heard);
    let stored = get_json(&cloud.url(&format!("/api/rounds/{round}")))["games"].clone();
    let mut boards_heard = 0;
    let mut moves_heard = 0;
    for g in stored.as_array().expect("games") {
        let id = g["id"].as_i64().expect("id");
        let want: Vec<&str> = g["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|m| m["san"].as_str().unwrap_or(""))
            .collect();
        let (last, sans) = games.get(&id).cloned().unwrap_or_default();
        // A move stored in the last moments may not have been heard yet.
        assert!(
            last <= want.len() && want.len() - last <= 2,
            "board {}: the spectator heard up to ply {last}, the cloud has {}",
            g["board_no"],
            want.len()
        );
        for (ply, san) in &sans {
            assert_eq!(
                want.get(ply - 1).copied(),
                Some(san.as_str()),
                "board {} ply {ply}",
                g["board_no"]
            );
        }
        moves_heard += sans.len();
        boards_heard += usize::from(!sans.is_empty());
    }
    eprintln!(
        "a spectator of the cloud's round heard {} messages: {moves_heard} moves of {boards_heard} boards, each once and in order, as the cloud stores them",
        heard.len()
    );
    assert_eq!(boards_heard, 7, "boards 1-3, 101-103 and 201");

    // Lichess got every hall's boards as the cloud holds them, each to its Lichess round.
    wait_until(30, "the Lichess stand-in to hold the cloud's round", || {
        holds_what_the_relay_holds(&standin, &cloud, None)
    });
    let cloud_games = get_json(&cloud.url(&format!("/api/rounds/{round}")))["games"].clone();
    let s = standin.lock().expect("lock");
    for g in cloud_games.as_array().expect("games") {
        let board = g["board_no"].as_u64().expect("board");
        let want = [ROUND_ID, MORE_ROUNDS[0], MORE_ROUNDS[1]][(board as usize - 1) / 100];
        let id = format!("relay-{}", g["id"]);
        assert_eq!(
            s.round_of.get(&id).map(String::as_str),
            Some(want),
            "board {board}"
        );
    }
    eprintln!(
        "the Lichess stand-in holds all {} boards as the cloud does, each in its Lichess round",
        s.round_of.len()
    );
    drop(s);

    // Every change announced once in the cloud; both halls' games there.
    let announced = moves_announced_once(&db);
    let played: usize =
        plies(&a, ra).values().sum::<usize>() + plies(&b, rb).values().sum::<usize>();
    eprintln!("the cloud announced {announced} moves once each; halls A and B hold {played}");
    assert!(
        announced >= played,
        "the cloud announced {announced} moves for the halls' {played}"
    );
    let _ = (emu_a, emu_b, emu_c, proxy_a, proxy_c);
}

/// Each game's moves as a spectator heard them: (the last ply heard, each move heard after
/// the snapshot as ply → SAN). A round's snapshot carries each game's last move; then each
/// `move` must be the next ply (none twice, none skipped), a `truncate` goes back; change
/// numbers rise.
fn spectator_games(heard: &[Value]) -> BTreeMap<i64, (usize, BTreeMap<usize, String>)> {
    let mut games: BTreeMap<i64, (usize, BTreeMap<usize, String>)> = BTreeMap::new();
    let mut last_seq = 0;
    for m in heard {
        let kind = m["type"].as_str().unwrap_or("");
        if kind == "snapshot" {
            for g in m["round"]["games"].as_array().into_iter().flatten() {
                let last = g["moves"]
                    .as_array()
                    .and_then(|v| v.last())
                    .map_or(0, |v| v["ply"].as_u64().unwrap_or(0) as usize);
                games.insert(g["id"].as_i64().unwrap_or(0), (last, BTreeMap::new()));
            }
            last_seq = m["seq"].as_i64().unwrap_or(0);
            continue;
        }
        if ["move", "truncate", "result", "move_clock"].contains(&kind) {
            let seq = m["seq"].as_i64().unwrap_or(0);
            assert!(seq > last_seq, "change {seq} came after {last_seq}: {m}");
            last_seq = seq;
        }
        let game = m["game_id"].as_i64().unwrap_or(0);
        let (last, sans) = games.entry(game).or_default();
        match kind {
            "move" => {
                let ply = m["move"]["ply"].as_u64().unwrap_or(0) as usize;
                assert_eq!(
                    ply,
                    *last + 1,
                    "game {game}: ply {ply} came after ply {last}: {m}"
                );
                *last = ply;
                sans.insert(ply, m["move"]["san"].as_str().unwrap_or("").to_string());
            }
            "truncate" => {
                let from = m["from_ply"].as_u64().unwrap_or(1) as usize;
                *last = from.saturating_sub(1).min(*last);
                sans.retain(|p, _| *p < from);
            }
            _ => {}
        }
    }
    games
}

fn median(v: &[u128]) -> u128 {
    let mut v = v.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// A hall's arbiter renumbers boards (pairings loaded ahead, no e-board on them yet): the
/// cloud's round follows. A swap moves both games there; a game moved onto a board another
/// hall's game holds in the cloud stays where it was, shown as a clash on both sides, and
/// moves once that hall frees the board. Two venues without boards (pairings only) and a
/// cloud on PostgreSQL, each its own process.
#[test]
fn a_hall_renumbering_its_boards_moves_them_in_the_cloud() {
    let Some(url) = postgres_url("the halls renumbering test") else {
        return;
    };
    let db = postgres_database(&url, &format!("relay_renumber_{}", std::process::id()));
    let dir = temp_dir("serve-halls-renumber");
    let cloud = cloud(&dir, &db, &[]);
    let hall = |name: &str| {
        let db = format!("sqlite://{}", dir.join(format!("{name}.db")).display());
        Relay::serve(
            &dir,
            &[
                "--db",
                &db,
                "--no-boards",
                "--push-to",
                &cloud.base,
                "--push-token",
                PUSH,
                "--admin-token",
                TOKEN,
                "--hall-name",
                name,
            ],
        )
    };
    let (a, b) = (hall("hall-a"), hall("hall-b"));
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let admin = |r: &Relay, method: &str, path: &str, body: Value| {
        let answer = request(
            method,
            &r.url(path),
            &headers,
            Some(body.to_string().as_bytes()),
        );
        assert!(answer.status < 300, "{method} {path}: {}", answer.text());
        serde_json::from_slice::<Value>(&answer.body).unwrap_or(Value::Null)
    };
    // Each hall's tournament with the event's key, round 1 and its pairings.
    let prepare = |r: &Relay, boards: &[u32]| {
        let t = admin(
            r,
            "POST",
            "/api/tournaments",
            serde_json::json!({"name": "Olympiad", "event_key": KEY}),
        );
        let path = format!("/api/tournaments/{}/rounds", t["id"]);
        let round = admin(r, "POST", &path, serde_json::json!({"number": "1"}))["id"]
            .as_i64()
            .expect("round");
        let pairings: Vec<Value> = boards
            .iter()
            .map(|n| {
                serde_json::json!({"board_no": n, "white": {"name": format!("White {n}")},
                    "black": {"name": format!("Black {n}")}})
            })
            .collect();
        let path = format!("/api/rounds/{round}/pairings");
        admin(r, "PUT", &path, Value::from(pairings));
        round
    };
    let (ra, rb) = (prepare(&a, &[1, 2, 3]), prepare(&b, &[101, 102]));
    let boards_of = |r: &Relay, round: i64| plies(r, round).keys().copied().collect::<Vec<_>>();
    let game_on = |r: &Relay, round: i64, board: u64| {
        get_json(&r.url(&format!("/api/rounds/{round}")))["games"]
            .as_array()
            .and_then(|gs| gs.iter().find(|g| g["board_no"] == board).cloned())
            .and_then(|g| g["id"].as_i64())
            .expect("a game on the board")
    };
    let in_sync = |what: &str| {
        wait_until(30, what, || pgn_in_sync(&cloud, &[&a, &b]));
    };
    in_sync("the cloud's round to be both halls' five boards");
    let round = the_round(&cloud).expect("the cloud's round");
    assert_eq!(boards_of(&cloud, round), [1, 2, 3, 101, 102]);

    // Hall A swaps boards 1 and 2: the cloud's round PGN is the halls' again.
    let first = game_on(&a, ra, 1);
    admin(
        &a,
        "POST",
        &format!("/api/games/{first}/board"),
        serde_json::json!({"board_no": 2}),
    );
    in_sync("the swap of boards 1 and 2 in the cloud");
    let started = Instant::now();

    // Hall A moves board 3 to 101, free there, hall B's in the cloud: a clash on both sides.
    let third = game_on(&a, ra, 3);
    admin(
        &a,
        "POST",
        &format!("/api/games/{third}/board"),
        serde_json::json!({"board_no": 101}),
    );
    let on_venue = wait_until(30, "the clash on hall A's console", || {
        push_target(&a)["conflicts"]
            .as_array()
            .filter(|v| !v.is_empty())
            .cloned()
    });
    assert_eq!(on_venue[0]["clash"], true, "{on_venue:?}");
    assert_eq!(on_venue[0]["board_no"], 101, "{on_venue:?}");
    eprintln!("hall A is told: {}", on_venue[0]["message"]);
    let on_cloud = venue_from(&cloud, "hall-a")["conflicts"].clone();
    assert_eq!(on_cloud[0]["clash"], true, "{on_cloud}");
    assert_eq!(on_cloud[0]["board_no"], 101, "{on_cloud}");
    // The cloud's board 3 and 101 are as they were: nothing written over hall B's game.
    let cloud_games = pgn_games(&games_of(&cloud, round));
    assert!(cloud_games["1.3"].contains("White 3"), "{cloud_games:?}");
    assert!(
        cloud_games["1.101"].contains("White 101"),
        "{cloud_games:?}"
    );

    // Hall B moves its board 101 to 104: both games move in the cloud, the clash clears.
    let hall_b_game = game_on(&b, rb, 101);
    admin(
        &b,
        "POST",
        &format!("/api/games/{hall_b_game}/board"),
        serde_json::json!({"board_no": 104}),
    );
    in_sync("both halls' renumbered boards in the cloud");
    wait_until(30, "the clash to clear on both sides", || {
        let venue_clear = push_target(&a)["conflicts"]
            .as_array()
            .is_some_and(Vec::is_empty);
        let cloud_clear = venue_from(&cloud, "hall-a")["conflicts"]
            .as_array()
            .is_some_and(Vec::is_empty);
        (venue_clear && cloud_clear).then_some(())
    });
    assert_eq!(boards_of(&cloud, round), [1, 2, 101, 102, 104]);
    eprintln!(
        "renumbered in the cloud as in the halls; the clash made and cleared in {} ms",
        started.elapsed().as_millis()
    );

    // Hall A moves board 2 onto hall B's 102; the cloud's arbiter places it on board 5
    // instead (as the console's "Place on board" does), and there it stays.
    let second = game_on(&a, ra, 2);
    admin(
        &a,
        "POST",
        &format!("/api/games/{second}/board"),
        serde_json::json!({"board_no": 102}),
    );
    let clash = wait_until(30, "the second clash in the cloud", || {
        venue_from(&cloud, "hall-a")["conflicts"]
            .as_array()
            .and_then(|v| v.first().cloned())
    });
    assert_eq!(clash["board_no"], 102, "{clash}");
    let origin = venue_from(&cloud, "hall-a")["origin"].clone();
    let body = serde_json::json!({"origin": origin, "game_id": clash["game_id"], "board_no": 5});
    let r = request(
        "POST",
        &cloud.url("/api/push/settle"),
        &headers,
        Some(body.to_string().as_bytes()),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    wait_until(30, "the placed game's clash to clear on hall A", || {
        push_target(&a)["conflicts"]
            .as_array()
            .is_some_and(Vec::is_empty)
            .then_some(())
    });
    assert_eq!(boards_of(&cloud, round), [1, 5, 101, 102, 104]);
    let cloud_games = pgn_games(&games_of(&cloud, round));
    // (Board 2 holds the game paired on board 1, since the swap.)
    assert!(cloud_games["1.5"].contains("White 1"), "{cloud_games:?}");
    assert!(
        cloud_games["1.102"].contains("White 102"),
        "{cloud_games:?}"
    );
}
