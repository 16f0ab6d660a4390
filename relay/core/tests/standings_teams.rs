//! Team standings (C.07 Articles 11–13) checked two ways on the TRF-2026 team file of
//! `shared/data/pairings/` (50 teams, 14 rounds, 4 boards, 202 `EDET/P,EMGSB/C1/P,
//! BH:MP/C1/P,MPvGP`):
//! - against an outside referee, tiebreak-core 1.2.0 (`referees/tiebreak_core_team.py`),
//!   given the matches relay made of the file: every team's value of every team code the
//!   library has, and the order of the teams under several code lists;
//! - against the file's own `310` totals, which count the team byes and forfeited matches
//!   of records relay's reader does not keep (240, 320, 330): relay's totals plus exactly
//!   those records make the file's.
//!
//! The referee runs when `python3` with `tiebreak_core` is there; otherwise a notice and a
//! skip, unless `RELAY_REQUIRE_ALL=1` (as in CI), which makes that a failure. The file itself
//! follows the shared data's rule (`referees::data`).

#[path = "referees/mod.rs"]
mod referees;

use relay_core::standings::{
    Code, Edition, Scoring, Settings, Standings, TeamMatchKind, TeamScoring, standings,
};
use relay_core::trf::{Trf, read_trf};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const FILE: &str = "grandmommys_cup_trf26_team.trf";

/// Team codes whose every value is compared with the library's (it has no `MP`/`GP` codes:
/// those are compared with its totals).
const CODES: &[&str] = &[
    "EDET/P",
    "EMGSB/C1/P",
    "BH:MP/C1/P",
    "MPvGP",
    "EMMSB",
    "EMGSB",
    "EGMSB",
    "EGGSB",
    "EMMSB/C1",
    "EMGSB/C1",
    "EMGSB/C2",
    "EGGSB/C1",
    "EGMSB/C2/P",
    "SB:MP",
    "SB:GP",
    "BH:MP",
    "BH:GP",
    "BH:MP/C1",
    "BH:MP/C2",
    "BH:MP/M1",
    "BH:GP/C1",
    "BH:GP/M2",
    "FB:MP",
    "FB:GP",
    "AOB:MP",
    "AOB:GP",
    "WIN:MP",
    "WIN:GP",
    "WON:MP",
    "WON:GP",
    "PS:MP",
    "PS:GP",
    "PS:MP/C1",
    "KS:MP",
    "KS:GP",
    "KS:MP/L-2",
    "BC",
    "TBR",
    "BBE",
    "SSSC",
    "SSSC/K5",
    "SSSC/F",
    "SSSC/P",
];

/// Code lists whose team order is compared with the library's (the file's own first).
const ORDERS: &[&[&str]] = &[
    &["EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP"],
    &["EDE", "MPvGP", "BH:MP"],
    &["EDEBT", "SSSC"],
    &["EDEBB", "EGGSB/C1"],
    &["EDEB", "BC"],
    &["TBR", "BBE"],
    &["SSSC/C1", "KS:MP"],
    &["MPvGP", "EMMSB", "PS:MP"],
    &["BH:GP/M1", "AOB:MP", "WIN:MP"],
];

/// Whether the library can run here (see the module text).
fn library() -> bool {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import tiebreak_core; assert tiebreak_core.__version__ == '1.2.0'",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!(
                "python3 with tiebreak-core 1.2.0 is required (RELAY_REQUIRE_ALL=1): pip install tiebreak-core==1.2.0"
            );
        }
        println!(
            "skipping: python3 with tiebreak_core 1.2.0 not found (pip install tiebreak-core==1.2.0)"
        );
    }
    ok
}

fn referee(input: &Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/referees/tiebreak_core_team.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write to the referee");
    let out = child.wait_with_output().expect("the referee's answer");
    assert!(
        out.status.success(),
        "the referee failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the referee's JSON")
}

fn the_file() -> Option<(Trf, String)> {
    let bytes = referees::bytes_of(FILE)?;
    let trf = read_trf(&bytes).expect("the team file reads");
    Some((trf, relay_core::trf::decode(&bytes)))
}

fn settings(trf: &Trf, codes: &[&str], edition: Edition) -> Settings {
    Settings {
        scoring: Scoring::from_trf(&trf.tournament),
        team_scoring: TeamScoring::from_trf(&trf.tournament),
        tiebreaks: codes
            .iter()
            .map(|c| Code::parse(c).unwrap_or_else(|e| panic!("{c}: {e}")))
            .collect(),
        edition,
        round_robin: false,
        round: None,
    }
}

/// Relay's matches as the library takes them.
fn referee_input(s: &Standings, ts: &TeamScoring, codes: &[&str], rank_by: &[&str]) -> Value {
    let width = s
        .teams
        .iter()
        .flat_map(|t| t.matches.iter().map(|m| m.boards.len()))
        .max()
        .unwrap_or(1);
    let teams: Vec<Value> = s
        .teams
        .iter()
        .map(|t| {
            let mut boards = vec![0.0; width];
            for m in &t.matches {
                for (b, v) in boards.iter_mut().zip(&m.boards) {
                    *b += v;
                }
            }
            let matches: Vec<Value> = t
                .matches
                .iter()
                .map(|m| {
                    let kind = match m.kind {
                        TeamMatchKind::Played => "played",
                        TeamMatchKind::Forfeit if m.game_points > m.game_points_against => {
                            "forfeit_win"
                        }
                        TeamMatchKind::Forfeit => "forfeit_loss",
                        TeamMatchKind::NoMatch => "unplayed",
                    };
                    json!({
                        "round": m.round,
                        "opponent": m.opponent.map_or(-1, i64::from),
                        "mp": m.match_points,
                        "gp": m.game_points,
                        "kind": kind,
                    })
                })
                .collect();
            json!({
                "id": t.number,
                "mp": t.match_points,
                "gp": t.game_points,
                "board_points": boards,
                "matches": matches,
            })
        })
        .collect();
    json!({
        "rounds": s.round,
        "mp_win": ts.win,
        "mp_draw": ts.draw,
        "max_gp_per_match": width,
        "codes": codes,
        "rank_by": rank_by,
        "teams": teams,
    })
}

/// The library refuses `SB:MP`/`SB:GP` as descriptors but reads them itself, by C.07 13's
/// reuse of Article 8 for teams, as `EMMSB`/`EGGSB` (its `table2_base`); relay reads them so.
fn alias(code: &str) -> &str {
    match code {
        "SB:MP" => "EMMSB",
        "SB:GP" => "EGGSB",
        other => other,
    }
}

/// Matches won by forfeit with the whole of `code`'s score: the library counts them for
/// `WON`, which C.07 (7.2, reused for teams by Article 13) keeps for results over the board.
fn forfeit_wins(s: &Standings, team: u32, code: &str) -> f64 {
    let Some(t) = s.teams.iter().find(|t| t.number == team) else {
        return 0.0;
    };
    t.matches
        .iter()
        .filter(|m| m.kind == TeamMatchKind::Forfeit)
        .filter(|m| {
            if code.starts_with("WON:MP") {
                m.match_points == 2.0
            } else {
                m.game_points == m.boards.len() as f64
            }
        })
        .count() as f64
}

#[test]
fn team_values_and_order_agree_with_tiebreak_core() {
    let Some((trf, _)) = the_file() else { return };
    if !library() {
        return;
    }
    assert_eq!(trf.teams.len(), 50);
    assert_eq!(
        trf.tournament.tiebreaks.as_deref(),
        Some("EDET/P,EMGSB/C1/P,BH:MP/C1/P,MPvGP")
    );
    let ts = TeamScoring::from_trf(&trf.tournament);
    assert_eq!((ts.win, ts.draw, ts.loss), (2.0, 1.0, 0.0));
    let mut per_code = Vec::new();
    for edition in [Edition::Fide2026, Edition::Fide2024] {
        let s = standings(&trf, &settings(&trf, CODES, edition));
        assert_eq!(s.round, 14);
        assert_eq!(s.teams.len(), 50);
        let theirs = referee(&referee_input(&s, &ts, CODES, &[]));
        let mut wrong = Vec::new();
        for t in &s.teams {
            let v = &theirs["values"][t.number.to_string()];
            for (i, code) in CODES.iter().enumerate() {
                let mine = t.values[i];
                let their = v[alias(code)].as_f64();
                let their = match (code.starts_with("WON:"), their) {
                    (true, Some(x)) => Some(x - forfeit_wins(&s, t.number, code)),
                    _ => their,
                };
                let same = match (mine, their) {
                    (Some(a), Some(b)) => (a - b).abs() < 1e-6,
                    (None, None) => true,
                    _ => false,
                };
                if !same {
                    wrong.push(format!(
                        "{edition:?} team {} {code}: relay {mine:?}, tiebreak-core {their:?}",
                        t.number
                    ));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{} values differ:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
        if edition == Edition::Fide2026 {
            for code in CODES {
                let with_value = s
                    .teams
                    .iter()
                    .filter(|t| theirs["values"][t.number.to_string()][alias(code)].is_number())
                    .count();
                per_code.push(format!("{code}: {with_value}"));
            }
        }
        for order in ORDERS {
            let s = standings(&trf, &settings(&trf, order, edition));
            let theirs = referee(&referee_input(&s, &ts, &[], order));
            let mine: Vec<u64> = s.teams.iter().map(|t| u64::from(t.number)).collect();
            let their: Vec<u64> = theirs["order"]
                .as_array()
                .expect("order")
                .iter()
                .filter_map(Value::as_u64)
                .collect();
            assert_eq!(mine, their, "{edition:?} order by MP, {order:?}");
            let ranks: Vec<u32> = s.teams.iter().map(|t| t.rank).collect();
            assert_eq!(ranks, (1..=50).collect::<Vec<u32>>());
        }
    }
    println!(
        "tiebreak-core agrees on 50 teams' values of: {}",
        per_code.join(", ")
    );
}

/// Columns `from..=to` (from 1) of a line, trimmed.
fn cols(line: &str, from: usize, to: usize) -> &str {
    line.get(from - 1..to.min(line.len())).unwrap_or("").trim()
}

#[test]
fn totals_are_the_files_own_less_the_team_records_not_read() {
    let Some((trf, text)) = the_file() else {
        return;
    };
    let s = standings(
        &trf,
        &settings(
            &trf,
            &["EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP"],
            Edition::Fide2026,
        ),
    );
    let lines: Vec<String> = text.lines().map(|l| l.replace('\t', " ")).collect();
    // What the file's 310 lines say: (match points, game points, rank).
    let mut file: BTreeMap<u32, (f64, f64, u32)> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.starts_with("310 ")) {
        let n: u32 = cols(l, 5, 7).parse().expect("team number");
        let mp: f64 = cols(l, 55, 60).parse().expect("match points");
        let gp: f64 = cols(l, 62, 67).parse().expect("game points");
        let rank: u32 = cols(l, 69, 71).parse().expect("rank");
        file.insert(n, (mp, gp, rank));
    }
    assert_eq!(file.len(), 50);
    // The team records relay's reader leaves out: a full-point bye is a won match 4–0, a
    // half-point bye a drawn one 2–2, the pairing-allocated bye what 320 gives. A forfeited
    // match (330) relay already has: the winners' `0000 - +` cells.
    let mut extra: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    let mut records = 0;
    for l in &lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first().copied() {
            Some("240") => {
                let (mp, gp) = match f.get(1).copied() {
                    Some("F") => (2.0, 4.0),
                    Some("H") => (1.0, 2.0),
                    _ => (0.0, 0.0),
                };
                for team in f.iter().skip(3) {
                    let e = extra.entry(team.parse().expect("team")).or_default();
                    e.0 += mp;
                    e.1 += gp;
                    records += 1;
                }
            }
            Some("320") => {
                let mp: f64 = cols(l, 5, 8).parse().expect("PAB match points");
                let gp: f64 = cols(l, 10, 13).parse().expect("PAB game points");
                for r in 0..14 {
                    let at = 15 + 4 * r;
                    let team = cols(l, at, at + 2);
                    if !team.is_empty() && team != "000" {
                        let e = extra.entry(team.parse().expect("team")).or_default();
                        e.0 += mp;
                        e.1 += gp;
                        records += 1;
                    }
                }
            }
            _ => {}
        }
    }
    let mut same = 0;
    for t in &s.teams {
        let (mp, gp, _) = file[&t.number];
        let (xm, xg) = extra.get(&t.number).copied().unwrap_or_default();
        assert_eq!(
            (t.match_points + xm, t.game_points + xg),
            (mp, gp),
            "team {}: relay's totals plus its byes are not the file's",
            t.number
        );
        if (xm, xg) == (0.0, 0.0) {
            same += 1;
        }
    }
    println!(
        "310 totals: relay's equal the file's for {same} teams; the other {} differ by exactly \
         their {records} team byes (240, 320), which relay's reader does not keep; the file's \
         ranks count those byes, so relay's ranks are not compared with them",
        50 - same
    );
}

/// A four-board match where one team left two boards empty: the other team's forfeit wins
/// against nobody are game points of its match (2½, not the ½ of the two boards played).
#[test]
fn forfeits_against_nobody_are_game_points_of_the_match() {
    let mut text = String::from("012 Forfeits\n");
    // Team A: 1–4; team B: 5–8. Round 1: A 1½ – 2½ B (boards 1 and 2 played; A left boards
    // 3 and 4 empty, B's players there won by forfeit against nobody).
    let cells = [
        (1, "   5 w 1"),
        (2, "   6 b ="),
        (3, "0000 - -"),
        (4, "0000 - -"),
        (5, "   1 b 0"),
        (6, "   2 w ="),
        (7, "0000 - +"),
        (8, "0000 - +"),
    ];
    for (n, cell) in cells {
        text.push_str(&player_line(n, cell));
    }
    text.push_str(&team_line("A", &[1, 2, 3, 4]));
    text.push_str(&team_line("B", &[5, 6, 7, 8]));
    let trf = read_trf(text.as_bytes()).expect("the test file reads");
    let s = standings(&trf, &settings(&trf, &["EMGSB"], Edition::Fide2026));
    let b = s.teams.iter().find(|t| t.number == 2).expect("team B");
    assert_eq!((b.rank, b.match_points, b.game_points), (1, 2.0, 2.5));
    assert_eq!(b.matches[0].opponent, Some(1));
    assert_eq!(b.matches[0].game_points_against, 1.5);
    assert_eq!(b.matches[0].boards, vec![0.0, 0.5, 1.0, 1.0]);
    let a = s.teams.iter().find(|t| t.number == 1).expect("team A");
    assert_eq!((a.match_points, a.game_points), (0.0, 1.5));
    assert_eq!(a.matches[0].kind, TeamMatchKind::Played);
    // EMGSB: the opponent's match points times the game points against it.
    assert_eq!(b.values, vec![Some(0.0)]);
    assert_eq!(a.values, vec![Some(2.0 * 1.5)]);
}

/// A `001` line: start rank in columns 5–8, name from 15, one cell from column 92.
fn player_line(n: u32, cell: &str) -> String {
    let mut l = format!("001 {n:>4}      Player {n}");
    l = format!("{l:<91}{cell}\n");
    l
}

/// A `013` line: the name in columns 5–36, start ranks from column 37, five columns each.
fn team_line(name: &str, players: &[u32]) -> String {
    let mut l = format!("013 {name:<32}");
    for p in players {
        l.push_str(&format!("{p:>4} "));
    }
    l.push('\n');
    l
}
