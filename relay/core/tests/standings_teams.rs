//! Team standings (C.07 Articles 11–13) checked two ways on the TRF-2026 team file of
//! `shared/data/pairings/` (50 teams, 14 rounds, 4 boards, 202 `EDET/P,EMGSB/C1/P,
//! BH:MP/C1/P,MPvGP`, 362 2/1/0):
//! - against an outside referee, tiebreak-core 1.2.0 (`referees/tiebreak_core_team.py`),
//!   given the matches relay made of the file: every team's value of every team code the
//!   library has, and the order of the teams under several code lists, under both editions
//!   (the library has no team edition: its team rules are the 2026 text); first from the
//!   cells alone (as relay reads the file), then with the file's team records beside them
//!   (`240`/`320` byes, `330` forfeited matches, which relay's reader does not keep; read
//!   here);
//! - against the file's own `310` totals: relay's match and game points from the cells are
//!   the file's less exactly its team byes, and with the records all of them. Its `310`
//!   ranks are not what its own 202 gives (shown), so ranks are compared with the library.
//!
//! Readings where the two differ, checked narrowly: the library counts a forfeited match as
//! played with or without `/P` (C.07 only with it), and a match won by forfeit for `WON`
//! (C.07 7.2: won over the board); see `differences` and `forfeit_wins`.
//!
//! The referee runs when `python3` with `tiebreak_core` is there; otherwise a notice and a
//! skip, unless `RELAY_REQUIRE_ALL=1` (as in CI), which makes that a failure. The file itself
//! follows the shared data's rule (`referees::data`).

#[path = "referees/mod.rs"]
mod referees;

use relay_core::standings::{
    Code, Edition, Scoring, Settings, TeamByeKind, TeamMatchKind, TeamRoundRecord, TeamScoring,
    TeamStanding, standings, team_standings,
};
use relay_core::trf::{Trf, read_trf};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const FILE: &str = "grandmommys_cup_trf26_team.trf";

/// Team codes whose every value is compared with the library's (it has no `MP`/`GP` codes:
/// the totals are compared with the file's own, below).
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

/// A code without `/P` whose value a forfeited match with a named opponent changes.
fn sensitive(code: &str) -> bool {
    let base = code.split(['/', ':']).next().unwrap_or("");
    !code.contains("/P")
        && matches!(
            base,
            "EMMSB"
                | "EMGSB"
                | "EGMSB"
                | "EGGSB"
                | "SB"
                | "BH"
                | "FB"
                | "AOB"
                | "KS"
                | "SSSC"
                | "EDE"
                | "EDET"
                | "EDEB"
                | "EDEBT"
                | "EDEBB"
        )
}

/// The codes of [`CODES`] without `/P` that take it, with it: for the forfeited matches (see
/// `differences`).
const CODES_PLAYED: &[&str] = &[
    "EMMSB/P",
    "EMGSB/P",
    "EGMSB/P",
    "EGGSB/P",
    "EMMSB/C1/P",
    "EMGSB/C1/P",
    "EMGSB/C2/P",
    "EGGSB/C1/P",
    "BH:MP/P",
    "BH:GP/P",
    "BH:MP/C1/P",
    "BH:MP/C2/P",
    "BH:MP/M1/P",
    "BH:GP/C1/P",
    "BH:GP/M2/P",
    "FB:MP/P",
    "FB:GP/P",
    "SSSC/P",
    "SSSC/K5/P",
    "SSSC/F/P",
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
fn referee_input(
    teams: &[TeamStanding],
    rounds: u32,
    ts: &TeamScoring,
    codes: &[&str],
    rank_by: &[&str],
) -> Value {
    let width = teams
        .iter()
        .flat_map(|t| t.matches.iter().map(|m| m.boards.len()))
        .max()
        .unwrap_or(1);
    let teams: Vec<Value> = teams
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
                        // The library's kind for a round without an opponent that scored.
                        TeamMatchKind::Bye if m.game_points > 0.0 => "pairing_bye",
                        TeamMatchKind::Bye | TeamMatchKind::NoMatch => "unplayed",
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
        "rounds": rounds,
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
fn forfeit_wins(teams: &[TeamStanding], team: u32, code: &str) -> f64 {
    let Some(t) = teams.iter().find(|t| t.number == team) else {
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

/// Every value of [`CODES`] relay and the library give for `teams`; what differs.
///
/// One reading differs, where a match was forfeited between two teams the records name (the
/// cells alone never name the opponent of a forfeited match): C.07 counts a forfeit as
/// played only under `/P` (the modifier Article 14 gives BH, SB and the team codes for that),
/// and the library counts it always, `/P` or not. For a code without `/P` and a team with such
/// a match (for `AOB`, also one whose opponent had one) the library's value is compared with
/// relay's of the same code with `/P` (`played`), and left out where relay takes no `/P` for
/// it (the count comes back).
fn differences(
    teams: &[TeamStanding],
    played: &[TeamStanding],
    theirs: &Value,
    label: &str,
) -> (Vec<String>, usize) {
    let forfeited = |n: u32| {
        teams.iter().any(|t| {
            t.number == n
                && t.matches
                    .iter()
                    .any(|m| m.kind == TeamMatchKind::Forfeit && m.opponent.is_some())
        })
    };
    let mut wrong = Vec::new();
    let mut left_out = 0;
    for t in teams {
        let v = &theirs["values"][t.number.to_string()];
        let opponent_forfeited = t.matches.iter().filter_map(|m| m.opponent).any(&forfeited);
        for (i, code) in CODES.iter().enumerate() {
            let mut mine = t.values[i];
            let touched = forfeited(t.number) || (code.starts_with("AOB") && opponent_forfeited);
            if touched && sensitive(code) {
                let with_p = format!("{}/P", alias(code));
                let at = CODES_PLAYED.iter().position(|c| *c == with_p);
                let row = played.iter().find(|p| p.number == t.number);
                match (at, row) {
                    (Some(at), Some(row)) => mine = row.values[at],
                    _ => {
                        left_out += 1;
                        continue;
                    }
                }
            }
            let their = v[alias(code)].as_f64();
            let their = match (code.starts_with("WON:"), their) {
                (true, Some(x)) => Some(x - forfeit_wins(teams, t.number, code)),
                _ => their,
            };
            let same = match (mine, their) {
                (Some(a), Some(b)) => (a - b).abs() < 1e-6,
                (None, None) => true,
                _ => false,
            };
            if !same {
                wrong.push(format!(
                    "{label} team {} {code}: relay {mine:?}, tiebreak-core {their:?}",
                    t.number
                ));
            }
        }
    }
    (wrong, left_out)
}

#[test]
fn team_values_and_order_agree_with_tiebreak_core() {
    let Some((trf, text)) = the_file() else {
        return;
    };
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
    let records = team_records(&text);
    let mut per_code = Vec::new();
    for edition in [Edition::Fide2026, Edition::Fide2024] {
        // The file as relay reads it, then with its team records beside it.
        for (label, records) in [("cells", &[][..]), ("records", &records[..])] {
            let label = format!("{edition:?}, {label}:");
            let s = standings(&trf, &settings(&trf, CODES, edition));
            assert_eq!((s.round, s.teams.len()), (14, 50));
            let teams = team_standings(&trf, &settings(&trf, CODES, edition), records);
            // `standings` reads the file's team records itself (relay's reader keeps them).
            if !records.is_empty() {
                assert_eq!(teams, s.teams);
            }
            let theirs = referee(&referee_input(&teams, 14, &ts, CODES, &[]));
            let played = team_standings(&trf, &settings(&trf, CODES_PLAYED, edition), records);
            let (wrong, left_out) = differences(&teams, &played, &theirs, &label);
            if !records.is_empty() {
                println!("{label} {left_out} values left out (forfeited matches, no /P form)");
            }
            assert!(
                wrong.is_empty(),
                "{} values differ:\n{}",
                wrong.len(),
                wrong.join("\n")
            );
            if edition == Edition::Fide2026 && records.is_empty() {
                for code in CODES {
                    let with_value = teams
                        .iter()
                        .filter(|t| theirs["values"][t.number.to_string()][alias(code)].is_number())
                        .count();
                    per_code.push(format!("{code}: {with_value}"));
                }
            }
            for order in ORDERS {
                // With forfeited matches named, relay orders by the `/P` form (see
                // `differences`); a list with a code that has none is left out.
                let mine: Vec<String> = order
                    .iter()
                    .map(|c| {
                        if records.is_empty() || !sensitive(c) {
                            c.to_string()
                        } else {
                            format!("{c}/P")
                        }
                    })
                    .collect();
                if mine
                    .iter()
                    .any(|c| c.starts_with("AOB") || c.starts_with("KS"))
                {
                    continue;
                }
                let mine: Vec<&str> = mine.iter().map(String::as_str).collect();
                let teams = team_standings(&trf, &settings(&trf, &mine, edition), records);
                let theirs = referee(&referee_input(&teams, 14, &ts, &[], order));
                let mine: Vec<u64> = teams.iter().map(|t| u64::from(t.number)).collect();
                let their: Vec<u64> = theirs["order"]
                    .as_array()
                    .expect("order")
                    .iter()
                    .filter_map(Value::as_u64)
                    .collect();
                assert_eq!(mine, their, "{label} order by MP, {order:?}");
                let ranks: Vec<u32> = teams.iter().map(|t| t.rank).collect();
                assert_eq!(ranks, (1..=50).collect::<Vec<u32>>());
            }
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

/// The file's team records that its cells cannot hold (TRF-2026 `240`, `320`, `330`), which
/// relay's reader does not keep: a full-point bye as a won match 4–0, a half-point bye as a
/// drawn one 2–2, the pairing-allocated bye as 320 gives it, a forfeited match's two teams.
fn team_records(text: &str) -> Vec<TeamRoundRecord> {
    let mut out = Vec::new();
    for l in text.lines().map(|l| l.replace('\t', " ")) {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first().copied() {
            Some("240") => {
                let (kind, mp, gp) = match f.get(1).copied() {
                    Some("F") => (TeamByeKind::Full, 2.0, 4.0),
                    Some("H") => (TeamByeKind::Half, 1.0, 2.0),
                    _ => (TeamByeKind::Zero, 0.0, 0.0),
                };
                let round: u32 = f[2].parse().expect("round");
                for team in &f[3..] {
                    out.push(TeamRoundRecord::Bye {
                        round,
                        team: team.parse().expect("team"),
                        kind,
                        match_points: mp,
                        game_points: gp,
                    });
                }
            }
            Some("320") => {
                let mp: f64 = cols(&l, 5, 8).parse().expect("PAB match points");
                let gp: f64 = cols(&l, 10, 13).parse().expect("PAB game points");
                for r in 0..14u32 {
                    let at = 15 + 4 * r as usize;
                    let team = cols(&l, at, at + 2);
                    if !team.is_empty() && team != "000" {
                        out.push(TeamRoundRecord::Bye {
                            round: r + 1,
                            team: team.parse().expect("team"),
                            kind: TeamByeKind::Pairing,
                            match_points: mp,
                            game_points: gp,
                        });
                    }
                }
            }
            Some("330") => {
                let round: u32 = f[2].parse().expect("round");
                let white: u32 = f[3].parse().expect("team");
                let black: u32 = f[4].parse().expect("team");
                let winner = match f[1] {
                    "+-" => Some(white),
                    "-+" => Some(black),
                    _ => None,
                };
                out.push(TeamRoundRecord::ForfeitedMatch {
                    round,
                    white,
                    black,
                    winner,
                });
            }
            _ => {}
        }
    }
    out
}

/// What the file's 310 lines say: (match points, game points, rank) by team.
fn file_totals(text: &str) -> BTreeMap<u32, (f64, f64, u32)> {
    let mut file = BTreeMap::new();
    for l in text
        .lines()
        .map(|l| l.replace('\t', " "))
        .filter(|l| l.starts_with("310 "))
    {
        let n: u32 = cols(&l, 5, 7).parse().expect("team number");
        let mp: f64 = cols(&l, 55, 60).parse().expect("match points");
        let gp: f64 = cols(&l, 62, 67).parse().expect("game points");
        let rank: u32 = cols(&l, 69, 71).parse().expect("rank");
        file.insert(n, (mp, gp, rank));
    }
    file
}

/// Relay's totals from the cells alone are the file's less its team byes; with the file's team
/// records they are the file's, whether this test reads the records or relay's reader does.
#[test]
fn totals_are_the_files_own_and_its_ranks_not_its_202s() {
    let Some((trf, text)) = the_file() else {
        return;
    };
    let file = file_totals(&text);
    assert_eq!(file.len(), 50);
    let records = team_records(&text);
    let codes = ["EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP"];
    let settings = settings(&trf, &codes, Edition::Fide2026);
    let cells_only = team_standings(&trf, &settings, &[]);
    let with_records = team_standings(&trf, &settings, &records);
    // Relay's own reading of 240/320/330 (`Trf::round_records`) gives the same standings.
    assert_eq!(
        trf.round_records.len(),
        41,
        "the file's 240, 320 and 330 lines"
    );
    let relay_read = standings(&trf, &settings).teams;
    assert_eq!(relay_read, with_records);
    let mut byes: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for r in &records {
        if let TeamRoundRecord::Bye {
            team,
            match_points,
            game_points,
            ..
        } = r
        {
            let e = byes.entry(*team).or_default();
            e.0 += match_points;
            e.1 += game_points;
        }
    }
    for t in &cells_only {
        let (mp, gp, _) = file[&t.number];
        let (bm, bg) = byes.get(&t.number).copied().unwrap_or_default();
        assert_eq!(
            (t.match_points + bm, t.game_points + bg),
            (mp, gp),
            "team {}: relay's totals from the cells plus its byes",
            t.number
        );
    }
    for t in &with_records {
        let (mp, gp, _) = file[&t.number];
        assert_eq!(
            (t.match_points, t.game_points),
            (mp, gp),
            "team {}: relay's totals with the file's team records",
            t.number
        );
    }
    // The file's ranks do not follow from its results under its own 202, so relay's are not
    // compared with them. Its seven teams on 19 match points all met one another, and team 13
    // made 7 match points in those matches, team 18 4: any direct encounter puts 13 ahead;
    // the file ranks 18 fourth and 13 seventh. Teams 44 and 48 (7 match points) never met,
    // and 48 is ahead on the other three codes and on the top board; the file ranks 44 ahead.
    let row = |n: u32| with_records.iter().find(|t| t.number == n).expect("team");
    let group: Vec<u32> = with_records
        .iter()
        .filter(|t| t.match_points == 19.0)
        .map(|t| t.number)
        .collect();
    assert_eq!(group.len(), 7);
    let among = |n: u32| -> f64 {
        row(n)
            .matches
            .iter()
            .filter(|m| m.opponent.is_some_and(|o| group.contains(&o)))
            .map(|m| m.match_points)
            .sum()
    };
    assert_eq!((among(13), among(18)), (7.0, 4.0));
    assert_eq!((file[&18].2, file[&13].2), (4, 7));
    assert!(row(13).rank < row(18).rank);
    let (a, b) = (row(44), row(48));
    assert!(file[&44].2 < file[&48].2 && a.match_points == b.match_points);
    assert!(a.matches.iter().all(|m| m.opponent != Some(48)));
    assert!((1..4).all(|i| a.values[i] < b.values[i]), "{a:?}\n{b:?}");
    assert!(a.rank > b.rank);
    println!(
        "310: relay's match and game points from the cells are the file's for {} teams, the \
         rest less exactly their team byes; with the file's 240/320/330 records all 50 teams' \
         points are the file's; its ranks are not what its 202 gives (13/18, 44/48)",
        50 - byes.len()
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

/// Every board of a match lost by both players by forfeit: no game points, and the match
/// lost by both teams (not drawn 0–0).
#[test]
fn a_match_of_double_forfeits_is_lost_by_both() {
    let mut text = String::from("012 Double forfeits\n");
    for (n, cell) in [
        (1, "   3 - -"),
        (2, "   4 - -"),
        (3, "   1 - -"),
        (4, "   2 - -"),
    ] {
        text.push_str(&player_line(n, cell));
    }
    text.push_str(&team_line("A", &[1, 2]));
    text.push_str(&team_line("B", &[3, 4]));
    let trf = read_trf(text.as_bytes()).expect("the test file reads");
    let s = standings(
        &trf,
        &settings(&trf, &["BH:MP", "BH:MP/P"], Edition::Fide2026),
    );
    for t in &s.teams {
        assert_eq!((t.match_points, t.game_points), (0.0, 0.0));
        let m = &t.matches[0];
        assert_eq!(
            (m.kind, m.opponent),
            (TeamMatchKind::Forfeit, Some(3 - t.number))
        );
        // Buchholz: the forfeited match counts only under /P (both score 0 here anyway).
        assert_eq!(t.values, vec![Some(0.0), Some(0.0)]);
    }
}
