//! `relay serve` routes through the real binary: reads, arbiter actions, tokens, bad input,
//! ETag, gzip, delay and WebSocket resume. No boards here (the board path has its own tests),
//! so every answer is deterministic.

use super::service::{Relay, Socket, get, get_json, request, sans};
use super::temp_dir;
use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;

const TOKEN: &str = "arbiter-secret-1";
const AUTH: (&str, &str) = ("Authorization", "Bearer arbiter-secret-1");

fn serve(dir: &std::path::Path, extra: &[&str]) -> Relay {
    let db = format!("sqlite://{}/relay.db", dir.display());
    let none = format!("{}/no-such-port-*", dir.display());
    let mut args = vec!["--db", db.as_str(), "--port", none.as_str()];
    args.extend_from_slice(extra);
    Relay::serve(dir, &args)
}

/// An arbiter's PATCH of `path` with a JSON body.
fn patch(r: &Relay, path: &str, body: &[u8]) -> super::service::Answer {
    request("PATCH", &r.url(path), &[AUTH], Some(body))
}

fn post(r: &Relay, path: &str, body: &Value, auth: bool) -> super::service::Answer {
    let mut h = vec![("Content-Type", "application/json")];
    if auth {
        h.push(AUTH);
    }
    request("POST", &r.url(path), &h, Some(body.to_string().as_bytes()))
}

const PGN_GAME: &str = r#"[Event "Test"]
[White "Anderssen, Adolf"]
[Black "Kieseritzky, Lionel"]
[Result "*"]

1. e4 {[%clk 1:30:00]} e5 {[%clk 1:29:50]} 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 *
"#;

#[test]
fn routes_answer_with_the_right_codes_and_change_nothing_on_bad_input() {
    let dir = temp_dir("serve-api");
    let r = serve(&dir, &["--admin-token", TOKEN]);

    // Reads on a fresh service: the automatic tournament and round are there.
    let health = get(&r.url("/health"));
    assert_eq!(health.status, 200, "{}", health.text());
    assert_eq!(health.json()["store"]["backend"], "sqlite");
    let ts = get_json(&r.url("/api/tournaments"));
    assert_eq!(ts.as_array().map(Vec::len), Some(1), "{ts}");
    let metrics = get(&r.url("/metrics"));
    assert!(
        metrics.text().contains("relay_moves_committed_total 0"),
        "{}",
        metrics.text()
    );
    let doc = get_json(&r.url("/api/openapi.json"));
    assert_eq!(doc["openapi"], "3.0.3");
    for p in [
        "/api/rounds/{id}/pgn",
        "/api/games/{id}/ws",
        "/health",
        "/metrics",
        "/api/rounds/{id}/pairings",
    ] {
        assert!(doc["paths"][p].is_object(), "OpenAPI lacks {p}");
    }

    // A proxy's Basic credentials are not ours: the reader is public.
    let basic = request(
        "GET",
        &r.url("/api/tournaments"),
        &[("Authorization", "Basic dXNlcjpwdw==")],
        None,
    );
    assert_eq!(basic.status, 200, "{}", basic.text());

    // Tokens: none → 401, wrong → 403, right → 201.
    let t = json!({"name": "Hastings Premier", "site": "Hastings", "time_control": "5400+30"});
    assert_eq!(post(&r, "/api/tournaments", &t, false).status, 401);
    let wrong = request(
        "POST",
        &r.url("/api/tournaments"),
        &[("Authorization", "Bearer nope-nope-nope")],
        Some(t.to_string().as_bytes()),
    );
    assert_eq!(wrong.status, 403);
    assert_eq!(
        get_json(&r.url("/api/tournaments"))
            .as_array()
            .map(Vec::len),
        Some(1),
        "a refused request changed something"
    );
    let created = post(&r, "/api/tournaments", &t, true);
    assert_eq!(created.status, 201, "{}", created.text());
    let tid = created.json()["id"].as_i64().expect("id");

    // Bad input: named problems, nothing stored.
    let bad = request(
        "POST",
        &r.url("/api/tournaments"),
        &[AUTH],
        Some(b"{not json"),
    );
    assert_eq!(bad.status, 400);
    assert!(
        bad.json()["error"]
            .as_str()
            .unwrap_or("")
            .contains("malformed JSON"),
        "{}",
        bad.text()
    );
    let unknown = post(
        &r,
        "/api/tournaments",
        &json!({"name": "x", "colour": 1}),
        true,
    );
    assert_eq!(unknown.status, 400, "{}", unknown.text());
    let tc = post(
        &r,
        "/api/tournaments",
        &json!({"name": "x", "time_control": "ninety minutes"}),
        true,
    );
    assert_eq!(tc.status, 400, "{}", tc.text());
    let delay = post(
        &r,
        "/api/tournaments",
        &json!({"name": "x", "delay_secs": 4000}),
        true,
    );
    assert_eq!(delay.status, 400, "{}", delay.text());
    let huge = vec![b' '; 9 * 1024 * 1024];
    let too_big = request(
        "PUT",
        &r.url("/api/rounds/1/pairings"),
        &[AUTH, ("Content-Type", "application/x-chess-pgn")],
        Some(&huge),
    );
    assert_eq!(too_big.status, 413);
    assert_eq!(
        get_json(&r.url("/api/tournaments"))
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // Unknown ids.
    for p in [
        "/api/games/999",
        "/api/games/999/pgn",
        "/api/rounds/999",
        "/api/rounds/999/pgn",
        "/api/tournaments/999",
        "/api/tournaments/999/pgn",
        "/api/games/abc",
        "/api/rounds/999/ws",
    ] {
        assert_eq!(get(&r.url(p)).status, 404, "{p}");
    }

    // A round with pairings from JSON, and the same from PGN tags.
    let round = post(
        &r,
        &format!("/api/tournaments/{tid}/rounds"),
        &json!({"number": "1", "date": "2026-01-03"}),
        true,
    );
    assert_eq!(round.status, 201, "{}", round.text());
    let rid = round.json()["id"].as_i64().expect("id");
    let pairings = json!([
        {"board_no": 1, "white": {"name": "Anderssen, Adolf", "rating": 2600, "title": "GM", "federation": "GER"}, "black": {"name": "Kieseritzky, Lionel"}},
        {"board_no": 2, "white": {"name": "Morphy, Paul"}, "black": {"name": "Duke Karl"}},
    ]);
    let put = request(
        "PUT",
        &r.url(&format!("/api/rounds/{rid}/pairings")),
        &[AUTH, ("Content-Type", "application/json")],
        Some(pairings.to_string().as_bytes()),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    let twice = json!([{"board_no": 3}, {"board_no": 3}]);
    let dup = request(
        "PUT",
        &r.url(&format!("/api/rounds/{rid}/pairings")),
        &[AUTH, ("Content-Type", "application/json")],
        Some(twice.to_string().as_bytes()),
    );
    assert_eq!(dup.status, 400);
    assert!(dup.text().contains("paired twice"), "{}", dup.text());
    let pgn_pairings = "[Event \"T\"]\n[Round \"1.3\"]\n[White \"Steinitz, William\"]\n[Black \"Zukertort, Johannes\"]\n[WhiteElo \"2650\"]\n[Result \"*\"]\n\n*\n";
    let put = request(
        "PUT",
        &r.url(&format!("/api/rounds/{rid}/pairings")),
        &[AUTH, ("Content-Type", "application/x-chess-pgn")],
        Some(pgn_pairings.as_bytes()),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    let view = get_json(&r.url(&format!("/api/rounds/{rid}")));
    let games = view["games"].as_array().expect("games");
    assert_eq!(games.len(), 3);
    assert_eq!(games[2]["white"]["name"], "Steinitz, William");
    assert_eq!(games[2]["white"]["rating"], 2650);
    let g1 = games[0]["id"].as_i64().expect("game id");

    // A live follower of the round from here on.
    let mut ws = Socket::connect(&r.ws_url(&format!("/api/rounds/{rid}/ws")));
    let snap = ws.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(snap["type"], "snapshot");
    let seq0 = snap["seq"].as_i64().expect("seq");

    // Arbiter corrections: the whole game from a PGN, a truncation, a move replaced, a result.
    let bad_pgn = request(
        "PUT",
        &r.url(&format!("/api/games/{g1}/pgn")),
        &[AUTH],
        Some(b"1. e4 e5 2. Ke3 *"),
    );
    assert_eq!(bad_pgn.status, 400, "{}", bad_pgn.text());
    assert!(
        get_json(&r.url(&format!("/api/games/{g1}")))["moves"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    // A game longer than any game played (2,001 plies of knights going back and forth) is
    // refused whole: 413, nothing stored.
    let mut endless = String::new();
    for i in 0..2001 {
        if i % 2 == 0 {
            endless.push_str(&format!("{}. ", i / 2 + 1));
        }
        endless.push_str(["Nf3 ", "Nf6 ", "Ng1 ", "Ng8 "][i % 4]);
    }
    endless.push('*');
    let long = request(
        "PUT",
        &r.url(&format!("/api/games/{g1}/pgn")),
        &[AUTH],
        Some(endless.as_bytes()),
    );
    assert_eq!(long.status, 413, "{}", long.text());
    assert!(long.text().contains("at most 2000"), "{}", long.text());
    assert!(
        get_json(&r.url(&format!("/api/games/{g1}")))["moves"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    let up = request(
        "PUT",
        &r.url(&format!("/api/games/{g1}/pgn")),
        &[AUTH],
        Some(PGN_GAME.as_bytes()),
    );
    assert_eq!(up.status, 200, "{}", up.text());
    let game = get_json(&r.url(&format!("/api/games/{g1}")));
    assert_eq!(
        sans(&game),
        ["e4", "e5", "f4", "exf4", "Bc4", "Qh4+", "Kf1"]
    );
    assert_eq!(game["moves"][0]["clk_ms"], 5_400_000);
    let msgs = ws.until(5, |m| m["type"] == "game");
    assert!(msgs.iter().all(|m| m["seq"].as_i64() > Some(seq0)));

    let t = post(
        &r,
        &format!("/api/games/{g1}/truncate"),
        &json!({"ply": 99}),
        true,
    );
    assert_eq!(t.status, 400, "{}", t.text());
    let t = post(
        &r,
        &format!("/api/games/{g1}/truncate"),
        &json!({"ply": 7}),
        true,
    );
    assert_eq!(t.status, 200, "{}", t.text());
    let m = ws.until(5, |m| m["type"] == "truncate");
    assert_eq!(m.last().expect("msg")["from_ply"], 7);
    let illegal = post(
        &r,
        &format!("/api/games/{g1}/move"),
        &json!({"ply": 6, "san": "Qh5"}),
        true,
    );
    assert_eq!(illegal.status, 400, "{}", illegal.text());
    let fixed = post(
        &r,
        &format!("/api/games/{g1}/move"),
        &json!({"ply": 6, "san": "Nf6"}),
        true,
    );
    assert_eq!(fixed.status, 200, "{}", fixed.text());
    let game = get_json(&r.url(&format!("/api/games/{g1}")));
    assert_eq!(game["moves"][5]["san"], "Nf6");
    assert_eq!(game["moves"].as_array().map(Vec::len), Some(6));

    assert_eq!(
        post(&r, &format!("/api/games/{g1}/confirm"), &json!({}), true).status,
        409
    );
    assert_eq!(
        post(
            &r,
            &format!("/api/games/{g1}/result"),
            &json!({"result": "2-0"}),
            true
        )
        .status,
        400
    );
    let res = post(
        &r,
        &format!("/api/games/{g1}/result"),
        &json!({"result": "1-0", "termination": "normal"}),
        true,
    );
    assert_eq!(res.status, 200, "{}", res.text());
    let m = ws.until(5, |m| m["type"] == "result");
    assert_eq!(m.last().expect("msg")["status"], "confirmed");
    let last_seen = m.last().expect("msg")["seq"].as_i64().expect("seq");
    ws.close();

    let audit = request(
        "GET",
        &r.url(&format!("/api/games/{g1}/audit")),
        &[AUTH],
        None,
    );
    assert_eq!(audit.status, 200);
    let actions: Vec<String> = audit
        .json()
        .as_array()
        .expect("audit")
        .iter()
        .filter_map(|a| a["action"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        actions,
        ["replace", "truncate", "replace", "result"],
        "{}",
        audit.text()
    );
    assert_eq!(get(&r.url(&format!("/api/games/{g1}/audit"))).status, 401);

    // Resume: a client that saw up to `last_seen` gets exactly what came after.
    let res = post(
        &r,
        &format!("/api/games/{g1}/result"),
        &json!({"result": "1/2-1/2"}),
        true,
    );
    assert_eq!(res.status, 200);
    let mut ws = Socket::connect(&r.ws_url(&format!("/api/rounds/{rid}/ws?since={last_seen}")));
    let first = ws.next(Duration::from_secs(5)).expect("missed change");
    assert_eq!(first["type"], "result", "{first}");
    assert_eq!(first["seq"].as_i64(), Some(last_seen + 1));
    assert_eq!(first["result"], "1/2-1/2");
    assert!(
        ws.next(Duration::from_millis(500)).is_none(),
        "nothing else was missed"
    );
    ws.close();

    // PGN: content type, ETag and 304, gzip.
    let pgn = get(&r.url(&format!("/api/rounds/{rid}/pgn")));
    assert_eq!(pgn.status, 200);
    assert!(
        pgn.header("content-type")
            .is_some_and(|c| c.starts_with("application/x-chess-pgn"))
    );
    let text = pgn.text();
    assert!(
        text.contains("[Round \"1.1\"]") && text.contains("[Board \"3\"]"),
        "{text}"
    );
    assert!(
        text.contains("[WhiteElo \"2600\"]") && text.contains("[TimeControl \"5400+30\"]"),
        "{text}"
    );
    assert!(
        text.contains("1. e4 {[%clk 1:30:00]} 1... e5 {[%clk 1:29:50]}"),
        "{text}"
    );
    assert!(text.find("[Board \"1\"]") < text.find("[Board \"2\"]"));
    let etag = pgn.header("etag").expect("ETag").to_string();
    let again = request(
        "GET",
        &r.url(&format!("/api/rounds/{rid}/pgn")),
        &[("If-None-Match", &etag)],
        None,
    );
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let zipped = request(
        "GET",
        &r.url(&format!("/api/rounds/{rid}/pgn")),
        &[("Accept-Encoding", "gzip")],
        None,
    );
    assert_eq!(zipped.header("content-encoding"), Some("gzip"));
    let mut unzipped = String::new();
    flate2::read::GzDecoder::new(&zipped.body[..])
        .read_to_string(&mut unzipped)
        .expect("gzip");
    assert_eq!(unzipped, text);
    assert!(
        get(&r.url(&format!("/api/tournaments/{tid}/pgn")))
            .text()
            .contains("Steinitz")
    );

    // Delay: spectators see the game as it was an hour ago (nothing); arbiters see it now.
    // A spectator already following the round live is moved to the delayed view at once.
    let mut early = Socket::connect(&r.ws_url(&format!("/api/rounds/{rid}/ws")));
    let live_snap = early.next(Duration::from_secs(5)).expect("live snapshot");
    // Spectators' round snapshots carry each game's last move only.
    assert_eq!(
        live_snap["round"]["games"][0]["moves"]
            .as_array()
            .map(|m| m.iter().map(|m| m["ply"].clone()).collect::<Vec<_>>()),
        Some(vec![json!(6)]),
        "{live_snap}"
    );
    let d = patch(
        &r,
        &format!("/api/rounds/{rid}"),
        json!({"delay_secs": 3600}).to_string().as_bytes(),
    );
    assert_eq!(d.status, 200, "{}", d.text());
    let resnap = early
        .next(Duration::from_secs(5))
        .expect("a new snapshot for the delay");
    assert_eq!(resnap["type"], "snapshot", "{resnap}");
    assert_eq!(
        resnap["round"]["games"][0]["moves"]
            .as_array()
            .map(Vec::len),
        Some(0),
        "the early spectator still sees live moves: {resnap}"
    );
    let public = get_json(&r.url(&format!("/api/games/{g1}")));
    assert_eq!(
        public["moves"].as_array().map(Vec::len),
        Some(0),
        "{public}"
    );
    assert_eq!(public["result"], "*");
    let live = request("GET", &r.url(&format!("/api/games/{g1}")), &[AUTH], None).json();
    assert_eq!(live["moves"].as_array().map(Vec::len), Some(6));
    let public_pgn = get(&r.url(&format!("/api/rounds/{rid}/pgn"))).text();
    assert!(!public_pgn.contains("e4"), "{public_pgn}");
    let round_view = get_json(&r.url(&format!("/api/rounds/{rid}")));
    assert_eq!(round_view["delay_secs"], 3600);
    assert_eq!(
        round_view["games"][0]["moves"].as_array().map(Vec::len),
        Some(0)
    );
    let mut ws = Socket::connect(&r.ws_url(&format!("/api/games/{g1}/ws")));
    let snap = ws.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(snap["game"]["moves"].as_array().map(Vec::len), Some(0));
    let t = post(
        &r,
        &format!("/api/games/{g1}/truncate"),
        &json!({"ply": 6}),
        true,
    );
    assert_eq!(t.status, 200);
    assert!(
        ws.next(Duration::from_millis(800)).is_none(),
        "a delayed spectator got a change early"
    );
    ws.close();
    assert!(
        early.next(Duration::from_millis(300)).is_none(),
        "the spectator connected before the delay got a change early"
    );
    early.close();
    let changes = get_json(&r.url(&format!("/api/rounds/{rid}/changes?since=0")));
    assert_eq!(
        changes["changes"].as_array().map(Vec::len),
        Some(0),
        "{changes}"
    );

    // E-boards on board numbers, tournament edits.
    let bad_serial = request(
        "PUT",
        &r.url(&format!("/api/rounds/{rid}/boards/4")),
        &[AUTH],
        Some(br#"{"serial":"../x"}"#),
    );
    assert_eq!(bad_serial.status, 400);
    let assigned = request(
        "PUT",
        &r.url(&format!("/api/rounds/{rid}/boards/4")),
        &[AUTH],
        Some(br#"{"serial":"01234"}"#),
    );
    assert_eq!(assigned.status, 200, "{}", assigned.text());
    let view = request("GET", &r.url(&format!("/api/rounds/{rid}")), &[AUTH], None).json();
    assert_eq!(view["games"][3]["board_no"], 4);
    assert_eq!(view["games"][3]["eboard"], "01234");
    let renamed = patch(
        &r,
        &format!("/api/tournaments/{tid}"),
        br#"{"name":"Hastings 1895"}"#,
    );
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    assert_eq!(renamed.json()["name"], "Hastings 1895");
    let dated = patch(
        &r,
        &format!("/api/tournaments/{tid}"),
        br#"{"start_date":"1895.08.05","end_date":"1895-09-02"}"#,
    );
    assert_eq!(dated.status, 200, "{}", dated.text());
    assert_eq!(dated.json()["start_date"], "1895-08-05");
    assert_eq!(dated.json()["end_date"], "1895-09-02");
    let bad_date = patch(
        &r,
        &format!("/api/tournaments/{tid}"),
        br#"{"end_date":"next week"}"#,
    );
    assert_eq!(bad_date.status, 400);
    assert!(bad_date.text().contains("end_date"), "{}", bad_date.text());
    assert_eq!(
        get_json(&r.url(&format!("/api/tournaments/{tid}")))["end_date"],
        "1895-09-02"
    );
    // A round renumbered and dated: the PGN says so at once.
    let round_edit = patch(
        &r,
        &format!("/api/rounds/{rid}"),
        br#"{"number":"7","date":"1895.08.14","delay_secs":null}"#,
    );
    assert_eq!(round_edit.status, 200, "{}", round_edit.text());
    let pgn = get(&r.url(&format!("/api/rounds/{rid}/pgn"))).text();
    assert!(
        pgn.contains("[Round \"7.1\"]") && pgn.contains("[Date \"1895.08.14\"]"),
        "{pgn}"
    );
    let second = post(
        &r,
        &format!("/api/tournaments/{tid}/rounds"),
        &json!({"number": "8"}),
        true,
    );
    assert_eq!(second.status, 201, "{}", second.text());
    let clash = patch(&r, &format!("/api/rounds/{rid}"), br#"{"number":"8"}"#);
    assert_eq!(clash.status, 409, "{}", clash.text());
    let bad_round_date = patch(
        &r,
        &format!("/api/rounds/{rid}"),
        br#"{"date":"1895-13-01"}"#,
    );
    assert_eq!(bad_round_date.status, 400, "{}", bad_round_date.text());
    // Edits of tournaments and rounds are in the relay-wide audit trail, newest first.
    let trail = request("GET", &r.url("/api/audit?limit=5"), &[AUTH], None);
    assert_eq!(trail.status, 200, "{}", trail.text());
    let actions: Vec<String> = trail
        .json()
        .as_array()
        .expect("trail")
        .iter()
        .filter_map(|a| a["action"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        actions[..4],
        [
            "create_round",
            "edit_round",
            "edit_tournament",
            "edit_tournament"
        ],
        "{}",
        trail.text()
    );
    assert_eq!(
        request("GET", &r.url("/api/audit?limit=0"), &[AUTH], None).status,
        400
    );
    assert_eq!(
        request("DELETE", &r.url("/api/eboards/77777"), &[AUTH], None).status,
        404
    );

    // Graceful stop.
    let mut r = r;
    assert!(
        r.terminate(),
        "relay did not stop cleanly:\n{}",
        r.log_text()
    );
}

#[test]
fn without_a_token_arbiter_routes_say_they_are_off() {
    let dir = temp_dir("serve-notoken");
    let r = serve(&dir, &[]);
    let a = post(&r, "/api/tournaments", &json!({"name": "x"}), false);
    assert_eq!(a.status, 503);
    assert!(
        a.text().contains("no admin token is configured"),
        "{}",
        a.text()
    );
    let a = post(&r, "/api/tournaments", &json!({"name": "x"}), true);
    assert_eq!(a.status, 503);
    assert_eq!(
        get_json(&r.url("/api/tournaments"))
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn bad_start_up_options_are_refused_clearly() {
    let dir = temp_dir("serve-badopts");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
            .arg("serve")
            .args(args)
            .output()
            .expect("run relay")
    };
    let out = run(&["--db", "mysql://x", "--listen", "127.0.0.1:0"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not understood"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&[
        "--db",
        "postgres://nobody@127.0.0.1:1/none",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot open the database"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cfg = dir.join("relay.toml");
    std::fs::write(&cfg, "listen = \"127.0.0.1:0\"\ndelay = 99999\n").expect("write config");
    let out = run(&["--config", &cfg.display().to_string()]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--delay"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A relay that reads no boards has no ports to read.
    let out = run(&[
        "--no-boards",
        "--port",
        "/dev/ttyUSB0",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--no-boards reads no ports"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `--bus` is a plain flag (the value is optional).
    let out = run(&["--bus", "--db", "mysql://x"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not understood"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&cfg, "lisen = \"127.0.0.1:0\"\n").expect("write config");
    let out = run(&["--config", &cfg.display().to_string()]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown field"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every route of the OpenAPI document (which is built from the router's own table) answers
/// its failure codes: admin routes 401 without a token, routes with an id 404 for an unknown
/// one, nothing 5xx.
#[test]
fn every_route_refuses_what_it_should() {
    let dir = temp_dir("serve-routes");
    let r = serve(&dir, &["--admin-token", TOKEN]);
    let doc = get_json(&r.url("/api/openapi.json"));
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.len() >= 20, "{} paths", paths.len());
    let mut checked = 0;
    for (path, ops) in paths {
        for (method, op) in ops.as_object().expect("operations") {
            let admin = op.get("security").is_some();
            let has_id = path.contains('{');
            let concrete = path
                .replace("{id}", "999999")
                .replace("{board_no}", "7")
                .replace("{serial}", "99999");
            let url = r.url(&concrete);
            let m = method.to_uppercase();
            let body = b"{}".as_slice();
            let send_body = matches!(m.as_str(), "POST" | "PUT" | "PATCH");
            let anon = request(&m, &url, &[], send_body.then_some(body));
            if admin {
                assert_eq!(
                    anon.status,
                    401,
                    "{m} {path} without a token: {}",
                    anon.text()
                );
                let wrong = request(
                    &m,
                    &url,
                    &[("Authorization", "Bearer wrong-token!")],
                    send_body.then_some(body),
                );
                assert_eq!(wrong.status, 403, "{m} {path} with a wrong token");
                if has_id {
                    let a = request(&m, &url, &[AUTH], send_body.then_some(body));
                    assert!(
                        matches!(a.status, 400 | 404),
                        "{m} {path} unknown id with the token: {} {}",
                        a.status,
                        a.text()
                    );
                }
            } else if has_id {
                assert_eq!(anon.status, 404, "{m} {path} unknown id: {}", anon.text());
            } else {
                assert_eq!(anon.status, 200, "{m} {path}: {}", anon.text());
            }
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} operations checked");
    // Nothing above changed anything.
    assert_eq!(
        get_json(&r.url("/api/tournaments"))
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(get_json(&r.url("/api/rounds/1"))["seq"], 0);
}

/// An idle socket still hears from the service: a heartbeat every 5 s, stamped with the
/// server's time, so a page can tell a quiet round from a dead or lagging connection.
#[test]
fn an_idle_websocket_gets_heartbeats() {
    let dir = temp_dir("serve-heartbeat");
    let r = serve(&dir, &[]);
    // The round made automatically at the first start.
    assert_eq!(get(&r.url("/api/rounds/1")).status, 200);
    let mut ws = Socket::connect(&r.ws_url("/api/rounds/1/ws"));
    let snap = ws.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(snap["type"], "snapshot");
    assert!(
        ws.next(Duration::from_secs(11)).is_none(),
        "an idle round sent a change"
    );
    assert_eq!(ws.heartbeats.len(), 2, "{:?}", ws.heartbeats);
    for (sent, arrived) in &ws.heartbeats {
        assert!(
            (0..1000).contains(&(arrived - sent)),
            "a heartbeat sent at {sent} arrived at {arrived}"
        );
    }
    let gap = ws.heartbeats[1].0 - ws.heartbeats[0].0;
    assert!((4500..5500).contains(&gap), "heartbeats {gap} ms apart");
    ws.close();
}

/// `--log-json`: every log line is a JSON object with a level and a message; with requests
/// logged (`RELAY_LOG=tower_http=debug`), the admin token used in a request still never appears.
#[test]
fn log_json_gives_one_json_object_per_line_without_the_token() {
    let dir = temp_dir("serve-logjson");
    let db = format!("sqlite://{}/relay.db", dir.display());
    let none = format!("{}/no-such-port-*", dir.display());
    let args = [
        "--db",
        db.as_str(),
        "--port",
        none.as_str(),
        "--log-json",
        "--admin-token",
        TOKEN,
    ];
    let mut r = Relay::serve_logging(&dir, &args, "info,tower_http=debug,relay=debug");
    assert_eq!(
        post(&r, "/api/tournaments", &json!({"name": "Logged"}), true).status,
        201
    );
    assert_eq!(get(&r.url("/api/rounds/1")).status, 200);
    assert!(r.terminate(), "relay serve did not stop on SIGTERM");
    let log = r.log_text();
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() >= 3, "{log}");
    for line in &lines {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        assert!(v["level"].is_string(), "{line}");
        assert!(v["fields"].is_object(), "{line}");
    }
    assert!(
        lines.iter().any(|l| l.contains("/api/tournaments")),
        "no request in the log:\n{log}"
    );
    assert!(!log.contains(TOKEN), "the token is in the log:\n{log}");
}

/// A round with a short delay: spectators get each change the delay after it was made, from
/// one delay line shared by all of them, and one who joins meanwhile gets the view of its
/// moment and then the changes as they come due.
#[test]
fn a_delayed_round_reaches_every_spectator_after_the_delay() {
    let dir = temp_dir("serve-delay-line");
    let r = serve(&dir, &["--admin-token", TOKEN]);
    let ts = get_json(&r.url("/api/tournaments"));
    let tid = ts[0]["id"].as_i64().expect("tournament id");
    let round = post(
        &r,
        &format!("/api/tournaments/{tid}/rounds"),
        &json!({"number": "2", "delay_secs": 2}),
        true,
    );
    assert_eq!(round.status, 201, "{}", round.text());
    let rid = round.json()["id"].as_i64().expect("id");
    let put = request(
        "PUT",
        &r.url(&format!("/api/rounds/{rid}/pairings")),
        &[AUTH, ("Content-Type", "application/json")],
        Some(
            json!([{"board_no": 1, "white": {"name": "A"}, "black": {"name": "B"}}])
                .to_string()
                .as_bytes(),
        ),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    let g1 = get_json(&r.url(&format!("/api/rounds/{rid}")))["games"][0]["id"]
        .as_i64()
        .expect("game id");
    // Let the pairings become public (they too are held for the delay).
    std::thread::sleep(Duration::from_millis(2200));
    // Spectators' round snapshots carry each game's last move only: its ply is the count.
    let plies = |v: &Value| {
        v["round"]["games"][0]["moves"]
            .as_array()
            .map(|m| m.last().and_then(|m| m["ply"].as_u64()).unwrap_or(0) as usize)
    };

    let mut early = Socket::connect(&r.ws_url(&format!("/api/rounds/{rid}/ws")));
    let snap = early.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(plies(&snap), Some(0), "{snap}");
    let made = std::time::Instant::now();
    let up = request(
        "PUT",
        &r.url(&format!("/api/games/{g1}/pgn")),
        &[AUTH],
        Some(PGN_GAME.as_bytes()),
    );
    assert_eq!(up.status, 200, "{}", up.text());

    // Joins after the change, before it is due: the view of its moment, then the change.
    std::thread::sleep(Duration::from_millis(500));
    let mut late = Socket::connect(&r.ws_url(&format!("/api/rounds/{rid}/ws")));
    let late_snap = late.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(
        plies(&late_snap),
        Some(0),
        "the late spectator saw the future: {late_snap}"
    );

    for (who, ws) in [("early", &mut early), ("late", &mut late)] {
        let got = ws.next(Duration::from_secs(6)).expect("the delayed change");
        let after = made.elapsed();
        assert_eq!(got["type"], "game", "{who}: {got}");
        assert_eq!(
            got["game"]["moves"].as_array().map(Vec::len),
            Some(7),
            "{who}: {got}"
        );
        assert!(
            after >= Duration::from_millis(1900),
            "{who} got the change {after:?} after it was made, before the 2 s delay"
        );
    }
    // After the delay a newcomer's snapshot has the moves.
    let mut next = Socket::connect(&r.ws_url(&format!("/api/rounds/{rid}/ws")));
    let now = next.next(Duration::from_secs(5)).expect("snapshot");
    assert_eq!(plies(&now), Some(7), "{now}");
    // Arbiters see it live.
    let live = request("GET", &r.url(&format!("/api/rounds/{rid}")), &[AUTH], None).json();
    assert_eq!(live["games"][0]["moves"].as_array().map(Vec::len), Some(7));
}

/// Bounds on clients (issue 14's fault runs): a connection that sends no request, or its
/// head too slowly, is closed after the header time (10 s); a WebSocket client that stops
/// reading answers no ping and is closed after the silence limit, while one that reads stays.
#[test]
fn slow_silent_and_never_reading_clients_are_let_go() {
    let dir = temp_dir("serve-limits");
    let r = serve(&dir, &["--client-silence-secs", "10"]);
    let addr = r.base.trim_start_matches("http://").to_string();
    let closed_within = |mut s: std::net::TcpStream, secs: u64| {
        s.set_read_timeout(Some(Duration::from_secs(secs)))
            .expect("timeout");
        let start = std::time::Instant::now();
        let mut buf = [0u8; 256];
        // 0 bytes (or a reset) is the close; a timeout means it is still open.
        loop {
            match s.read(&mut buf) {
                Ok(0) => return Some(start.elapsed()),
                Ok(_) => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return None;
                }
                Err(_) => return Some(start.elapsed()),
            }
        }
    };
    let silent = std::net::TcpStream::connect(&addr).expect("connect");
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    use std::io::Write;
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: relay\r\n")
        .expect("write");
    // WebSocket clients: one reads all along, one never does.
    let started = std::time::Instant::now();
    let reader = {
        let url = r.ws_url("/api/rounds/1/ws");
        std::thread::spawn(move || {
            let mut ws = Socket::connect(&url);
            let end = std::time::Instant::now() + Duration::from_secs(25);
            while std::time::Instant::now() < end && !ws.is_closed() {
                let _ = ws.next(Duration::from_secs(1));
            }
            let closed = ws.is_closed();
            ws.close();
            closed
        })
    };
    let (never, _) = tungstenite::connect(r.ws_url("/api/rounds/1/ws")).expect("ws");
    let silent_t = std::thread::spawn(move || closed_within(silent, 15));
    let slow_t = std::thread::spawn(move || closed_within(slow, 15));
    assert!(
        silent_t.join().expect("thread").is_some(),
        "a connection that sent nothing is still open after 15 s"
    );
    assert!(
        slow_t.join().expect("thread").is_some(),
        "a connection with half a request head is still open after 15 s"
    );
    // The never-reader is closed at the first heartbeat 10 s after it connected (by 15 s);
    // the reader answers the pings and stays.
    std::thread::sleep(Duration::from_secs(20).saturating_sub(started.elapsed()));
    let metrics = get(&r.url("/metrics")).text();
    let value = |name: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&format!("relay_{name} ")))
            .and_then(|v| v.trim().parse::<i64>().ok())
    };
    assert_eq!(value("ws_silent_closed_total"), Some(1), "{metrics}");
    assert_eq!(value("ws_clients"), Some(1), "{metrics}");
    assert!(
        !reader.join().expect("reader"),
        "the reading client was closed"
    );
    drop(never);
}

/// The service writes a feed's frames onto the connection itself, beside the WebSocket
/// library's own pongs (`api::ws::Wire`). A client with a small receive window, that pings
/// while the service's writes are held up by it and then reads slowly while moves are played,
/// gets every frame whole: the whole snapshot, every move, and its pongs in order.
#[test]
fn a_slow_reader_that_pings_gets_every_frame_whole() {
    use tungstenite::Message;
    let dir = temp_dir("serve-slow-reader");
    let r = serve(&dir, &["--admin-token", TOKEN]);
    // 300 boards: a snapshot of about 100 KB, far beyond the client's window.
    let pairings: Vec<Value> = (1..=300)
        .map(|b| {
            json!({"board_no": b, "white": {"name": format!("White player {b}")},
                   "black": {"name": format!("Black player {b}")}})
        })
        .collect();
    let put = request(
        "PUT",
        &r.url("/api/rounds/1/pairings"),
        &[AUTH, ("Content-Type", "application/json")],
        Some(Value::from(pairings).to_string().as_bytes()),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    let games: Vec<i64> = get_json(&r.url("/api/rounds/1"))["games"]
        .as_array()
        .expect("games")
        .iter()
        .filter_map(|g| g["id"].as_i64())
        .collect();
    assert_eq!(games.len(), 300);

    let addr: std::net::SocketAddr = r
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let sock =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    sock.set_recv_buffer_size(2048).expect("SO_RCVBUF");
    sock.connect(&addr.into()).expect("connect");
    let stream: std::net::TcpStream = sock.into();
    let (mut ws, _) = tungstenite::client(r.ws_url("/api/rounds/1/ws"), stream).expect("handshake");
    // Pings while the snapshot waits for the window (the service answers the latest of those
    // it reads together), then moves while it answers them.
    for i in 0..40u8 {
        ws.send(Message::Ping(vec![i].into())).expect("ping");
    }
    std::thread::sleep(Duration::from_millis(300));
    let played = 20;
    for g in &games[..played] {
        let m = post(
            &r,
            &format!("/api/games/{g}/move"),
            &json!({"ply": 1, "san": "e4"}),
            true,
        );
        assert_eq!(m.status, 200, "{}", m.text());
    }
    ws.get_ref()
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let (mut pongs, mut games_seen, mut moves, mut parts_left) = (Vec::new(), 0, 0, None);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while pongs.last() != Some(&39) || moves < played || parts_left != Some(0) {
        assert!(
            std::time::Instant::now() < deadline,
            "after 30 s: pongs {pongs:?}, {moves} moves, {games_seen} games, parts left {parts_left:?}"
        );
        // A frame cut by another's bytes does not read as a frame, or not as JSON.
        match ws.read().expect("a whole frame") {
            Message::Pong(p) => pongs.push(p.first().copied().expect("payload")),
            Message::Text(t) => {
                let v: Value = serde_json::from_str(t.as_str()).expect("JSON");
                match v["type"].as_str() {
                    Some("snapshot") => {
                        games_seen += v["round"]["games"].as_array().map_or(0, Vec::len);
                        parts_left = v["more"].as_u64().or(Some(0));
                    }
                    Some("games") => {
                        games_seen += v["games"].as_array().map_or(0, Vec::len);
                        parts_left = parts_left.map(|n| n - 1);
                    }
                    // An arbiter's move comes as its whole game.
                    Some("move") | Some("game") => moves += 1,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert_eq!(games_seen, 300);
    assert!(pongs.windows(2).all(|w| w[0] < w[1]), "pongs {pongs:?}");
}
