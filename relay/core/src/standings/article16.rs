//! C.07 Article 16: the rounds a player did not play over the board, and what they count for.
//!
//! Each round is sorted once ([`Kind`]):
//! - a game played over the board (a game of less than one move too: it was paired and
//!   scored on the board);
//! - a forfeit won or lost against a scheduled opponent (or, `0000 - +`, without one in
//!   the file);
//! - a bye with a win's points (the pairing-allocated bye `U`, a full-point bye `F`);
//! - a requested bye: `H`, `Z`, a blank cell, `0000 - -` (and the rounds after a
//!   withdrawal, which files write as these). It is "late" when the player played no more
//!   after it (no later game, forfeit win or win-point bye in the rounds covered).
//!
//! Requested byes short of a win and forfeit losses are the player's own choice (VUR): a
//! cut removes them before anything else. For the opponents' use a player's score counts a
//! late requested bye as a draw (the adjusted score). For the player's own Buchholz and
//! Sonneborn-Berger, a round without a game counts a stand-in opponent: in the 2024 edition
//! with the player's own score; in the 2026 edition with no more than the scheduled
//! opponent's adjusted score for a forfeit, and no more than a draw in every round for any
//! other unplayed round. In a round robin of the 2026 edition (and with `/P`), a forfeit
//! against a scheduled opponent counts as the game it would have been, except in the rating
//! tie-breaks and, lost, in the counts of games.

use super::model::{Edition, Settings};
use super::scoring::Scoring;
use crate::trf::{ByeCode, Cell, Colour, Outcome, Trf};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Played,
    ForfeitWin,
    ForfeitLoss,
    /// A bye with a win's points: pairing-allocated, or a full-point bye.
    WinBye,
    /// A requested half- or zero-point bye (or an absence); `late`: not followed by play.
    Requested {
        late: bool,
    },
    /// Paired, no result yet: counts for nothing.
    Pending,
}

/// One round of one player.
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    pub kind: Kind,
    /// The opponent's index among the players (played games and forfeits with one).
    pub opponent: Option<usize>,
    pub colour: Colour,
    pub outcome: Option<Outcome>,
    /// Under the tournament's scoring.
    pub points: f64,
}

impl Round {
    /// A voluntarily unplayed round: cut first.
    pub fn is_vur(&self) -> bool {
        matches!(self.kind, Kind::ForfeitLoss | Kind::Requested { .. })
    }

    pub fn is_forfeit(&self) -> bool {
        matches!(self.kind, Kind::ForfeitWin | Kind::ForfeitLoss)
    }

    /// A win in the round, played or not.
    pub fn won(&self, s: &Scoring) -> bool {
        match self.kind {
            Kind::Played => matches!(self.outcome, Some(Outcome::Win | Outcome::ShortWin)),
            Kind::ForfeitWin => true,
            Kind::WinBye => self.points >= s.win,
            _ => false,
        }
    }
}

/// Every player's rounds and the scores Article 16 builds on, computed once.
#[derive(Debug)]
pub(super) struct Table {
    pub rounds: Vec<Vec<Round>>,
    /// Points under the scoring, over the rounds covered.
    pub points: Vec<f64>,
    /// The score for the opponents' use (late requested byes as draws).
    pub adjusted: Vec<f64>,
    /// The same two with the last round's games as draws (Fore Buchholz).
    pub fore_points: Vec<f64>,
    pub fore_adjusted: Vec<f64>,
    /// The rounds covered.
    pub covered: u32,
    pub edition: Edition,
    pub round_robin: bool,
    pub scoring: Scoring,
}

impl Table {
    pub fn new(trf: &Trf, settings: &Settings, covered: u32) -> Table {
        let index: HashMap<u32, usize> = trf
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| (p.start_rank, i))
            .collect();
        let s = &settings.scoring;
        let n = covered as usize;
        let rounds: Vec<Vec<Round>> = trf
            .players
            .iter()
            .map(|p| {
                let mut v: Vec<Round> = (0..n)
                    .map(|r| classify(p.cells.get(r).unwrap_or(&Cell::Blank), &index, s))
                    .collect();
                // A requested bye is late when nothing played (or won) comes after it.
                let mut back = false;
                for r in v.iter_mut().rev() {
                    match r.kind {
                        Kind::Requested { .. } => r.kind = Kind::Requested { late: !back },
                        Kind::Played | Kind::ForfeitWin | Kind::WinBye | Kind::Pending => {
                            back = true
                        }
                        Kind::ForfeitLoss => {}
                    }
                }
                v
            })
            .collect();
        let last = n.checked_sub(1);
        let mut t = Table {
            points: Vec::with_capacity(rounds.len()),
            adjusted: Vec::with_capacity(rounds.len()),
            fore_points: Vec::with_capacity(rounds.len()),
            fore_adjusted: Vec::with_capacity(rounds.len()),
            rounds,
            covered,
            edition: settings.edition,
            round_robin: settings.round_robin,
            scoring: s.clone(),
        };
        for rs in &t.rounds {
            let (mut pts, mut adj, mut fpts, mut fadj) = (0.0, 0.0, 0.0, 0.0);
            for (i, r) in rs.iter().enumerate() {
                let late = matches!(r.kind, Kind::Requested { late: true });
                let fore_draw = Some(i) == last && r.kind == Kind::Played;
                pts += r.points;
                adj += if late { s.draw } else { r.points };
                fpts += if fore_draw { s.draw } else { r.points };
                fadj += if late || fore_draw { s.draw } else { r.points };
            }
            t.points.push(pts);
            t.adjusted.push(adj);
            t.fore_points.push(fpts);
            t.fore_adjusted.push(fadj);
        }
        t
    }

    /// Forfeits against a scheduled opponent count as games: a round robin under the 2026
    /// edition, or a code with `/P`.
    pub fn forfeits_as_games(&self, p_modifier: bool) -> bool {
        p_modifier || (self.round_robin && self.edition == Edition::Fide2026)
    }

    /// Whether a round counts as a game against its opponent (for BH, SB, FB, KS, DE, STD).
    pub fn is_game(&self, r: &Round, forfeits_as_games: bool) -> bool {
        r.kind == Kind::Played || (forfeits_as_games && r.is_forfeit() && r.opponent.is_some())
    }

    /// The stand-in opponent's score for an unplayed round of player `p` whose own score is
    /// `own`; `adjusted` is the table of scores the opponents' side uses (plain or fore).
    pub fn stand_in(&self, r: &Round, own: f64, adjusted: &[f64]) -> f64 {
        match self.edition {
            Edition::Fide2024 => own,
            Edition::Fide2026 => {
                if r.is_forfeit() {
                    match r.opponent.and_then(|o| adjusted.get(o)) {
                        Some(&sched) => own.min(sched),
                        None => own,
                    }
                } else {
                    own.min(self.scoring.draw * f64::from(self.covered))
                }
            }
        }
    }
}

/// One cell as Article 16 sorts it (`late` settled afterwards).
fn classify(c: &Cell, index: &HashMap<u32, usize>, s: &Scoring) -> Round {
    let round = |kind, opponent, colour, outcome, points| Round {
        kind,
        opponent,
        colour,
        outcome,
        points,
    };
    let requested = Kind::Requested { late: false };
    match *c {
        Cell::Game {
            opponent,
            colour,
            outcome,
        } => {
            let opp = index.get(&opponent).copied();
            let points = s.of_cell(c);
            let kind = match outcome {
                None => Kind::Pending,
                Some(Outcome::ForfeitWin) => Kind::ForfeitWin,
                Some(Outcome::ForfeitLoss) => Kind::ForfeitLoss,
                Some(_) if opp.is_none() => Kind::Pending,
                Some(_) => Kind::Played,
            };
            round(kind, opp, colour, outcome, points)
        }
        Cell::Bye { code, .. } => {
            let points = s.of_bye(code);
            let kind = match code {
                ByeCode::Pairing | ByeCode::Full => Kind::WinBye,
                ByeCode::ForfeitWin => Kind::ForfeitWin,
                ByeCode::Half | ByeCode::Zero | ByeCode::ForfeitLoss => requested,
            };
            round(kind, None, Colour::Neither, None, points)
        }
        Cell::Blank => round(requested, None, Colour::Neither, None, s.zero_bye),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trf::{HalfPoints, TrfPlayer};

    fn game(opponent: u32, colour: Colour, o: Outcome) -> Cell {
        Cell::Game {
            opponent,
            colour,
            outcome: Some(o),
        }
    }

    fn bye(code: ByeCode) -> Cell {
        Cell::Bye {
            code,
            points: code.points(),
        }
    }

    fn trf(rows: Vec<Vec<Cell>>) -> Trf {
        Trf {
            players: rows
                .into_iter()
                .enumerate()
                .map(|(i, cells)| TrfPlayer {
                    start_rank: i as u32 + 1,
                    name: format!("P{}", i + 1),
                    cells,
                    points: None::<HalfPoints>,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn byes_are_sorted_and_late_ones_found() {
        use Colour::*;
        use Outcome::*;
        // 1: H, game, Z, blank (withdrew); 2: U, game, forfeit win, forfeit loss.
        let t = trf(vec![
            vec![
                bye(ByeCode::Half),
                game(2, White, Win),
                bye(ByeCode::Zero),
                Cell::Blank,
            ],
            vec![
                bye(ByeCode::Pairing),
                game(1, Black, Loss),
                bye(ByeCode::ForfeitWin),
                bye(ByeCode::ForfeitLoss),
            ],
        ]);
        let tab = Table::new(&t, &Settings::default(), 4);
        let kinds: Vec<Kind> = tab.rounds[0].iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![
                Kind::Requested { late: false },
                Kind::Played,
                Kind::Requested { late: true },
                Kind::Requested { late: true }
            ]
        );
        // 1.5 points; for the opponents, the two late rounds are draws: 2.5.
        assert_eq!((tab.points[0], tab.adjusted[0]), (1.5, 2.5));
        // `0000 - -` after a forfeit win is a late requested bye too.
        assert_eq!(tab.rounds[1][3].kind, Kind::Requested { late: true });
        assert_eq!(tab.rounds[1][2].kind, Kind::ForfeitWin);
        assert_eq!(tab.points[1], 2.0);
        // Covering two rounds: the H of round 1 is followed by the game of round 2: early.
        // Covering one: nothing follows it within the rounds covered: late.
        let tab = Table::new(&t, &Settings::default(), 2);
        assert_eq!(tab.rounds[0][0].kind, Kind::Requested { late: false });
        let tab = Table::new(&t, &Settings::default(), 1);
        assert_eq!(tab.rounds[0][0].kind, Kind::Requested { late: true });
    }

    #[test]
    fn stand_ins_by_edition() {
        use Colour::*;
        use Outcome::*;
        // 1 beats 2 by forfeit in round 1 and has a U bye in round 2; 2 lost everything.
        let t = trf(vec![
            vec![
                game(2, Neither, ForfeitWin),
                bye(ByeCode::Pairing),
                game(3, White, Win),
            ],
            vec![
                game(1, Neither, ForfeitLoss),
                game(3, Black, Loss),
                bye(ByeCode::Zero),
            ],
            vec![
                bye(ByeCode::Half),
                game(2, White, Win),
                game(1, Black, Loss),
            ],
        ]);
        let s26 = Settings::default();
        let tab = Table::new(&t, &s26, 3);
        let (r0, r1) = (tab.rounds[0][0], tab.rounds[0][1]);
        // 2026: the forfeit's stand-in is capped by the opponent's adjusted score (0 + late
        // zero bye as a draw = 0.5), the bye's by a draw a round (1.5).
        assert_eq!(tab.stand_in(&r0, 3.0, &tab.adjusted), 0.5);
        assert_eq!(tab.stand_in(&r1, 3.0, &tab.adjusted), 1.5);
        let s24 = Settings {
            edition: Edition::Fide2024,
            ..Settings::default()
        };
        let tab = Table::new(&t, &s24, 3);
        assert_eq!(tab.stand_in(&r0, 3.0, &tab.adjusted), 3.0);
        assert_eq!(tab.stand_in(&r1, 3.0, &tab.adjusted), 3.0);
        // A round robin of 2026 plays the forfeit as a game; 2024 does not.
        assert!(!tab.forfeits_as_games(false));
        let rr = Settings {
            round_robin: true,
            ..Settings::default()
        };
        let tab = Table::new(&t, &rr, 3);
        assert!(tab.forfeits_as_games(false) && tab.is_game(&r0, true));
    }
}
