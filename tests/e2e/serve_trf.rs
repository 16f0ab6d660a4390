//! A tournament run from the pairing program's file: round 1 of a real TRF (Vega's sample,
//! as paired, before any result) imported with `relay import`, played on emulated boards read
//! by `relay serve`; the round's PGN carries the players' titles, ratings, FIDE ids and
//! federations; the TRF relay writes back has the boards' results, and a pairing program
//! (caissify-pairings' FIDE Dutch engine, an outside reader) reads it and pairs round 2.

use super::referees::{as_paired, available, bytes_of, referee};
use super::service::{Emulator, Relay, get, get_json, request, wait_until};
use relay_core::trf::{Cell, read_trf, write_trf};
use std::process::Command;

const AUTH: (&str, &str) = ("Authorization", "Bearer trf-arbiter");

#[test]
fn a_round_from_the_pairing_program_is_played_on_boards_and_goes_back_with_its_results() {
    let emu = Emulator::start(
        "serve-trf",
        &[
            "--boards",
            "3",
            "--speed",
            "20",
            "--hold-secs",
            "120",
            "--seed",
            "11",
        ],
    );
    // Round 1 as the pairing program wrote it when it had just paired it.
    let Some(bytes) = bytes_of("vega_sample_tournament.trfx") else {
        return;
    };
    let trf = as_paired(&read_trf(&bytes).expect("Vega's file reads"), 1);
    let file = emu.dir.join("round1.trf");
    std::fs::write(&file, write_trf(&trf)).expect("write");
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["import", "--db", &db])
        .arg(&file)
        .output()
        .expect("relay import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let r = Relay::serve(
        &emu.dir,
        &[
            "--db",
            &db,
            "--port",
            &emu.ports(),
            "--admin-token",
            "trf-arbiter",
        ],
    );
    // The round as pages and platforms see it: the file's players on the file's boards.
    let round = get_json(&r.url("/api/rounds/1"));
    let games = round["games"].as_array().cloned().unwrap_or_default();
    assert_eq!(games.len(), 3);
    let first = &games[0]["white"];
    assert!(
        first["start_rank"].is_u64() && first["name"].is_string(),
        "{first}"
    );
    let t = get_json(&r.url("/api/tournaments/1"));
    assert_eq!(t["name"], "Vega sample tournament");
    assert_eq!(t["site"], "Melbourne");
    assert_eq!(t["federation"], "AUS");
    assert_eq!(t["arbiters"][0], "Truong Nguyen");
    assert_eq!(t["rounds_planned"], 5);
    assert_eq!(t["start_date"], "2023-12-29");
    let players = get_json(&r.url("/api/tournaments/1/players"));
    assert_eq!(players.as_array().map(Vec::len), Some(6));
    assert_eq!(players[0]["title"], "CM");
    assert_eq!(players[0]["fide_id"], 93849384);

    // The boards play round 1 to the end.
    let done = wait_until(240, "round 1 to be played", || {
        let g = get_json(&r.url("/api/rounds/1"))["games"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        g.iter().all(|g| g["result"] != "*").then_some(g)
    });
    // The PGN carries who played: titles, ratings, FIDE ids, federations (as the team tag).
    let pgn = get(&r.url("/api/rounds/1/pgn")).text();
    let parsed: Vec<_> = relay_core::pgn::read_games(&pgn)
        .into_iter()
        .map(|g| g.expect("PGN"))
        .collect();
    assert_eq!(parsed.len(), 3);
    for (p, g) in parsed.iter().zip(&done) {
        for side in ["White", "Black"] {
            let who = &g[side.to_lowercase()];
            let rank = who["start_rank"].as_u64().expect("rank") as u32;
            let player = trf.player(rank).expect("player");
            assert_eq!(p.tags.get(side), Some(player.name.as_str()));
            assert_eq!(
                p.tags.get(&format!("{side}Elo")),
                player.rating.map(|r| r.to_string()).as_deref()
            );
            assert_eq!(
                p.tags.get(&format!("{side}FideId")),
                player.fide_id.map(|r| r.to_string()).as_deref()
            );
            assert_eq!(p.tags.get(&format!("{side}Title")), player.title.as_deref());
            assert_eq!(
                p.tags.get(&format!("{side}Team")),
                player.federation.as_deref()
            );
        }
    }
    // The TRF back, with the boards' results.
    assert_eq!(
        get(&r.url("/api/tournaments/1/trf")).status,
        401,
        "the TRF is the arbiter's"
    );
    let back = request("GET", &r.url("/api/tournaments/1/trf"), &[AUTH], None);
    assert_eq!(back.status, 200, "{}", back.text());
    let out = emu.dir.join("back.trf");
    std::fs::write(&out, &back.body).expect("write");
    let again = read_trf(&back.body).expect("relay's TRF reads");
    for g in &done {
        let w = g["white"]["start_rank"].as_u64().expect("rank") as u32;
        let b = g["black"]["start_rank"].as_u64().expect("rank") as u32;
        let want = match g["result"].as_str() {
            Some("1-0") => '1',
            Some("0-1") => '0',
            _ => '=',
        };
        match again.player(w).expect("white").cells[0] {
            Cell::Game {
                opponent,
                outcome: Some(o),
                ..
            } => {
                assert_eq!((opponent, o.code()), (b, want), "board {}", g["board_no"]);
            }
            ref c => panic!("board {}: {c:?}", g["board_no"]),
        }
    }
    if !available() {
        return;
    }
    let read = referee("read", &out);
    let points: f64 = read["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| p["points"].as_f64().unwrap_or(0.0))
        .sum();
    assert_eq!(points, 3.0, "three games give three points in all");
    // A pairing program reads it and pairs round 2, never the same two players again.
    let paired = referee("pair", &out);
    assert_eq!(paired["round"], 2);
    let pairs = paired["pairings"].as_array().expect("pairings");
    assert_eq!(pairs.len(), 3, "{paired}");
    for p in pairs {
        let (a, b) = (
            p["white"].as_u64().expect("w") as u32,
            p["black"].as_u64().expect("b") as u32,
        );
        let met = done.iter().any(|g| {
            let (w, bl) = (
                g["white"]["start_rank"].as_u64(),
                g["black"]["start_rank"].as_u64(),
            );
            (w, bl) == (Some(a.into()), Some(b.into()))
                || (w, bl) == (Some(b.into()), Some(a.into()))
        });
        assert!(!met, "round 2 pairs {a} and {b} again");
    }
    println!("round 2 as the pairing program pairs it: {pairs:?}");
}
