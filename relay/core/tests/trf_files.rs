//! Every pairing program's file in `shared/data/pairings/` read by relay and by an outside
//! reader (caissify-pairings, see `referees/trf_caissify.py`): the same players, the same
//! pairings with colours, the same results, the same byes and points. Then relay's TRF of each
//! file is read by that reader again and must say the same. Runs when `python3` with
//! `caissify_pairings` is there; otherwise prints a notice and skips, unless
//! `RELAY_REQUIRE_ALL=1` (as in CI), which makes that a failure.

#[path = "referees/mod.rs"]
mod referees;

use referees::{FILES, available, data, file, referee};
use relay_core::trf::{Cell, Colour, Trf, plan_rounds, read_trf, total, write_trf};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// A cell as the referee writes it: (opponent or none, colour, result letter).
fn theirs(c: Option<&Value>) -> Option<(Option<u64>, String, String)> {
    let c = c?;
    Some((
        c["opponent"].as_u64(),
        c["color"].as_str().unwrap_or("").to_string(),
        c["result"].as_str().unwrap_or("").to_string(),
    ))
}

/// Checks relay's reading of `t` against the referee's reading of `file`; returns what was
/// compared (players, games, byes).
fn compare(t: &Trf, file: &Path) -> (usize, usize, usize) {
    let r = referee("read", file);
    let players = r["players"].as_array().expect("players");
    assert_eq!(
        players.len(),
        t.players.len(),
        "{}: players",
        file.display()
    );
    let (mut games, mut byes) = (0, 0);
    for their in players {
        let rank = their["start_rank"].as_u64().expect("test data") as u32;
        let p = t
            .player(rank)
            .unwrap_or_else(|| panic!("player {rank} missing"));
        let at = format!("{} player {rank}", file.display());
        assert_eq!(their["name"].as_str(), Some(p.name.as_str()), "{at}: name");
        assert_eq!(
            their["rating"].as_u64(),
            p.rating.map(u64::from),
            "{at}: rating"
        );
        assert_eq!(
            their["federation"].as_str(),
            p.federation.as_deref(),
            "{at}: federation"
        );
        assert_eq!(their["fide_id"].as_u64(), p.fide_id, "{at}: FIDE id");
        assert_eq!(
            their["points"].as_f64(),
            Some(p.points.map_or(0.0, |v| v.as_f64())),
            "{at}: points"
        );
        // Points the cells add up to: what the column says (the standard scoring).
        let consistent = p.points.is_none_or(|v| v == total(&p.cells));
        for (i, cell) in p.cells.iter().enumerate() {
            let th = theirs(their["results"].get((i + 1).to_string()));
            let at = format!("{at} round {}", i + 1);
            match (cell, th) {
                (
                    Cell::Game {
                        opponent,
                        colour,
                        outcome,
                    },
                    Some((Some(o), c, res)),
                ) => {
                    assert_eq!(u64::from(*opponent), o, "{at}: opponent");
                    let col = match colour {
                        Colour::White => "w",
                        Colour::Black => "b",
                        Colour::Neither => "-",
                    };
                    assert_eq!(col, c, "{at}: colour");
                    assert_eq!(
                        outcome.map(|o| o.code().to_string()).unwrap_or_default(),
                        res.to_uppercase(),
                        "{at}: result"
                    );
                    games += 1;
                }
                (Cell::Bye { code, .. }, Some((None, _, res)))
                    if res.to_uppercase() == code.code().to_string() =>
                {
                    byes += 1
                }
                // A blank bye that the points column says scored: the reader keeps it blank
                // (or `-`); relay counts it as the bye it was, and the points add up.
                (Cell::Bye { code, .. }, None | Some((None, _, _)))
                    if matches!(code.code(), 'H' | 'F') && consistent =>
                {
                    byes += 1
                }
                (Cell::Blank, None) => {}
                // "   -    ": nobody, no colour, no result: blank to relay, "-" to the reader.
                (Cell::Blank, Some((None, _, res))) if res == "-" => {}
                (ours, th) => panic!("{at}: relay reads {ours:?}, the referee {th:?}"),
            }
        }
        // The referee has nothing in rounds relay does not have.
        for k in their["results"].as_object().expect("test data").keys() {
            let k: usize = k.parse().expect("test data");
            assert!(
                k <= p.cells.len() || p.cells.is_empty(),
                "{at}: round {k} only the referee has"
            );
        }
    }
    (t.players.len(), games, byes)
}

#[test]
fn every_file_reads_as_the_referee_reads_it() {
    if data(FILES[0]).is_none() || !available() {
        return;
    }
    for name in FILES {
        let path = file(name);
        let t = read_trf(&std::fs::read(&path).expect("test data"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (players, games, byes) = compare(&t, &path);
        println!("{name}: {players} players, {games} game cells, {byes} bye cells agree");
        // The rounds' boards are the games of the cells, each once, with the colours of the
        // cells; the byes are the players without one.
        let r = referee("read", &path);
        for plan in plan_rounds(&t) {
            let mut pairs_theirs = BTreeSet::new();
            for p in r["players"].as_array().expect("test data") {
                let rank = p["start_rank"].as_u64().expect("test data");
                if let Some((Some(o), c, _)) = theirs(p["results"].get(plan.number.to_string())) {
                    match c.as_str() {
                        "w" => pairs_theirs.insert((rank, o)),
                        "b" => pairs_theirs.insert((o, rank)),
                        _ => pairs_theirs.insert((rank.min(o), rank.max(o))),
                    };
                }
            }
            let ours: BTreeSet<(u64, u64)> = plan
                .boards
                .iter()
                .map(|b| (u64::from(b.white), u64::from(b.black)))
                .collect();
            assert_eq!(ours, pairs_theirs, "{name} round {}: pairings", plan.number);
            let numbers: BTreeSet<u32> = plan.boards.iter().map(|b| b.board_no).collect();
            assert_eq!(
                numbers.len(),
                plan.boards.len(),
                "{name} round {}: board numbers once each",
                plan.number
            );
            let on_boards: BTreeSet<u32> = plan
                .boards
                .iter()
                .flat_map(|b| [b.white, b.black])
                .collect();
            assert!(
                plan.byes.iter().all(|(r, _, _)| !on_boards.contains(r)),
                "{name}: a bye on a board"
            );
        }
        // relay's TRF of the file says the same to the referee.
        let dir = std::env::temp_dir().join(format!("relay-trf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("test data");
        let again = dir.join(name);
        std::fs::write(&again, write_trf(&t)).expect("test data");
        let back = read_trf(&std::fs::read(&again).expect("test data")).expect("test data");
        compare(&back, &again);
    }
}

#[test]
fn titles_and_rosters_as_the_files_write_them() {
    if data(FILES[0]).is_none() {
        return;
    }
    let read = |n: &str| read_trf(&std::fs::read(file(n)).expect("test data")).expect("test data");
    let fide = read("fide_example1_karl_mala_2005.trf");
    // Old single letters: "g" is GM, "f" FM; "wf" WFM.
    assert_eq!(
        fide.player(1).expect("test data").title.as_deref(),
        Some("GM")
    );
    assert_eq!(
        fide.player(13).expect("test data").title.as_deref(),
        Some("FM")
    );
    let icu = read("icu_bunratty_masters_2011.tab");
    assert_eq!(
        icu.player(1).expect("test data").title.as_deref(),
        Some("GM")
    );
    assert_eq!(icu.tournament.round_dates[0].as_deref(), Some("2011-02-25"));
    let vega = read("vega_sample_tournament.trfx");
    assert_eq!(
        vega.player(1).expect("test data").title.as_deref(),
        Some("CM")
    );
    assert_eq!(vega.tournament.rounds_planned, Some(5));
    let team = read("grandmommys_cup_trf26_team.trf");
    assert_eq!(team.teams.len(), 50);
    let india = &team.teams[0];
    assert_eq!((india.number, india.name.as_str()), (1, "India"));
    assert_eq!(india.players, vec![1, 5, 15, 28, 44]);
    let plans = plan_rounds(&team);
    // Four boards a match: match m has boards 4m-3..=4m, all of one pair of teams.
    let team_of = team.team_of();
    for plan in &plans {
        for b in &plan.boards {
            let m = b.match_no.expect("a team round's board is in a match");
            assert_eq!((b.board_no - 1) / 4 + 1, m);
            let mt = &plan.matches[m as usize - 1];
            let teams = BTreeSet::from([team_of[&b.white].number, team_of[&b.black].number]);
            assert_eq!(
                teams,
                BTreeSet::from([mt.first, mt.second]),
                "round {} board {}",
                plan.number,
                b.board_no
            );
        }
    }
    let lichess = read("lichess_swiss_2020_13p.trf");
    assert_eq!(lichess.tournament.start_date.as_deref(), Some("2020-05-29"));
}
