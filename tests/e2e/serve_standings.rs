//! The tournament around the games, as `relay serve` gives it: standings of a real event
//! imported from its pairing program's file (a 284-player Swiss, and a 50-team TRF-2026 team
//! event), after any round, with the tie-break order set by the arbiter; the CSVs, a player's
//! page and games; the TRF written back with 202 and the ranks; the arbiter's check when the
//! pairing program's next file disagrees; and a result set at a board counting in the public's
//! standings only once the delay has passed.

use super::referees::{as_paired, bytes_of};
use super::service::{Relay, get, get_json, request, wait_until};
use relay_core::standings::{Settings, standings};
use relay_core::trf::{Cell, Outcome, read_trf, write_trf};
use serde_json::{Value, json};
use std::collections::HashMap;

const TOKEN: &str = "standings-arbiter";
const AUTH: (&str, &str) = ("Authorization", "Bearer standings-arbiter");

fn relay(name: &str) -> (Relay, std::path::PathBuf) {
    relay_with(name, &[])
}

fn relay_with(name: &str, more: &[&str]) -> (Relay, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("relay-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = format!("sqlite://{}/relay.db", dir.display());
    let none = dir.join("no-boards").display().to_string();
    let mut args = vec![
        "--db",
        db.as_str(),
        "--port",
        none.as_str(),
        "--admin-token",
        TOKEN,
    ];
    args.extend_from_slice(more);
    let r = Relay::serve(&dir, &args);
    (r, dir)
}

fn import(r: &Relay, bytes: &[u8]) -> Value {
    let a = request("POST", &r.url("/api/tournaments/trf"), &[AUTH], Some(bytes));
    assert_eq!(a.status, 201, "{}", a.text());
    a.json()
}

fn patch(r: &Relay, id: i64, body: Value) -> (u16, Value) {
    let a = request(
        "PATCH",
        &r.url(&format!("/api/tournaments/{id}")),
        &[AUTH, ("Content-Type", "application/json")],
        Some(body.to_string().as_bytes()),
    );
    (a.status, a.json())
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn a_real_swiss_is_ranked_after_any_round_by_the_order_the_arbiter_sets() {
    let Some(bytes) = bytes_of("fide_example1_karl_mala_2005.trf") else {
        return;
    };
    let file = read_trf(&bytes).expect("reads");
    let (r, _dir) = relay("standings-swiss");
    let done = import(&r, &bytes);
    let id = done["tournament_id"].as_i64().expect("id");
    assert_eq!(done["differences"], json!([]), "the record is the file's");

    let s = get_json(&r.url(&format!("/api/tournaments/{id}/standings")));
    assert_eq!(s["round"], 7);
    assert_eq!(
        s["tiebreaks"],
        json!(["BH/C1", "BH", "SB"]),
        "a Swiss's default"
    );
    let players = s["players"].as_array().expect("players");
    assert_eq!(players.len(), 284);
    // Points are the file's points column; ranks run 1, 2, 3 … in order.
    for (i, p) in players.iter().enumerate() {
        assert_eq!(p["rank"], i as u64 + 1);
        let sr = p["start_rank"].as_u64().expect("start rank") as u32;
        let theirs = file.player(sr).and_then(|f| f.points).expect("points");
        assert!(close(&p["points"], theirs.as_f64()), "{p}");
        assert_eq!(p["tiebreaks"].as_array().map(Vec::len), Some(3));
        assert_eq!(p["rounds"].as_array().map(Vec::len), Some(7));
    }
    // The service's values are the core's on the file itself: the stored record ranks alike.
    let mut settings = Settings {
        tiebreaks: ["BH/C1", "BH", "SB"]
            .iter()
            .map(|c| relay_core::standings::Code::parse(c).expect("code"))
            .collect(),
        ..Settings::default()
    };
    let table = standings(&file, &settings);
    for (mine, p) in table.players.iter().zip(players) {
        assert_eq!(p["start_rank"], mine.start_rank);
        for (v, w) in mine
            .values
            .iter()
            .zip(p["tiebreaks"].as_array().expect("values"))
        {
            match v {
                Some(v) => assert!(close(w, *v), "{p}: {v}"),
                None => assert!(w.is_null()),
            }
        }
    }

    // After round 3: the cumulative points of the first three cells.
    let s3 = get_json(&r.url(&format!("/api/tournaments/{id}/standings?round=3")));
    assert_eq!(s3["round"], 3);
    for p in s3["players"].as_array().expect("players") {
        let sr = p["start_rank"].as_u64().expect("start rank") as u32;
        let f = file.player(sr).expect("there");
        let pts: f64 = f.cells.iter().take(3).map(|c| c.points().as_f64()).sum();
        assert!(close(&p["points"], pts), "{p}");
    }

    // The arbiter's order: refused when a code is not one (nothing changes), then taken.
    let (status, e) = patch(&r, id, json!({"tiebreaks": ["SB", "XYZ"]}));
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"].as_str().is_some_and(|m| m.contains("XYZ")),
        "{e}"
    );
    let unauth = request(
        "PATCH",
        &r.url(&format!("/api/tournaments/{id}")),
        &[("Content-Type", "application/json")],
        Some(br#"{"tiebreaks":["SB"]}"#),
    );
    assert_eq!(unauth.status, 401);
    let (status, t) = patch(&r, id, json!({"tiebreaks": ["SB", "BH/M1", "WIN"]}));
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["tiebreaks"], json!(["SB", "BH/M1", "WIN"]));
    let s = wait_until(5, "the new order in the standings", || {
        let s = get_json(&r.url(&format!("/api/tournaments/{id}/standings")));
        (s["tiebreaks"] == json!(["SB", "BH/M1", "WIN"])).then_some(s)
    });
    settings.tiebreaks = ["SB", "BH/M1", "WIN"]
        .iter()
        .map(|c| relay_core::standings::Code::parse(c).expect("code"))
        .collect();
    let table = standings(&file, &settings);
    let order: Vec<u64> = s["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| p["start_rank"].as_u64().expect("sr"))
        .collect();
    let core: Vec<u64> = table
        .players
        .iter()
        .map(|p| u64::from(p.start_rank))
        .collect();
    assert_eq!(order, core);

    // Football scoring, 3/1/0: what is not given follows (a forfeit win and a full bye as a
    // win, a half bye as a draw), as TRF-2026's 162 reads; the edition of FIDE's rules.
    let (status, e) = patch(&r, id, json!({"scoring": {"win": 3, "draw": 1, "lose": 0}}));
    assert_eq!(status, 400, "an unknown field is refused: {e}");
    let (status, e) = patch(&r, id, json!({"edition": "2025"}));
    assert_eq!(status, 400, "{e}");
    let (status, _) = patch(
        &r,
        id,
        json!({"scoring": {"win": 3, "draw": 1}, "edition": "2024"}),
    );
    assert_eq!(status, 200);
    let football = relay_core::standings::Scoring {
        win: 3.0,
        draw: 1.0,
        forfeit_win: 3.0,
        full_bye: 3.0,
        pairing_bye: 3.0,
        half_bye: 1.0,
        ..relay_core::standings::Scoring::default()
    };
    let s3 = wait_until(5, "3/1/0 in the standings", || {
        let s = get_json(&r.url(&format!("/api/tournaments/{id}/standings")));
        s["players"][0]["points"]
            .as_f64()
            .is_some_and(|p| p > 7.0)
            .then_some(s)
    });
    for p in s3["players"].as_array().expect("players") {
        let sr = p["start_rank"].as_u64().expect("start rank") as u32;
        let f = file.player(sr).expect("there");
        let pts: f64 = f.cells.iter().map(|c| football.of_cell(c)).sum();
        assert!(close(&p["points"], pts), "{p}");
    }
    let (status, _) = patch(&r, id, json!({"scoring": null, "edition": null}));
    assert_eq!(status, 200);

    // The CSVs: a header naming the codes, one line a player.
    let csv = get(&r.url(&format!("/api/tournaments/{id}/standings.csv"))).text();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("rank,start_rank,title,name,federation,rating,fide_id,team,points,SB,BH/M1,WIN,games")
    );
    assert_eq!(lines.count(), 284);
    let cross = get(&r.url(&format!("/api/tournaments/{id}/crosstable.csv"))).text();
    assert!(cross.starts_with("rank,start_rank,name,points,R1,R2,R3,R4,R5,R6,R7"));

    // A player's page and games.
    let first = &s["players"][0];
    let sr = first["start_rank"].as_u64().expect("sr");
    let page = get_json(&r.url(&format!("/api/tournaments/{id}/players/{sr}")));
    assert_eq!(page["name"], first["name"]);
    let games = page["games"].as_array().expect("games");
    assert_eq!(games.len(), 7);
    // A GM rated 2400 or more: K 10, a performance and a change by FIDE's formula.
    assert_eq!(page["k"], 10, "{page}");
    assert!(
        page["performance"].as_f64().is_some_and(|p| p > 2000.0),
        "{page}"
    );
    assert!(page["rating_change"].is_number(), "{page}");
    assert!(
        games
            .iter()
            .all(|g| g["opponent"]["name"].is_string() || g["opponent"].is_null())
    );
    let pgn = get(&r.url(&format!("/api/tournaments/{id}/players/{sr}/pgn"))).text();
    let played = games.iter().filter(|g| g["game_id"].is_i64()).count();
    assert_eq!(pgn.matches("[Event ").count(), played);
    assert_eq!(
        get(&r.url(&format!("/api/tournaments/{id}/players/9999"))).status,
        404
    );

    // The TRF back: 202 with the order, and the standings' ranks in the rank column.
    let trf = request(
        "GET",
        &r.url(&format!("/api/tournaments/{id}/trf")),
        &[AUTH],
        None,
    )
    .text();
    assert!(trf.lines().any(|l| l == "202 SB,BH/M1,WIN"), "202 written");
    let back = read_trf(trf.as_bytes()).expect("relay's TRF reads");
    assert_eq!(back.tournament.tiebreaks.as_deref(), Some("SB,BH/M1,WIN"));
    let rank_of: HashMap<u64, u64> = s["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| {
            (
                p["start_rank"].as_u64().expect("sr"),
                p["rank"].as_u64().expect("rank"),
            )
        })
        .collect();
    for p in &back.players {
        assert_eq!(
            p.rank.map(u64::from),
            rank_of.get(&u64::from(p.start_rank)).copied()
        );
    }

    // The pairing program's next file has round 7's top game the other way round: relay keeps
    // its record and the arbiter is told the game and both players' points.
    let mut wrong = file.clone();
    let (a, b) = match wrong.player(sr as u32).map(|p| p.cells[6]) {
        Some(Cell::Game {
            opponent,
            outcome: Some(o),
            ..
        }) => ((sr as u32, o), opponent),
        other => panic!("{other:?}"),
    };
    let flip = |o: Outcome| match o {
        Outcome::Win => Outcome::Loss,
        Outcome::Loss => Outcome::Win,
        Outcome::Draw => Outcome::Win,
        o => o,
    };
    let now = flip(a.1);
    for p in &mut wrong.players {
        if p.start_rank == a.0 || p.start_rank == b {
            if let Cell::Game { outcome, .. } = &mut p.cells[6] {
                *outcome = Some(if p.start_rank == a.0 {
                    now
                } else {
                    now.other()
                });
            }
            let total: f64 = p.cells.iter().map(|c| c.points().as_f64()).sum();
            p.points = relay_core::trf::HalfPoints::parse(&total.to_string());
        }
    }
    let again = request(
        "PUT",
        &r.url(&format!("/api/tournaments/{id}/trf")),
        &[AUTH],
        Some(write_trf(&wrong).as_bytes()),
    );
    assert_eq!(again.status, 200, "{}", again.text());
    let d = again.json()["differences"].clone();
    let d = d.as_array().expect("differences");
    let games: Vec<&Value> = d.iter().filter(|d| d["round"] == 7).collect();
    assert_eq!(games.len(), 1, "{d:?}");
    assert!(
        games[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("round 7"))
    );
    let pts: Vec<u64> = d
        .iter()
        .filter(|d| d["round"].is_null())
        .map(|d| d["start_rank"].as_u64().expect("sr"))
        .collect();
    let mut want = vec![a.0 as u64, u64::from(b)];
    want.sort();
    assert_eq!(pts, want, "{d:?}");

    // A file that also pairs two played round-7 boards otherwise is refused, naming the board,
    // and the refusal lists what else the file and relay's record disagree on.
    let whites: Vec<(u32, u32)> = wrong
        .players
        .iter()
        .filter_map(|p| match p.cells[6] {
            Cell::Game {
                opponent,
                colour: relay_core::trf::Colour::White,
                ..
            } if p.start_rank != a.0 && p.start_rank != b && opponent != a.0 && opponent != b => {
                Some((p.start_rank, opponent))
            }
            _ => None,
        })
        .take(2)
        .collect();
    let [(w1, b1), (w2, b2)] = whites[..] else {
        panic!("two round-7 games: {whites:?}")
    };
    let mut clash = wrong.clone();
    for p in &mut clash.players {
        let to = match p.start_rank {
            x if x == w1 => b2,
            x if x == b2 => w1,
            x if x == w2 => b1,
            x if x == b1 => w2,
            _ => continue,
        };
        if let Cell::Game { opponent, .. } = &mut p.cells[6] {
            *opponent = to;
        }
    }
    let refused = request(
        "PUT",
        &r.url(&format!("/api/tournaments/{id}/trf")),
        &[AUTH],
        Some(write_trf(&clash).as_bytes()),
    );
    assert_eq!(refused.status, 409, "{}", refused.text());
    let why = refused.json()["error"].as_str().unwrap_or("").to_string();
    assert!(why.contains("round 7 board"), "{why}");
    assert!(
        why.contains("also differ")
            && why.contains(&games[0]["text"].as_str().unwrap_or("?")[..20]),
        "{why}"
    );
}

#[test]
fn a_result_set_at_a_board_counts_in_the_public_standings_once_the_delay_has_passed() {
    let Some(bytes) = bytes_of("vega_sample_tournament.trfx") else {
        return;
    };
    let file = read_trf(&bytes).expect("reads");
    let (r, _dir) = relay("standings-live");
    // Round 5 paired, not played.
    let done = import(&r, write_trf(&as_paired(&file, 5)).as_bytes());
    let id = done["tournament_id"].as_i64().expect("id");
    let url = r.url(&format!("/api/tournaments/{id}/standings"));
    let before = get_json(&url);
    assert_eq!(before["round"], 4, "the last round with a result");
    let s5 = get_json(&format!("{url}?round=5"));
    let leader = s5["players"][0].clone();
    let game = leader["rounds"][4]["game_id"]
        .as_i64()
        .expect("paired on a board");
    let colour = leader["rounds"][4]["colour"]
        .as_str()
        .expect("colour")
        .to_string();
    let points = leader["points"].as_f64().expect("points");
    let sr = leader["start_rank"].clone();
    // A delay for the public, then the leader wins at the board.
    let (status, _) = patch(&r, id, json!({"delay_secs": 3}));
    assert_eq!(status, 200);
    // The imported results were set at the import: the public counts them 3 s later.
    wait_until(8, "the imported results public", || {
        let p = get_json(&format!("{url}?round=5"));
        close(&p["players"][0]["points"], points).then_some(())
    });
    let result = if colour == "w" { "1-0" } else { "0-1" };
    let set = request(
        "POST",
        &r.url(&format!("/api/games/{game}/result")),
        &[AUTH, ("Content-Type", "application/json")],
        Some(json!({"result": result}).to_string().as_bytes()),
    );
    assert_eq!(set.status, 200, "{}", set.text());
    let row = |s: &Value| {
        s["players"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["start_rank"] == sr).cloned())
            .expect("the player")
    };
    // The arbiter sees it within a second; the public not before the delay.
    let arbiter = wait_until(5, "the arbiter's standings", || {
        let a = request("GET", &format!("{url}?round=5"), &[AUTH], None).json();
        close(&row(&a)["points"], points + 1.0).then_some(a)
    });
    assert_eq!(row(&arbiter)["rounds"][4]["result"], "1");
    let public = get_json(&format!("{url}?round=5"));
    assert!(close(&row(&public)["points"], points), "{}", row(&public));
    wait_until(8, "the public's standings after the delay", || {
        let p = get_json(&format!("{url}?round=5"));
        close(&row(&p)["points"], points + 1.0).then_some(())
    });
}

#[test]
fn a_team_event_ranks_its_teams_by_match_points_and_its_own_order() {
    let Some(bytes) = bytes_of("grandmommys_cup_trf26_team.trf") else {
        return;
    };
    let (r, _dir) = relay("standings-teams");
    let done = import(&r, &bytes);
    let id = done["tournament_id"].as_i64().expect("id");
    let s = get_json(&r.url(&format!("/api/tournaments/{id}/standings")));
    assert_eq!(
        s["tiebreaks"],
        json!(["EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP"]),
        "the file's 202"
    );
    let teams = s["teams"].as_array().expect("teams");
    assert_eq!(teams.len(), 50);
    for (i, t) in teams.iter().enumerate() {
        assert_eq!(t["rank"], i as u64 + 1);
        assert!(
            t["players"].as_array().map(Vec::len).unwrap_or(0) >= 4,
            "{t}"
        );
    }
    // Each team's matches add up to its match and game points.
    for t in teams {
        let m = t["matches"].as_array().expect("matches");
        assert!(!m.is_empty(), "{t}");
        let mp: f64 = m.iter().filter_map(|m| m["match_points"].as_f64()).sum();
        let gp: f64 = m.iter().filter_map(|m| m["game_points"].as_f64()).sum();
        assert!(
            close(&t["match_points"], mp) && close(&t["game_points"], gp),
            "{t}"
        );
    }
    // With the file's team byes and forfeited matches (240, 320, 330) kept on import, every
    // team's match and game points are the file's own totals (its 310 lines, columns 55–60
    // and 62–67).
    let text = String::from_utf8_lossy(&bytes).replace('\t', " ");
    let col = |l: &str, a: usize, b: usize| {
        l.get(a - 1..b.min(l.len()))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let mut checked = 0;
    for l in text.lines().filter(|l| l.starts_with("310 ")) {
        let n: u64 = col(l, 5, 7).parse().expect("team number");
        let mp: f64 = col(l, 55, 60).parse().expect("match points");
        let gp: f64 = col(l, 62, 67).parse().expect("game points");
        let t = teams.iter().find(|t| t["number"] == n).expect("the team");
        assert!(
            close(&t["match_points"], mp) && close(&t["game_points"], gp),
            "team {n}: {t}"
        );
        checked += 1;
    }
    assert_eq!(checked, 50);
    // Match points never rise down the table.
    let mp: Vec<f64> = teams
        .iter()
        .filter_map(|t| t["match_points"].as_f64())
        .collect();
    assert!(mp.windows(2).all(|w| w[0] >= w[1]), "{mp:?}");
    assert!(mp[0] > 0.0);
}

#[test]
fn players_photos_come_from_the_organisers_folder_and_nothing_else_of_the_disk() {
    let Some(bytes) = bytes_of("vega_sample_tournament.trfx") else {
        return;
    };
    let photos = std::env::temp_dir().join(format!("relay-e2e-photos-{}", std::process::id()));
    std::fs::create_dir_all(&photos).expect("photos dir");
    // A JPEG's first bytes are enough for the check: relay serves the file as it is.
    let jpeg = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F', 0];
    std::fs::write(photos.join("93849384.jpg"), jpeg).expect("photo");
    std::fs::write(photos.join("secret.txt"), "not a photo").expect("file");
    let dir_arg = photos.display().to_string();
    let (r, _dir) = relay_with("standings-photos", &["--photos-dir", &dir_arg]);
    let id = import(&r, &bytes)["tournament_id"].as_i64().expect("id");
    let (status, e) = patch(&r, id, json!({"photos": "javascript:alert({fide_id})"}));
    assert_eq!(status, 400, "{e}");
    let (status, e) = patch(&r, id, json!({"photos": "/photos/x.jpg"}));
    assert_eq!(status, 400, "no {{fide_id}}: {e}");
    let (status, _) = patch(
        &r,
        id,
        json!({"photos": "/photos/{fide_id}.jpg", "photo_credit": "Photos: the organiser"}),
    );
    assert_eq!(status, 200);
    let s = get_json(&r.url(&format!("/api/tournaments/{id}/standings")));
    assert_eq!(s["photo_credit"], "Photos: the organiser");
    let with_id = s["players"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["fide_id"] == 93849384).cloned())
        .expect("the CM of the file");
    assert_eq!(with_id["photo"], "/photos/93849384.jpg");
    let a = get(&r.url("/photos/93849384.jpg"));
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("image/jpeg"));
    assert_eq!(a.body, jpeg);
    for bad in [
        "/photos/secret.txt",
        "/photos/..%2Frelay.db",
        "/photos/missing.jpg",
    ] {
        assert_eq!(get(&r.url(bad)).status, 404, "{bad}");
    }
}
