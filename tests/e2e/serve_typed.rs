//! Moves typed for boards without e-boards, through the real binary: an arbiter hands an
//! operator a token for some boards; the operator's moves, takebacks and result are stored and
//! reach spectators as a board's do; a resend after a lost answer is stored once; a wrong
//! token, another board and an illegal move are refused with a clear error and change
//! nothing; the token still works after a restart.

use super::service::{Answer, Relay, Socket, get, get_json, request, sans};
use super::temp_dir;
use serde_json::{Value, json};

const TOKEN: &str = "arbiter-secret-typed";

fn serve(dir: &std::path::Path) -> Relay {
    let db = format!("sqlite://{}/relay.db", dir.display());
    let none = format!("{}/no-such-port-*", dir.display());
    Relay::serve(dir, &["--db", &db, "--port", &none, "--admin-token", TOKEN])
}

fn send(r: &Relay, method: &str, path: &str, token: Option<&str>, body: &Value) -> Answer {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut h = vec![("Content-Type", "application/json")];
    if let Some(b) = &bearer {
        h.push(("Authorization", b.as_str()));
    }
    request(method, &r.url(path), &h, Some(body.to_string().as_bytes()))
}

/// The game on `board` of round 1.
fn game_on(r: &Relay, board: u64) -> Value {
    let round = get_json(&r.url("/api/rounds/1"));
    let id = round["games"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["board_no"] == board))
        .map(|g| g["id"].clone())
        .unwrap_or_else(|| panic!("no game on board {board}: {round}"));
    get_json(&r.url(&format!("/api/games/{id}")))
}

#[test]
fn typed_moves_are_stored_once_announced_and_refused_where_they_must_be() {
    let dir = temp_dir("serve-typed");
    let mut r = serve(&dir);
    let admin = Some(TOKEN);
    let pairings = json!([
        {"board_no": 1, "white": {"name": "Alpha, A"}, "black": {"name": "Beta, B"}},
        {"board_no": 2, "white": {"name": "Gamma, C"}, "black": {"name": "Delta, D"}},
        {"board_no": 3, "white": {"name": "Eps, E"}, "black": {"name": "Zeta, Z"}},
    ]);
    let a = send(&r, "PUT", "/api/rounds/1/pairings", admin, &pairings);
    assert!(a.status < 300, "{}", a.text());
    let g2 = game_on(&r, 2)["id"].as_i64().expect("game id");
    let g1 = game_on(&r, 1)["id"].as_i64().expect("game id");
    let mut spectator = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
    spectator.until(5, |m| m["type"] == "snapshot");

    // The arbiter hands out a token for boards 2 and 3 (given in any order, once each).
    let a = send(
        &r,
        "POST",
        "/api/rounds/1/operators",
        admin,
        &json!({"boards": [3, 2, 3]}),
    );
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(a.json()["boards"], json!([2, 3]));
    let op = a.json()["token"].as_str().expect("token").to_string();
    let operator = Some(op.as_str());
    // Refused: no token, an operator token for nothing, or made without the admin token.
    for (body, token, status) in [
        (json!({"boards": [2]}), None, 401),
        (json!({"boards": [2]}), operator, 403),
        (json!({"boards": []}), admin, 400),
        (json!({"boards": [0]}), admin, 400),
        (json!({"board": [2]}), admin, 400),
    ] {
        let a = send(&r, "POST", "/api/rounds/1/operators", token, &body);
        assert_eq!(a.status, status, "{body} {token:?}: {}", a.text());
    }
    let a = send(
        &r,
        "POST",
        "/api/rounds/99/operators",
        admin,
        &json!({"boards": [2]}),
    );
    assert_eq!(a.status, 404, "{}", a.text());

    let moves = format!("/api/games/{g2}/moves");
    // The first move, then its resend after a "lost" answer: stored once.
    let a = send(
        &r,
        "POST",
        &moves,
        operator,
        &json!({"san": "e4", "ply": 1, "clk_ms": 5_400_000}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        (a.json()["ply"].clone(), a.json()["already"].clone()),
        (json!(1), json!(false))
    );
    let a = send(
        &r,
        "POST",
        &moves,
        operator,
        &json!({"san": "e4", "ply": 1, "clk_ms": 5_400_000}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["already"], true, "{}", a.text());
    assert_eq!(a.json()["seq"], Value::Null);
    // UCI works too; no ply means the next one.
    let a = send(
        &r,
        "POST",
        &moves,
        operator,
        &json!({"uci": "g8f6", "clk_ms": 5_395_000}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["ply"], 2);

    // Refusals that change nothing.
    let before = game_on(&r, 2);
    let wrong = "op-1-2.3-0000000000000000000000000000000000000000000000000000000000000000";
    let widened = op.replacen("op-1-2.3-", "op-1-1.2.3-", 1);
    for (path, body, token, status, says) in [
        (
            moves.clone(),
            json!({"san": "d4", "ply": 1}),
            operator,
            409,
            "already",
        ),
        (
            moves.clone(),
            json!({"san": "Ke3", "ply": 3}),
            operator,
            400,
            "not legal",
        ),
        (
            moves.clone(),
            json!({"san": "Zz9"}),
            operator,
            400,
            "not a move",
        ),
        (
            moves.clone(),
            json!({"uci": "e2e4", "san": "e4"}),
            operator,
            400,
            "one of the two",
        ),
        (
            moves.clone(),
            json!({"san": "Nf3", "ply": 5}),
            operator,
            409,
            "next is ply 3",
        ),
        (
            moves.clone(),
            json!({"san": "Nf3"}),
            None,
            401,
            "operator token",
        ),
        (
            moves.clone(),
            json!({"san": "Nf3"}),
            Some(wrong),
            403,
            "wrong operator token",
        ),
        (
            moves.clone(),
            json!({"san": "Nf3"}),
            Some(widened.as_str()),
            403,
            "wrong operator token",
        ),
        (
            moves.clone(),
            json!({"san": "Nf3"}),
            Some("arbiter-secret-other"),
            403,
            "wrong",
        ),
        (
            format!("/api/games/{g1}/moves"),
            json!({"san": "e4"}),
            operator,
            403,
            "not board 1",
        ),
        (
            format!("/api/games/{g1}/result"),
            json!({"result": "1-0"}),
            operator,
            403,
            "not board 1",
        ),
        (
            format!("/api/games/{g2}/takeback"),
            json!({"ply": 1}),
            operator,
            409,
            "only the last move",
        ),
    ] {
        let a = send(&r, "POST", &path, token, &body);
        assert_eq!(a.status, status, "{path} {body}: {}", a.text());
        assert!(a.text().contains(says), "{path} {body}: {}", a.text());
    }
    assert_eq!(game_on(&r, 2)["moves"], before["moves"], "nothing changed");
    assert!(
        game_on(&r, 1)["moves"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );

    // A takeback, resent, then another move in its place.
    let a = send(
        &r,
        "POST",
        &moves,
        operator,
        &json!({"san": "Qh5", "ply": 3}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    let takeback = format!("/api/games/{g2}/takeback");
    for already in [false, true] {
        let a = send(&r, "POST", &takeback, operator, &json!({"ply": 3}));
        assert_eq!(a.status, 200, "{}", a.text());
        assert_eq!(a.json()["already"], already, "{}", a.text());
    }
    let a = send(
        &r,
        "POST",
        &moves,
        operator,
        &json!({"san": "Nc3", "ply": 3, "clk_ms": 5_380_000}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    // The arbiter may type too, on any board.
    let a = send(
        &r,
        "POST",
        &format!("/api/games/{g1}/moves"),
        admin,
        &json!({"san": "d4"}),
    );
    assert_eq!(a.status, 200, "{}", a.text());

    // The operator's result stands until an arbiter confirms it; then no more moves.
    let a = send(
        &r,
        "POST",
        &format!("/api/games/{g2}/result"),
        operator,
        &json!({"result": "1/2-1/2"}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    let g = game_on(&r, 2);
    assert_eq!(sans(&g), ["e4", "Nf6", "Nc3"]);
    assert_eq!(
        (g["result"].clone(), g["status"].clone()),
        (json!("1/2-1/2"), json!("finished"))
    );
    let a = send(
        &r,
        "POST",
        &moves,
        operator,
        &json!({"san": "d5", "ply": 4}),
    );
    assert_eq!(a.status, 409, "{}", a.text());

    // Spectators saw every typed move as it was stored, the takeback too.
    let frames = spectator.until(10, |m| m["type"] == "result");
    let seen: Vec<String> = frames
        .iter()
        .filter_map(|m| match m["type"].as_str() {
            Some("move") => Some(format!("{}:{}", m["game_id"], m["move"]["san"].as_str()?)),
            Some("truncate") => Some(format!("{}:-{}", m["game_id"], m["from_ply"])),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [
            format!("{g2}:e4"),
            format!("{g2}:Nf6"),
            format!("{g2}:Qh5"),
            format!("{g2}:-3"),
            format!("{g2}:Nc3"),
            format!("{g1}:d4")
        ],
        "{frames:?}"
    );
    // The round's PGN holds them with the clocks typed.
    let pgn = get(&r.url("/api/rounds/1/pgn")).text();
    assert!(
        pgn.contains(
            "1. e4 {[%clk 1:30:00]} 1... Nf6 {[%clk 1:29:55]} 2. Nc3 {[%clk 1:29:40]}\n1/2-1/2"
        ),
        "{pgn}"
    );

    // After a restart the token still works (nothing of it was kept but the admin token).
    r.kill();
    let r = serve(&dir);
    let g3 = game_on(&r, 3)["id"].as_i64().expect("game id");
    let a = send(
        &r,
        "POST",
        &format!("/api/games/{g3}/moves"),
        operator,
        &json!({"san": "c4", "ply": 1}),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(sans(&game_on(&r, 2)), ["e4", "Nf6", "Nc3"]);
}
