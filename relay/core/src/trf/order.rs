//! A file's rounds as boards, in the order pairing programs publish them.
//!
//! Individual rounds: FIDE's Swiss rules (C.04.2) sort published pairings by the higher score
//! of the pair, then the sum of both scores, then the higher-placed player (here the lower
//! start rank); byes come after the boards and are not boards. Team rounds: the games of two
//! teams are one match; matches are sorted the same way by the teams' match points (2 for a
//! won match, 1 drawn: TRF-2026's defaults; a board won by forfeit against nobody, `0000 - +`,
//! counts in its team's match score), and a match's games by the board order of the
//! team named first, the one with White on its first board. A match of `k` boards takes board
//! numbers `(m-1)k+1 ..= mk`, so "board 6" of a four-board event is match 2, board 2.

use super::model::{ByeCode, Cell, Colour, HalfPoints, Outcome, Trf, scores_before};
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

/// One game of a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub board_no: u32,
    pub white: u32,
    pub black: u32,
    /// White's side of the result; `None` when not played yet.
    pub white_outcome: Option<Outcome>,
    /// Both lost by forfeit.
    pub double_forfeit: bool,
    /// A forfeit for which no colours were drawn (White here is the lower start rank).
    pub colourless: bool,
    /// The match (from 1) of a team round.
    pub match_no: Option<u32>,
}

/// Two teams' games in one round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamMatch {
    pub match_no: u32,
    /// The team named first (White on the first board), by team number.
    pub first: u32,
    pub second: u32,
}

/// A round of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundPlan {
    /// From 1.
    pub number: u32,
    pub date: Option<String>,
    pub boards: Vec<Board>,
    /// (start rank, code, points), by start rank.
    pub byes: Vec<(u32, ByeCode, HalfPoints)>,
    pub matches: Vec<TeamMatch>,
}

struct Pair {
    white: u32,
    black: u32,
    white_outcome: Option<Outcome>,
    double_forfeit: bool,
    colourless: bool,
}

fn pairs(t: &Trf, r: usize) -> (Vec<Pair>, Vec<(u32, ByeCode, HalfPoints)>) {
    let mut games = Vec::new();
    let mut byes = Vec::new();
    let has_games = t
        .players
        .iter()
        .any(|p| matches!(p.cells.get(r), Some(Cell::Game { .. })));
    for p in &t.players {
        match p.cells.get(r) {
            // A game once: from White's cell, or the lower start rank's when no colours
            // were drawn (that player is White on the board).
            Some(Cell::Game {
                opponent,
                colour,
                outcome,
            }) if *colour == Colour::White
                || (*colour == Colour::Neither && p.start_rank < *opponent) =>
            {
                let black_outcome = t.player(*opponent).and_then(|o| match o.cells.get(r) {
                    Some(Cell::Game { outcome, .. }) => *outcome,
                    _ => None,
                });
                games.push(Pair {
                    white: p.start_rank,
                    black: *opponent,
                    white_outcome: *outcome,
                    double_forfeit: *outcome == Some(Outcome::ForfeitLoss)
                        && black_outcome == Some(Outcome::ForfeitLoss),
                    colourless: *colour == Colour::Neither,
                });
            }
            Some(Cell::Bye { code, points }) => byes.push((p.start_rank, *code, *points)),
            Some(Cell::Blank) if has_games => {
                byes.push((p.start_rank, ByeCode::Zero, HalfPoints::ZERO))
            }
            _ => {}
        }
    }
    (games, byes)
}

/// Every round of the file with its boards numbered.
pub fn plan_rounds(t: &Trf) -> Vec<RoundPlan> {
    let scores = scores_before(t);
    let score = |rank: u32, r: usize| {
        scores
            .get(&rank)
            .and_then(|v| v.get(r))
            .copied()
            .unwrap_or_default()
    };
    let team_of: HashMap<u32, u32> = t
        .team_of()
        .into_iter()
        .map(|(p, team)| (p, team.number))
        .collect();
    let board_in_team: HashMap<u32, usize> = t
        .teams
        .iter()
        .flat_map(|team| team.players.iter().enumerate().map(|(i, p)| (*p, i)))
        .collect();
    let mut match_points: HashMap<u32, u32> = HashMap::new();
    let mut out = Vec::new();
    for r in 0..t.rounds() {
        let (games, mut byes) = pairs(t, r);
        let is_team = !t.teams.is_empty()
            && !games.is_empty()
            && games
                .iter()
                .all(|g| team_of.contains_key(&g.white) && team_of.contains_key(&g.black));
        let mut boards = Vec::new();
        let mut matches = Vec::new();
        if is_team {
            // A team's reserves sitting a round out are not byes; points-bearing byes are.
            byes.retain(|(_, code, _)| code.points() > HalfPoints::ZERO);
            // The games of each pair of teams.
            let mut by_match: BTreeMap<(u32, u32), Vec<&Pair>> = BTreeMap::new();
            for g in &games {
                let (a, b) = (team_of[&g.white], team_of[&g.black]);
                by_match.entry((a.min(b), a.max(b))).or_default().push(g);
            }
            let width = by_match.values().map(Vec::len).max().unwrap_or(1) as u32;
            let mut ms: Vec<((u32, u32), Vec<&Pair>)> = by_match.into_iter().collect();
            // The first team: White on its own top board of the match.
            let order_in = |team: u32, g: &Pair| {
                let p = if team_of[&g.white] == team {
                    g.white
                } else {
                    g.black
                };
                board_in_team.get(&p).copied().unwrap_or(usize::MAX)
            };
            for ((a, _), gs) in ms.iter_mut() {
                gs.sort_by_key(|g| order_in(*a, g));
            }
            let named = |(a, b): (u32, u32), gs: &[&Pair]| match gs.first() {
                Some(g) if team_of[&g.white] == b => (b, a),
                _ => (a, b),
            };
            let mp = |team: u32| match_points.get(&team).copied().unwrap_or(0);
            ms.sort_by_key(|(k, _)| {
                (
                    Reverse(mp(k.0).max(mp(k.1))),
                    Reverse(mp(k.0) + mp(k.1)),
                    k.0.min(k.1),
                )
            });
            for (i, (k, mut gs)) in ms.into_iter().enumerate() {
                let (first, second) = named(k, &gs);
                gs.sort_by_key(|g| order_in(first, g));
                let m = i as u32 + 1;
                let mut score = (0u32, 0u32);
                for (j, g) in gs.iter().enumerate() {
                    boards.push(Board {
                        board_no: (m - 1) * width + j as u32 + 1,
                        white: g.white,
                        black: g.black,
                        white_outcome: g.white_outcome,
                        double_forfeit: g.double_forfeit,
                        colourless: g.colourless,
                        match_no: Some(m),
                    });
                    let w = g.white_outcome.map_or(0, |o| o.points().0);
                    let b = g.white_outcome.map_or(0, |o| {
                        if g.double_forfeit {
                            0
                        } else {
                            o.other().points().0
                        }
                    });
                    if team_of[&g.white] == first {
                        score.0 += w;
                        score.1 += b;
                    } else {
                        score.0 += b;
                        score.1 += w;
                    }
                }
                // A board won by forfeit against nobody (the other team left it empty) is a
                // point of the match though no game stands for it.
                for (rank, code, points) in &byes {
                    if *code == ByeCode::ForfeitWin {
                        match team_of.get(rank) {
                            Some(t) if *t == first => score.0 += points.0,
                            Some(t) if *t == second => score.1 += points.0,
                            _ => {}
                        }
                    }
                }
                let (p1, p2) = match score.0.cmp(&score.1) {
                    std::cmp::Ordering::Greater => (2, 0),
                    std::cmp::Ordering::Less => (0, 2),
                    std::cmp::Ordering::Equal => (1, 1),
                };
                *match_points.entry(first).or_default() += p1;
                *match_points.entry(second).or_default() += p2;
                matches.push(TeamMatch {
                    match_no: m,
                    first,
                    second,
                });
            }
        } else {
            let mut gs = games;
            gs.sort_by_key(|g| {
                let (a, b) = (score(g.white, r), score(g.black, r));
                (Reverse(a.max(b)), Reverse(a.0 + b.0), g.white.min(g.black))
            });
            for (i, g) in gs.into_iter().enumerate() {
                boards.push(Board {
                    board_no: i as u32 + 1,
                    white: g.white,
                    black: g.black,
                    white_outcome: g.white_outcome,
                    double_forfeit: g.double_forfeit,
                    colourless: g.colourless,
                    match_no: None,
                });
            }
        }
        out.push(RoundPlan {
            number: r as u32 + 1,
            date: t.tournament.round_dates.get(r).cloned().flatten(),
            boards,
            byes,
            matches,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trf::read_trf;

    /// A `001` line: start rank in columns 5–8, a name from 15, the cells from column 92.
    fn player(n: u32, cells: &[&str]) -> String {
        let head = format!("001 {n:>4}      Player {n}");
        format!("{head:<91}{}\n", cells.join("  "))
    }

    /// Round 1: A beats B on the one board played, but B's two forfeit wins against nobody
    /// make it B's match 2–1; C and D draw. So round 2's leading match is B–D (B on 2 match
    /// points), not A–C (A had 2 when the forfeits went uncounted).
    #[test]
    fn forfeits_against_nobody_count_in_the_match_points_that_order_matches() {
        let mut text = String::from("012 Order\n");
        let rows: [(u32, [&str; 2]); 12] = [
            (1, ["   4 w 1", "   7 w 1"]),
            (2, ["0000 - -", "   8 b 1"]),
            (3, ["0000 - -", "   9 w 1"]),
            (4, ["   1 b 0", "  10 w 1"]),
            (5, ["0000 - +", "  11 b 1"]),
            (6, ["0000 - +", "  12 w 1"]),
            (7, ["  10 w =", "   1 b 0"]),
            (8, ["  11 b =", "   2 w 0"]),
            (9, ["  12 w =", "   3 b 0"]),
            (10, ["   7 b =", "   4 b 0"]),
            (11, ["   8 w =", "   5 w 0"]),
            (12, ["   9 b =", "   6 b 0"]),
        ];
        for (n, cells) in rows {
            text.push_str(&player(n, &cells));
        }
        for (name, first) in [("A", 1u32), ("B", 4), ("C", 7), ("D", 10)] {
            let mut line = format!("013 {name:<32}");
            for p in first..first + 3 {
                line.push_str(&format!("{p:>4} "));
            }
            text.push_str(&line);
            text.push('\n');
        }
        let t = read_trf(text.as_bytes()).expect("the test file reads");
        let rounds = plan_rounds(&t);
        let leading = &rounds[1].matches[0];
        assert_eq!((leading.first, leading.second), (2, 4));
        assert_eq!(rounds[1].boards[0].white, 4);
    }
}
