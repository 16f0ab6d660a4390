//! Ranking the teams: the primary score, then each team code in turn splits the teams still
//! equal; teams equal after the last by team number.
//!
//! The extended direct encounter (C.07 13.3) works on a group of equal teams, not on one
//! team's value:
//! - When every two of the group met, each team's score in the matches among them (a pair
//!   that met twice counts the average) orders the group on the primary score; teams still
//!   equal are then ordered by the secondary score of their matches among themselves (once,
//!   no further). That includes a whole group the primary score did not part at all, as
//!   13.3.1 says (the secondary score "if no ties were broken"); the referee library leaves
//!   such a group equal (three teams that each won one match among them, say). The team file
//!   of the shared data has no such group.
//! - When some did not meet, a team goes first only if no other could pass it by winning
//!   its missing matches (Article 6's rule for a Swiss); the rest stay equal.
//! - The chains (`EDET`, `EDEB`, `EDEBT`, `EDEBB`) go on, for two teams still equal, with
//!   the board codes named, the first that parts them deciding.

use super::code::{Base, Board, Score, TeamCode};
use super::event::Event;
use std::cmp::Ordering;

const EPS: f64 = 1e-9;

/// Orders `group` by `key` (lower first, element by element) into groups of equal keys.
fn split(group: Vec<u32>, key: impl Fn(u32) -> Vec<f64>) -> Vec<Vec<u32>> {
    let mut keyed: Vec<(Vec<f64>, u32)> = group.into_iter().map(|t| (key(t), t)).collect();
    keyed.sort_by(|a, b| compare(&a.0, &b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut last: Option<Vec<f64>> = None;
    for (k, t) in keyed {
        match (&last, out.last_mut()) {
            (Some(l), Some(g)) if compare(l, &k) == Ordering::Equal => g.push(t),
            _ => out.push(vec![t]),
        }
        last = Some(k);
    }
    out
}

fn compare(a: &[f64], b: &[f64]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        if (x - y).abs() > EPS {
            return x.total_cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The teams in rank order.
pub(super) fn rank(ev: &Event, codes: &[TeamCode]) -> Vec<u32> {
    let all: Vec<u32> = ev.teams().collect();
    let mut groups = split(all, |t| vec![-ev.total(t, ev.primary)]);
    for code in codes {
        groups = groups
            .into_iter()
            .flat_map(|g| {
                if g.len() < 2 {
                    vec![g]
                } else {
                    split_by(ev, code, g)
                }
            })
            .collect();
    }
    groups.into_iter().flatten().collect()
}

fn split_by(ev: &Event, code: &TeamCode, group: Vec<u32>) -> Vec<Vec<u32>> {
    match code.base {
        Base::Ede(chain) => ede(ev, group, code.forfeits_played)
            .into_iter()
            .flat_map(|tier| {
                if tier.len() == 2 {
                    board_chain(ev, tier, chain)
                } else {
                    vec![tier]
                }
            })
            .collect(),
        Base::Board(b) => split(group, |t| ev.board_key(t, b)),
        _ => split(group, |t| vec![-ev.value(t, code).unwrap_or(0.0)]),
    }
}

fn board_chain(ev: &Event, tier: Vec<u32>, chain: &[Board]) -> Vec<Vec<u32>> {
    for b in chain {
        let parts = split(tier.clone(), |t| ev.board_key(t, *b));
        if parts.len() > 1 {
            return parts;
        }
    }
    vec![tier]
}

/// Each team's score `s` in its matches against the others of `group` (the average of
/// several against one), and how many of them it never met (a forfeited match is a meeting
/// only with `played`, `/P`).
fn among(ev: &Event, group: &[u32], s: Score, played: bool) -> Vec<(u32, f64, usize)> {
    group
        .iter()
        .map(|&t| {
            let mut score = 0.0;
            let mut missing = 0;
            for &u in group.iter().filter(|u| **u != t) {
                let rounds = ev.rounds(t);
                let with: Vec<f64> = rounds
                    .iter()
                    .filter(|r| r.met(played) == Some(u))
                    .map(|r| Event::scored(r, s))
                    .collect();
                if with.is_empty() {
                    missing += 1;
                } else {
                    score += with.iter().sum::<f64>() / with.len() as f64;
                }
            }
            (t, score, missing)
        })
        .collect()
}

fn ede(ev: &Event, group: Vec<u32>, played: bool) -> Vec<Vec<u32>> {
    let primary = ev.primary;
    let table = among(ev, &group, primary, played);
    if table.iter().all(|(_, _, missing)| *missing == 0) {
        let score = |t: u32| table.iter().find(|e| e.0 == t).map_or(0.0, |e| e.1);
        return split(group, |t| vec![-score(t)])
            .into_iter()
            .flat_map(|tied| {
                if tied.len() < 2 {
                    return vec![tied];
                }
                let second = among(ev, &tied, primary.other(), played);
                let score = |t: u32| second.iter().find(|e| e.0 == t).map_or(0.0, |e| e.1);
                split(tied, |t| vec![-score(t)])
            })
            .collect();
    }
    // Not all met: the first only when certain, again on the rest.
    let ceiling = ev.match_max(primary);
    let mut rest = group;
    let mut tiers = Vec::new();
    while rest.len() > 1 {
        let table = among(ev, &rest, primary, played);
        let first = table.iter().find(|(t, score, _)| {
            table
                .iter()
                .filter(|(u, _, _)| u != t)
                .all(|(_, other, missing)| *score > other + *missing as f64 * ceiling + EPS)
        });
        match first {
            Some(&(t, _, _)) => {
                tiers.push(vec![t]);
                rest.retain(|u| *u != t);
            }
            None => break,
        }
    }
    tiers.push(rest);
    tiers
}

#[cfg(test)]
mod tests {
    use super::super::rounds::{Kind, Round};
    use super::*;
    use crate::standings::Settings;
    use std::collections::BTreeMap;

    /// Teams 1..=`n` and their matches `(round, team, team, game points each)` on four boards.
    fn event<'a>(s: &'a Settings, n: u32, matches: &[(u32, u32, u32, f64, f64)]) -> Event<'a> {
        let last = matches.iter().map(|m| m.0).max().unwrap_or(0);
        let mut rounds = BTreeMap::new();
        for t in 1..=n {
            let v: Vec<Round> = (1..=last)
                .map(|r| {
                    let m = matches.iter().find(|m| m.0 == r && (m.1 == t || m.2 == t));
                    let (opponent, gp, against) = match m {
                        Some(&(_, a, b, x, y)) if a == t => (Some(b), x, y),
                        Some(&(_, a, _, x, y)) => (Some(a), y, x),
                        None => (None, 0.0, 0.0),
                    };
                    let mp = match gp.total_cmp(&against) {
                        Ordering::Greater => 2.0,
                        Ordering::Equal if opponent.is_some() => 1.0,
                        _ => 0.0,
                    };
                    Round {
                        number: r,
                        kind: if opponent.is_some() {
                            Kind::Played
                        } else {
                            Kind::Unplayed
                        },
                        opponent,
                        mp,
                        gp,
                        gp_against: against,
                        boards: vec![gp / 4.0; 4],
                        finished: true,
                    }
                })
                .collect();
            rounds.insert(t, v);
        }
        let totals = rounds
            .iter()
            .map(|(t, rs)| {
                let mp = rs.iter().map(|r| r.mp).sum();
                let gp = rs.iter().map(|r| r.gp).sum();
                (*t, (mp, gp))
            })
            .collect();
        Event {
            rounds,
            totals,
            width: 4,
            last,
            primary: Score::Mp,
            scoring: &s.scoring,
            team_scoring: &s.team_scoring,
        }
    }

    fn check(n: u32, matches: &[(u32, u32, u32, f64, f64)], group: &[u32], tiers: &[&[u32]]) {
        let s = Settings::default();
        let ev = event(&s, n, matches);
        let got = ede(&ev, group.to_vec(), false);
        let want: Vec<Vec<u32>> = tiers.iter().map(|t| t.to_vec()).collect();
        assert_eq!(got, want, "{matches:?}");
    }

    #[test]
    fn all_met_the_match_points_among_them_then_the_game_points() {
        // 1 beat 2, 2 beat 3, 3 beat 1: two match points each among them; game points among
        // them part 3 (5) from 1 and 2 (3½ each), who stay equal.
        check(
            3,
            &[
                (1, 1, 2, 3.0, 1.0),
                (2, 2, 3, 2.5, 1.5),
                (3, 3, 1, 3.5, 0.5),
            ],
            &[1, 2, 3],
            &[&[3], &[1, 2]],
        );
        // 1 beat both; 2 and 3 drew.
        check(
            3,
            &[
                (1, 1, 2, 3.0, 1.0),
                (2, 2, 3, 2.0, 2.0),
                (3, 3, 1, 1.0, 3.0),
            ],
            &[1, 2, 3],
            &[&[1], &[2, 3]],
        );
    }

    #[test]
    fn not_all_met_the_first_only_when_nobody_could_pass_it() {
        // 1 beat 2 and 3, who never met: neither could reach 1's four.
        check(
            3,
            &[(1, 1, 2, 3.0, 1.0), (2, 3, 1, 1.0, 3.0)],
            &[1, 2, 3],
            &[&[1], &[2, 3]],
        );
        // 1 beat 2; 3 met neither: 3 could still make as many by winning both.
        check(3, &[(1, 1, 2, 3.0, 1.0)], &[1, 2, 3], &[&[1, 2, 3]]);
        // Two teams that never met stay equal.
        check(2, &[], &[1, 2], &[&[1, 2]]);
    }
}
