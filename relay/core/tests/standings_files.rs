//! Relay's FIDE tie-breaks on every individual pairing program's file of
//! `shared/data/pairings/`, checked against an outside computation: tiebreak-core 1.2.0
//! (`referees/tiebreak_core_individual.py`), fed relay's reading of each file (cells, ratings,
//! scoring) and deciding on its own what each cell is. Every player's value of every code the
//! library has must agree within 1e-6, under the 2026 edition (as a Swiss and as a round
//! robin) and the 2024 edition, after the last round and after a middle one; and so must
//! the whole rank order for a few orders. Where the library and relay part on a point C.07
//! decides for relay, that case alone is excused below, saying why.
//!
//! Runs when `python3` with `tiebreak_core` is there; otherwise prints a notice and skips,
//! unless `RELAY_REQUIRE_ALL=1` (as in CI), which makes that a failure.

#[path = "referees/mod.rs"]
mod referees;

use referees::{FILES, data, file};
use relay_core::standings::rating::{self, RatedGame};
use relay_core::standings::{Code, Edition, Scoring, Settings, last_round_with_result, standings};
use relay_core::trf::{ByeCode, Cell, Colour, HalfPoints, Outcome, Trf, read_trf};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The team event is ranked by team codes (another test's business).
const TEAM_FILE: &str = "grandmommys_cup_trf26_team.trf";

/// Every code compared, as 202 writes them.
const CODES: &[&str] = &[
    "BH", "BH/C1", "BH/C2", "BH/M1", "BH/M2", "BH/F", "SB", "SB/C1", "SB/C2", "PS", "PS/C1", "WIN",
    "WON", "BPG", "BWG", "REP", "STD", "KS", "AOB", "AOB/F", "FB", "FB/C1", "FB/C2", "FB/M1",
    "FB/M2", "ARO", "ARO/C1", "ARO/C2", "ARO/M1", "ARO/M2", "TPR", "PTP", "APRO", "APPO", "BH/P",
    "BH/C1/P", "SB/P", "FB/P",
    // Through the library's descriptor machine (2026, files of up to 60 players).
    "BH/C3", "BH/M3", "SB/C3", "PS/C2", "FB/C3", "ARO/C3", "KS/L-1", "KS/L+2",
];

/// Whole orders compared (TPN only in the 2026 edition, which has it).
const ORDERS: &[&[&str]] = &[
    &["BH/C1", "BH", "SB"],
    &["BH/M1", "BH/C2"],
    &["DE", "WIN", "BPG", "BH/C1"],
    &["SB", "KS", "DE", "WON"],
    &["ARO", "TPR", "PS/C1"],
    &["PS", "BWG", "AOB", "FB"],
    &["DE", "STD", "TPN"],
];

fn root() -> std::path::PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").exists())
        .unwrap_or(here)
        .to_path_buf()
}

/// Whether the outside computation can run here (see the module text).
fn available() -> bool {
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

/// Relay's reading of a file, as the referee takes it.
fn request(t: &Trf, s: &Settings, rounds: u32, orders: &[&[&str]]) -> Value {
    let players: Vec<Value> = t
        .players
        .iter()
        .map(|p| {
            let cells: Vec<Value> = p
                .cells
                .iter()
                .map(|c| match *c {
                    Cell::Game {
                        opponent,
                        colour,
                        outcome,
                    } => json!({
                        "opponent": opponent,
                        "colour": match colour { Colour::White => "w", Colour::Black => "b", Colour::Neither => "-" },
                        "result": outcome.map(|o| o.code().to_string()),
                    }),
                    Cell::Bye { code, .. } => json!({ "bye": code.code().to_string() }),
                    Cell::Blank => json!({}),
                })
                .collect();
            json!({ "start_rank": p.start_rank, "rating": p.rating, "cells": cells })
        })
        .collect();
    json!({
        "ruleset": match s.edition { Edition::Fide2026 => "fide-2026", Edition::Fide2024 => "fide-2024" },
        "mode": if s.round_robin { "round_robin" } else { "swiss" },
        "rounds": rounds,
        "scoring": s.scoring,
        "codes": CODES,
        "orders": orders,
        "players": players,
    })
}

fn referee(req: &Value) -> Value {
    let script = root().join("relay/core/tests/referees/tiebreak_core_individual.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    let body = serde_json::to_vec(req).expect("JSON");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&body)
        .expect("write the request");
    let out = child.wait_with_output().expect("the referee's answer");
    assert!(
        out.status.success(),
        "the referee failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the referee's JSON")
}

/// One case where relay and the library part, and C.07 sides with relay: why, or `None`.
fn excused(t: &Trf, s: &Settings, code: &str, start_rank: u32) -> Option<&'static str> {
    let round = s.round.unwrap_or(0) as usize;
    let opponents = || played_opponents(t, start_rank, round);
    match code {
        // PTP is the lowest rating whose expected score reaches the points. The library adds
        // the table's probabilities as binary fractions (0.57 + 0.43 + …) and finds the sum a
        // hair short where, in the table's hundredths, it reaches the points exactly: it
        // answers a rating or more too high. Relay adds hundredths.
        "PTP" => ptp_float_short(&rated(t, start_rank, round)).then_some(
            "the library's float sum of expected scores falls short at the exact answer",
        ),
        // APRO and APPO average the opponents' performances. An opponent who played no rated
        // game has no performance; the library counts it as 0 in the average, relay leaves
        // that opponent out (and, for APPO, the opponents' PTP as above).
        "APRO" => opponents()
            .any(|o| rated(t, o, round).is_empty())
            .then_some("an opponent without a rated game: no performance, not a 0 in the average"),
        "APPO" => opponents()
            .any(|o| {
                let g = rated(t, o, round);
                g.is_empty() || ptp_float_short(&g)
            })
            .then_some(
                "an opponent without a rated game, or with the library's PTP float shortfall",
            ),
        // Standard points compare a round's score with the opponent's in that round. In a round
        // robin (2026) a forfeit is a game; after a double forfeit both scored 0, which is a
        // half point each. The library takes the opponent's score as 1 − one's own (1).
        "STD" if s.round_robin && s.edition == Edition::Fide2026 => t
            .player(start_rank)
            .is_some_and(|p| {
                p.cells
                    .iter()
                    .take(round)
                    .enumerate()
                    .any(|(r, c)| match *c {
                        Cell::Game {
                            opponent,
                            outcome: Some(Outcome::ForfeitLoss),
                            ..
                        } => t.player(opponent).is_some_and(|o| {
                            matches!(
                                o.cells.get(r),
                                Some(Cell::Game {
                                    outcome: Some(Outcome::ForfeitLoss),
                                    ..
                                })
                            )
                        }),
                        _ => false,
                    })
            })
            .then_some("a double forfeit: both scored 0, equal, half a point"),
        _ => None,
    }
}

/// The opponents a player met over the board in the first `round` rounds.
fn played_opponents(t: &Trf, start_rank: u32, round: usize) -> impl Iterator<Item = u32> + '_ {
    t.player(start_rank)
        .into_iter()
        .flat_map(move |p| p.cells.iter().take(round))
        .filter_map(|c| match *c {
            Cell::Game {
                opponent,
                outcome: Some(Outcome::Win | Outcome::Draw | Outcome::Loss),
                ..
            } => Some(opponent),
            _ => None,
        })
}

/// A player's rated games over the board in the first `round` rounds.
fn rated(t: &Trf, start_rank: u32, round: usize) -> Vec<RatedGame> {
    let Some(p) = t.player(start_rank) else {
        return Vec::new();
    };
    p.cells
        .iter()
        .take(round)
        .filter_map(|c| match *c {
            Cell::Game {
                opponent,
                outcome: Some(o),
                ..
            } => {
                let score = match o {
                    Outcome::Win => 1.0,
                    Outcome::Draw => 0.5,
                    Outcome::Loss => 0.0,
                    _ => return None,
                };
                let opponent = t.player(opponent)?.rating.filter(|&r| r > 0)?;
                Some(RatedGame { score, opponent })
            }
            _ => None,
        })
        .collect()
}

/// Whether relay's PTP of these games is exactly the lowest rating reaching the points (in
/// hundredths) while the sum of the probabilities as binary fractions, added in game order
/// as the library adds them, stays below the points there.
fn ptp_float_short(games: &[RatedGame]) -> bool {
    let Some(r) = rating::perfect_performance(games) else {
        return false;
    };
    let exact = |r: i64| -> i64 {
        games
            .iter()
            .map(|g| {
                i64::from(rating::expected_hundredths(
                    (r - i64::from(g.opponent)) as i32,
                ))
            })
            .sum()
    };
    let floats: f64 = games
        .iter()
        .map(|g| {
            f64::from(rating::expected_hundredths(
                (r - i64::from(g.opponent)) as i32,
            )) / 100.0
        })
        .fold(0.0, |a, b| a + b);
    let target: f64 = games.iter().map(|g| g.score).fold(0.0, |a, b| a + b);
    let target_h = (target * 100.0).round() as i64;
    exact(r) >= target_h && exact(r - 1) < target_h && floats < target
}

fn individual_files() -> impl Iterator<Item = &'static str> {
    FILES.iter().copied().filter(|f| *f != TEAM_FILE)
}

fn read(name: &str) -> Trf {
    let path = file(name);
    read_trf(&std::fs::read(&path).expect("test data")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_value_and_order_agrees_with_tiebreak_core() {
    if data(FILES[0]).is_none() || !available() {
        return;
    }
    let codes: Vec<Code> = CODES
        .iter()
        .map(|c| Code::parse(c).expect("a known code"))
        .collect();
    let mut failures: Vec<String> = Vec::new();
    // Per file, edition and code: how many players disagree, and the first of them.
    let mut parted: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut agreed: BTreeMap<String, usize> = BTreeMap::new();
    let mut orders_agreed = 0;
    for name in individual_files() {
        let t = read(name);
        let last = last_round_with_result(&t);
        for (edition, round_robin) in [
            (Edition::Fide2026, false),
            (Edition::Fide2026, true),
            (Edition::Fide2024, false),
        ] {
            for round in [last, last.div_ceil(2)] {
                let s = Settings {
                    scoring: Scoring::from_trf(&t.tournament),
                    tiebreaks: codes.clone(),
                    edition,
                    round_robin,
                    round: Some(round),
                    ..Settings::default()
                };
                let what = format!(
                    "{name} {edition:?}{} after round {round}",
                    if round_robin { " round robin" } else { "" }
                );
                let orders: Vec<&[&str]> = ORDERS
                    .iter()
                    .copied()
                    .filter(|o| edition == Edition::Fide2026 || !o.contains(&"TPN"))
                    .filter(|o| edition == Edition::Fide2026 || !o.contains(&"STD"))
                    .collect();
                let theirs = referee(&request(&t, &s, round, &orders));
                // Codes with an excused value here: an order by them may part for that alone.
                let mut excused_codes = std::collections::BTreeSet::new();
                let ours = standings(&t, &s);
                assert_eq!(ours.round, round, "{what}");
                for (k, code) in CODES.iter().enumerate() {
                    let Some(col) = theirs["values"].get(code) else {
                        continue;
                    };
                    let mut n = 0;
                    for p in &ours.players {
                        let mine = p.values[k].unwrap_or(f64::NAN);
                        let their = col[p.start_rank.to_string()].as_f64().unwrap_or(f64::NAN);
                        if (mine - their).abs() <= 1e-6 {
                            n += 1;
                        } else if let Some(why) = excused(&t, &s, code, p.start_rank) {
                            excused_codes.insert(*code);
                            println!("{what}: {code} of {} excused ({why})", p.start_rank);
                        } else {
                            let e = parted.entry(format!("{what}: {code}")).or_insert_with(|| {
                                (
                                    0,
                                    format!(
                                        "start rank {}: relay {mine}, tiebreak-core {their}",
                                        p.start_rank
                                    ),
                                )
                            });
                            e.0 += 1;
                        }
                    }
                    *agreed.entry(format!("{edition:?} {code}")).or_default() += n;
                }
                for (o, their) in orders
                    .iter()
                    .zip(theirs["orders"].as_array().expect("orders"))
                {
                    let Some(their) = their.as_array() else {
                        println!("{what}: the library does not rank by {o:?}");
                        continue;
                    };
                    let their: Vec<u64> = their.iter().filter_map(Value::as_u64).collect();
                    let s = Settings {
                        tiebreaks: o
                            .iter()
                            .map(|c| Code::parse(c).expect("a known code"))
                            .collect(),
                        ..s.clone()
                    };
                    let mine: Vec<u64> = standings(&t, &s)
                        .players
                        .iter()
                        .map(|p| u64::from(p.start_rank))
                        .collect();
                    if mine == their {
                        orders_agreed += 1;
                    } else if let Some(c) = o.iter().find(|c| excused_codes.contains(*c)) {
                        println!("{what}: order {o:?} excused (an excused value of {c} above)");
                    } else {
                        failures.push(format!(
                            "{what}: order {o:?}: relay {mine:?}, tiebreak-core {their:?}"
                        ));
                    }
                }
            }
        }
    }
    for (at, (n, first)) in &parted {
        failures.push(format!("{at}: {n} players disagree, first {first}"));
    }
    for (code, n) in &agreed {
        println!("{code}: {n} values agree");
    }
    println!("{orders_agreed} whole orders agree");
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Ranks under `codes` in `edition`, as (start rank, rank) by start rank.
fn ranks_of(t: &Trf, codes: &[&str], edition: Edition) -> Vec<(u32, u32)> {
    let s = Settings {
        tiebreaks: codes
            .iter()
            .map(|c| Code::parse(c).expect("a known code"))
            .collect(),
        edition,
        ..Settings::default()
    };
    let mut v: Vec<(u32, u32)> = standings(t, &s)
        .players
        .iter()
        .map(|p| (p.start_rank, p.rank))
        .collect();
    v.sort_unstable();
    v
}

/// The Bunratty Masters 2011 file ranks its players in its rank column (columns 86–89) by
/// points, then Median-Buchholz 1, then Buchholz Cut 2. Relay's ranks under `BH/M1, BH/C2`
/// are those ranks, in either edition: the file's byes are taken by players with no more than
/// 3 points, where the 2026 edition's cap on a bye's stand-in (a draw a round: 3 of 6 rounds)
/// does not bite, so the two editions' Article 16 give the same values. It rests on reading
/// O'Connor's two blank byes (1 point between them, by the points column) as two half-point
/// byes: read as a full-point and a zero-point bye, he and Courtney swap places 24 and 25.
#[test]
fn bunratty_ranks_as_its_file_says() {
    let name = "icu_bunratty_masters_2011.tab";
    if data(name).is_none() {
        return;
    }
    let t = read(name);
    let file: Vec<(u32, u32)> = t
        .players
        .iter()
        .map(|p| (p.start_rank, p.rank.expect("a rank column")))
        .collect();
    let oconnor = t.player(16).expect("O'Connor");
    let half = Cell::Bye {
        code: ByeCode::Half,
        points: HalfPoints::HALF,
    };
    assert_eq!(
        oconnor.cells[3..5],
        [half, half],
        "two blank byes, a point between them"
    );
    for e in [Edition::Fide2024, Edition::Fide2026] {
        assert_eq!(ranks_of(&t, &["BH/M1", "BH/C2"], e), file, "{e:?}");
    }
    // As the reader had it before: a full-point and a zero-point bye.
    let mut before = t.clone();
    if let Some(p) = before.players.iter_mut().find(|p| p.start_rank == 16) {
        p.cells[3] = Cell::Bye {
            code: ByeCode::Full,
            points: HalfPoints::ONE,
        };
        p.cells[4] = Cell::Bye {
            code: ByeCode::Zero,
            points: HalfPoints::ZERO,
        };
    }
    let wrong = ranks_of(&before, &["BH/M1", "BH/C2"], Edition::Fide2024);
    assert_ne!(wrong, file);
    assert!(
        wrong.contains(&(16, 24)) && wrong.contains(&(34, 25)),
        "{wrong:?}"
    );
}
