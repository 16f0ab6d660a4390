//! The arbiter's check: where a pairing program's file and relay's record of the same
//! tournament disagree about a result or a player's points. A board entered wrongly in one of
//! the two shows up here, named, instead of surfacing rounds later as a wrong pairing.
//!
//! Only what both sides have decided is compared: a game the file has no result for while
//! relay has one is listed only in a round where the file has results (a round the file just
//! paired has none yet); a game relay has no result for takes the file's on import and is
//! not a difference.

use super::model::{ByeCode, Cell, Colour, Outcome, Trf};
use schemars::JsonSchema;
use serde::Serialize;

/// One disagreement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Difference {
    /// The round (from 1); none for a player's points.
    pub round: Option<u32>,
    /// The player (White, or the lower start rank, for a game).
    pub start_rank: u32,
    /// The opponent of a game, by start rank.
    pub opponent: Option<u32>,
    /// What the file says ("1-0", "½-½", "0-1", "+/-", "-/+", a bye's letter, "none", or the
    /// points).
    pub file: String,
    /// What relay's record says, in the same form.
    pub relay: String,
    /// The whole difference in words, with names.
    pub text: String,
}

/// A cell's result as the arbiter reads it, from the point of view of `start_rank`'s pairing:
/// White's side first. `None` when nothing is decided.
fn said(c: &Cell, start_rank: u32) -> Option<(Option<u32>, String)> {
    match c {
        Cell::Game {
            opponent,
            colour,
            outcome: Some(o),
        } => {
            // Written from White's side (the lower start rank's when no colours were drawn).
            let first =
                *colour == Colour::White || (*colour == Colour::Neither && start_rank < *opponent);
            let o = if first { *o } else { o.other() };
            let text = match o {
                Outcome::Win | Outcome::ShortWin => "1-0",
                Outcome::Draw | Outcome::ShortDraw => "½-½",
                Outcome::Loss | Outcome::ShortLoss => "0-1",
                Outcome::ForfeitWin => "+/-",
                Outcome::ForfeitLoss => "-/+",
            };
            Some((Some(*opponent), text.to_string()))
        }
        Cell::Game { outcome: None, .. } | Cell::Blank => None,
        Cell::Bye { code, .. } => Some((None, bye_text(*code).to_string())),
    }
}

fn bye_text(code: ByeCode) -> &'static str {
    match code {
        ByeCode::Half => "H (half-point bye)",
        ByeCode::Full => "F (full-point bye)",
        ByeCode::Pairing => "U (pairing-allocated bye)",
        ByeCode::Zero => "Z (zero-point bye)",
        ByeCode::ForfeitWin => "+ (forfeit win, no opponent)",
        ByeCode::ForfeitLoss => "- (forfeit loss, no opponent)",
    }
}

/// Whether a cell is the one that writes its game: White, or the lower start rank.
fn writes_the_game(c: &Cell, start_rank: u32) -> bool {
    match c {
        Cell::Game {
            opponent, colour, ..
        } => *colour == Colour::White || (*colour == Colour::Neither && start_rank < *opponent),
        _ => true,
    }
}

/// Every result and every player's points on which `file` and `ours` disagree; `points` says
/// what a cell scores under the tournament's scoring.
pub fn differences(file: &Trf, ours: &Trf, points: impl Fn(&Cell) -> f64) -> Vec<Difference> {
    let name = |t: &Trf, r: u32| {
        t.player(r).map_or_else(
            || format!("start rank {r}"),
            |p| format!("{} ({r})", p.name),
        )
    };
    let rounds = file.rounds();
    // Rounds the file has any result in: elsewhere a missing result is a round not played yet.
    let decided: Vec<bool> = (0..rounds)
        .map(|r| {
            file.players.iter().any(|p| {
                matches!(
                    p.cells.get(r),
                    Some(Cell::Game {
                        outcome: Some(_),
                        ..
                    })
                )
            })
        })
        .collect();
    let mut out = Vec::new();
    for p in &file.players {
        let Some(q) = ours.player(p.start_rank) else {
            continue;
        };
        for (r, &round_decided) in decided.iter().enumerate() {
            let fc = p.cells.get(r).copied().unwrap_or(Cell::Blank);
            let oc = q.cells.get(r).copied().unwrap_or(Cell::Blank);
            let theirs = said(&fc, p.start_rank);
            let mine = said(&oc, p.start_rank);
            let (who, file_text, relay_text) = match (&theirs, &mine) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(_), Some(_)) => {
                    if !writes_the_game(&fc, p.start_rank) && !writes_the_game(&oc, p.start_rank) {
                        continue;
                    }
                    (
                        theirs
                            .as_ref()
                            .and_then(|t| t.0)
                            .or(mine.as_ref().and_then(|m| m.0)),
                        theirs.as_ref().map_or(String::new(), |t| t.1.clone()),
                        mine.as_ref().map_or(String::new(), |m| m.1.clone()),
                    )
                }
                (None, Some(m)) if round_decided && matches!(oc, Cell::Game { .. }) => {
                    if !writes_the_game(&oc, p.start_rank) {
                        continue;
                    }
                    (m.0, "none".to_string(), m.1.clone())
                }
                _ => continue,
            };
            let pairing = match who {
                Some(o) => format!("{} – {}", name(file, p.start_rank), name(file, o)),
                None => name(file, p.start_rank),
            };
            out.push(Difference {
                round: Some(r as u32 + 1),
                start_rank: p.start_rank,
                opponent: who,
                text: format!(
                    "round {}: {pairing}: the file has {file_text}, relay has {relay_text}",
                    r + 1
                ),
                file: file_text,
                relay: relay_text,
            });
        }
        if let Some(fp) = p.points {
            let mine: f64 = q.cells.iter().take(rounds).map(&points).sum();
            let theirs = fp.as_f64();
            if (mine - theirs).abs() > 1e-9 {
                out.push(Difference {
                    round: None,
                    start_rank: p.start_rank,
                    opponent: None,
                    text: format!(
                        "{}: the file gives {theirs} points, relay's record {mine}",
                        name(file, p.start_rank)
                    ),
                    file: theirs.to_string(),
                    relay: mine.to_string(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trf::read_trf;

    const FILE: &str = concat!(
        "012 Check\r\n",
        "001    1      A                                 2000                             2.0    1     2 w 1     3 b 1\r\n",
        "001    2      B                                 1900                             0.5    2     1 b 0  0000 - H\r\n",
        "001    3      C                                 1800                             0.0    3  0000 - Z     1 w 0\r\n",
    );

    fn points(c: &Cell) -> f64 {
        c.points().as_f64()
    }

    #[test]
    fn the_same_record_has_no_differences() {
        let t = read_trf(FILE.as_bytes()).expect("reads");
        assert!(differences(&t, &t, points).is_empty());
    }

    #[test]
    fn a_result_entered_otherwise_is_named_once_with_both_players_and_the_points() {
        let file = read_trf(FILE.as_bytes()).expect("reads");
        let mut ours = file.clone();
        // Relay's record has round 2's game 3 – 1 drawn.
        for (sr, o) in [(1, Outcome::Draw), (3, Outcome::Draw)] {
            let p = ours
                .players
                .iter_mut()
                .find(|p| p.start_rank == sr)
                .expect("there");
            if let Cell::Game { outcome, .. } = &mut p.cells[1] {
                *outcome = Some(o);
            }
        }
        let d = differences(&file, &ours, points);
        let games: Vec<&Difference> = d.iter().filter(|d| d.round.is_some()).collect();
        assert_eq!(games.len(), 1, "{d:#?}");
        assert_eq!(games[0].round, Some(2));
        assert_eq!(games[0].start_rank, 3, "White's side");
        assert_eq!(
            (games[0].file.as_str(), games[0].relay.as_str()),
            ("0-1", "½-½")
        );
        assert!(games[0].text.contains("C (3) – A (1)"), "{}", games[0].text);
        let pts: Vec<u32> = d
            .iter()
            .filter(|d| d.round.is_none())
            .map(|d| d.start_rank)
            .collect();
        assert_eq!(pts, vec![1, 3], "{d:#?}");
    }
}
