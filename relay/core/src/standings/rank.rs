//! Ordering: by points, then each code in turn among the players still equal, then by start
//! rank; each player their own rank.
//!
//! Direct encounter (C.07 Article 6) orders a group of equal players by the points they
//! scored against each other (a pair that met more than once: the average). When all of them
//! met, the order is by those points, and the rule is applied again to those still equal
//! among themselves. When some did not meet, only a player who would be first whatever the
//! missing games gave is placed, one at a time; the rest stay equal for the next code.
//! Forfeits are not games here, except in a round robin of the 2026 edition or with `DE/P`.

use super::article16::{Kind, Table};
use super::codes::Base;
use super::model::Settings;
use crate::trf::Trf;

/// Values closer than this are equal (sums of halves are exact; averages may not be).
const EPS: f64 = 1e-9;

/// Player indices, best first.
pub(super) fn order(
    trf: &Trf,
    t: &Table,
    settings: &Settings,
    values: &[Vec<Option<f64>>],
) -> Vec<usize> {
    // Start-rank order first: every split below keeps it within a group.
    let mut all: Vec<usize> = (0..trf.players.len()).collect();
    all.sort_by_key(|&i| trf.players[i].start_rank);
    let mut groups = split(vec![all], |i| Some(t.points[i]));
    for (k, code) in settings.tiebreaks.iter().enumerate() {
        if code.is_team() {
            continue;
        }
        groups = match code.base() {
            Base::De => {
                let as_games = t.forfeits_as_games(code.forfeits_played());
                groups
                    .into_iter()
                    .flat_map(|g| direct_encounter(&g, t, as_games))
                    .collect()
            }
            Base::Tpn => {
                let sign = if code.reverse() { 1.0 } else { -1.0 };
                split(groups, |i| {
                    Some(sign * f64::from(trf.players[i].start_rank))
                })
            }
            Base::Rtng if code.reverse() => split(groups, |i| values[i][k].map(|v| -v)),
            _ => split(groups, |i| values[i][k]),
        };
    }
    groups.into_iter().flatten().collect()
}

/// Splits each group by a value, higher first, keeping the order within equal values; a
/// group where any value is missing stays whole.
fn split(groups: Vec<Vec<usize>>, key: impl Fn(usize) -> Option<f64>) -> Vec<Vec<usize>> {
    let mut out = Vec::with_capacity(groups.len());
    for mut g in groups {
        if g.len() < 2 || g.iter().any(|&i| key(i).is_none()) {
            out.push(g);
            continue;
        }
        let v = |i: usize| key(i).unwrap_or(0.0);
        // `partial_cmp`: an empty sum is -0.0, which is no less than 0.0.
        g.sort_by(|&a, &b| v(b).partial_cmp(&v(a)).unwrap_or(std::cmp::Ordering::Equal));
        let mut cur = vec![g[0]];
        for w in g.windows(2) {
            if v(w[0]) - v(w[1]) > EPS {
                out.push(std::mem::take(&mut cur));
            }
            cur.push(w[1]);
        }
        out.push(cur);
    }
    out
}

/// The points each member scored against the others, and how many others each never met
/// (by either side's record).
fn mini_table(group: &[usize], t: &Table, as_games: bool) -> (Vec<f64>, Vec<u32>) {
    let g = group.len();
    let pos = |o: usize| group.iter().position(|&m| m == o);
    let mut score = vec![0.0; g];
    let mut met = vec![false; g * g];
    // Per pair: (points, games counted) of the first member against the second.
    let mut against: Vec<(f64, u32)> = vec![(0.0, 0); g * g];
    for (a, &p) in group.iter().enumerate() {
        for r in &t.rounds[p] {
            if r.kind == Kind::Pending {
                continue;
            }
            let Some(b) = r.opponent.and_then(pos) else {
                continue;
            };
            met[a * g + b] = true;
            met[b * g + a] = true;
            if t.is_game(r, as_games) {
                against[a * g + b].0 += r.points;
                against[a * g + b].1 += 1;
            }
        }
    }
    let mut missing = vec![0u32; g];
    for a in 0..g {
        for b in 0..g {
            let (pts, n) = against[a * g + b];
            if n > 0 {
                score[a] += pts / f64::from(n);
            }
            if a != b && !met[a * g + b] {
                missing[a] += 1;
            }
        }
    }
    (score, missing)
}

/// One group of equal players ordered by direct encounter into smaller groups, best first.
fn direct_encounter(group: &[usize], t: &Table, as_games: bool) -> Vec<Vec<usize>> {
    if group.len() < 2 {
        return vec![group.to_vec()];
    }
    let (score, missing) = mini_table(group, t, as_games);
    if missing.iter().all(|&m| m == 0) {
        let mut idx: Vec<usize> = (0..group.len()).collect();
        idx.sort_by(|&a, &b| {
            score[b]
                .partial_cmp(&score[a])
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut out = Vec::new();
        let mut k = 0;
        while k < idx.len() {
            let mut e = k + 1;
            while e < idx.len() && score[idx[k]] - score[idx[e]] <= EPS {
                e += 1;
            }
            let mut tied: Vec<usize> = idx[k..e].iter().map(|&x| group[x]).collect();
            tied.sort_by_key(|&p| group.iter().position(|&m| m == p));
            if tied.len() == 1 || tied.len() == group.len() {
                out.push(tied);
            } else {
                out.extend(direct_encounter(&tied, t, as_games));
            }
            k = e;
        }
        return out;
    }
    // Not all met: place, one at a time, a player first whatever the missing games give.
    let win = t.scoring.win;
    let mut rest = group.to_vec();
    let mut out = Vec::new();
    while rest.len() > 1 {
        let (score, missing) = mini_table(&rest, t, as_games);
        let first = (0..rest.len()).find(|&c| {
            (0..rest.len())
                .all(|o| o == c || score[c] > score[o] + f64::from(missing[o]) * win + EPS)
        });
        let Some(c) = first else { break };
        out.push(vec![rest.remove(c)]);
    }
    out.push(rest);
    out
}
