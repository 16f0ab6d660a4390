//! The players' tie-breaks (C.07 Articles 7–10 and 14, over the rounds Article 16 sorted), and
//! their standings.
//!
//! Every code is computed for every player at once over the table of [`Table`]: scores and
//! adjusted scores are there once, so a code costs a pass over the players' rounds (the
//! averages over opponents, AOB, APRO and APPO, a second pass over the opponents' values).

use super::article16::{Kind, Round, Table};
use super::codes::{Base, Code};
use super::model::{PlayerStanding, Settings};
use super::rank;
use super::rating::{self, RatedGame};
use crate::trf::{Colour, Outcome, Trf};

pub(super) fn rank_players(trf: &Trf, settings: &Settings, round: u32) -> Vec<PlayerStanding> {
    let covered = round.min(trf.rounds() as u32);
    let table = Table::new(trf, settings, covered);
    let values: Vec<Vec<Option<f64>>> = {
        let per_code: Vec<Vec<Option<f64>>> = settings
            .tiebreaks
            .iter()
            .map(|c| values_of(&table, trf, c))
            .collect();
        (0..trf.players.len())
            .map(|i| per_code.iter().map(|v| v[i]).collect())
            .collect()
    };
    let order = rank::order(trf, &table, settings, &values);
    order
        .into_iter()
        .enumerate()
        .map(|(place, i)| PlayerStanding {
            start_rank: trf.players[i].start_rank,
            rank: place as u32 + 1,
            points: table.points[i],
            values: values[i].clone(),
            games: table.rounds[i]
                .iter()
                .filter(|r| r.kind == Kind::Played)
                .count() as u32,
        })
        .collect()
}

/// One code's value for every player (by index); `None` for an order-only or a team code.
pub(super) fn values_of(t: &Table, trf: &Trf, code: &Code) -> Vec<Option<f64>> {
    if code.is_team() || code.is_order_only() {
        return vec![None; t.rounds.len()];
    }
    let n = t.rounds.len();
    // `+ 0.0`: an empty sum is -0.0, shown as "-0".
    let all = |f: &dyn Fn(usize) -> f64| (0..n).map(|i| Some(f(i) + 0.0)).collect();
    let s = &t.scoring;
    let as_games = t.forfeits_as_games(code.forfeits_played());
    // Counts of games in a round robin (2026) take forfeit wins against an opponent.
    let rr_counts = t.forfeits_as_games(false);
    let counted_game = |r: &Round| {
        r.kind == Kind::Played || (rr_counts && r.kind == Kind::ForfeitWin && r.opponent.is_some())
    };
    match code.base() {
        Base::Win => all(&|i| count(&t.rounds[i], |r| r.won(s))),
        Base::Won => all(&|i| count(&t.rounds[i], |r| counted_game(r) && r.won(s))),
        Base::Bpg => all(&|i| {
            count(&t.rounds[i], |r| {
                counted_game(r) && r.colour == Colour::Black
            })
        }),
        Base::Bwg => all(&|i| {
            count(&t.rounds[i], |r| {
                counted_game(r) && r.colour == Colour::Black && r.won(s)
            })
        }),
        Base::Rep => all(&|i| {
            count(&t.rounds[i], |r| match r.kind {
                Kind::Requested { .. } => false,
                Kind::ForfeitLoss => rr_counts && r.opponent.is_some(),
                _ => true,
            })
        }),
        Base::Std => all(&|i| standard_points(t, i)),
        Base::Ps => all(&|i| progressive(&t.rounds[i], code.cut().unwrap_or(0))),
        Base::Bh | Base::Fb => buchholz_family(
            t,
            code.cut(),
            code.median(),
            code.base() == Base::Fb || code.fore(),
            as_games,
        ),
        Base::Sb => all(&|i| sonneborn_berger(t, i, code.cut().unwrap_or(0), as_games)),
        Base::Aob => {
            // The opponents' own Buchholz (Fore Buchholz for AOB/F), uncut.
            let bh = buchholz_family(t, None, None, code.fore(), t.forfeits_as_games(false));
            all(&|i| {
                let opps: Vec<f64> = t.rounds[i]
                    .iter()
                    .filter(|r| r.kind == Kind::Played)
                    .filter_map(|r| r.opponent.and_then(|o| bh[o]))
                    .collect();
                if opps.is_empty() {
                    0.0
                } else {
                    opps.iter().sum::<f64>() / opps.len() as f64
                }
            })
        }
        Base::Ks => {
            // Half the most a player could score, moved by the limit's half points.
            let threshold =
                s.win * f64::from(t.covered) / 2.0 + s.win / 2.0 * f64::from(code.limit_halves());
            all(&|i| {
                t.rounds[i]
                    .iter()
                    .filter(|r| t.is_game(r, as_games))
                    .filter(|r| r.opponent.is_some_and(|o| t.points[o] >= threshold - 1e-9))
                    .map(|r| r.points)
                    .sum()
            })
        }
        Base::Aro => all(&|i| aro(&rated_games(t, trf, i), code)),
        Base::Tpr => all(&|i| or_zero(rating::performance(&rated_games(t, trf, i)))),
        Base::Ptp => all(&|i| or_zero(rating::perfect_performance(&rated_games(t, trf, i)))),
        Base::Apro | Base::Appo => {
            let own: Vec<Option<i64>> = (0..n)
                .map(|i| {
                    let g = rated_games(t, trf, i);
                    if code.base() == Base::Apro {
                        rating::performance(&g)
                    } else {
                        rating::perfect_performance(&g)
                    }
                })
                .collect();
            all(&|i| {
                // Opponents with no rated game have no performance: they are left out.
                let v: Vec<i64> = t.rounds[i]
                    .iter()
                    .filter(|r| r.kind == Kind::Played)
                    .filter_map(|r| r.opponent.and_then(|o| own[o]))
                    .collect();
                if v.is_empty() {
                    0.0
                } else {
                    rating::round_half_up(v.iter().sum::<i64>() as f64 / v.len() as f64) as f64
                }
            })
        }
        Base::Rtng => all(&|i| f64::from(trf.players[i].rating.unwrap_or(0))),
        // Order-only and team bases were answered above.
        _ => vec![None; n],
    }
}

fn count(rounds: &[Round], f: impl Fn(&Round) -> bool) -> f64 {
    rounds.iter().filter(|r| f(r)).count() as f64
}

fn or_zero(v: Option<i64>) -> f64 {
    v.map_or(0.0, |x| x as f64)
}

/// Games over the board against rated opponents, scored 1/½/0 (games of less than one move
/// are not rated).
fn rated_games(t: &Table, trf: &Trf, i: usize) -> Vec<RatedGame> {
    t.rounds[i]
        .iter()
        .filter(|r| r.kind == Kind::Played)
        .filter_map(|r| {
            let score = match r.outcome? {
                Outcome::Win => 1.0,
                Outcome::Draw => 0.5,
                Outcome::Loss => 0.0,
                _ => return None,
            };
            let opponent = trf.players.get(r.opponent?)?.rating.filter(|&x| x > 0)?;
            Some(RatedGame { score, opponent })
        })
        .collect()
}

/// ARO with its cut or median: the lowest ratings (and for a median as many highest) left
/// out, one rating always kept; a median needs more ratings than it leaves out.
fn aro(games: &[RatedGame], code: &Code) -> f64 {
    let mut r: Vec<u32> = games.iter().map(|g| g.opponent).collect();
    r.sort_unstable();
    let kept: &[u32] = match (code.cut(), code.median()) {
        (Some(c), _) if !r.is_empty() => &r[(c as usize).min(r.len() - 1)..],
        (_, Some(m)) if r.len() > 2 * m as usize => &r[m as usize..r.len() - m as usize],
        _ => &r,
    };
    let g: Vec<RatedGame> = kept
        .iter()
        .map(|&opponent| RatedGame {
            score: 0.0,
            opponent,
        })
        .collect();
    or_zero(rating::average_rating(&g))
}

/// Progressive score: the running score after each round covered, summed, less the running
/// scores after the first `cut` rounds.
fn progressive(rounds: &[Round], cut: u32) -> f64 {
    let mut run = 0.0;
    let mut sum = 0.0;
    for (i, r) in rounds.iter().enumerate() {
        run += r.points;
        if i as u32 >= cut {
            sum += run;
        }
    }
    sum
}

/// Standard points: a point for each round scoring more than the opponent scored in it (or,
/// without a game, more than a draw), half a point for as much.
fn standard_points(t: &Table, i: usize) -> f64 {
    let games = t.forfeits_as_games(false);
    t.rounds[i]
        .iter()
        .enumerate()
        .filter(|(_, r)| r.kind != Kind::Pending)
        .map(|(k, r)| {
            let against = if t.is_game(r, games) {
                r.opponent
                    .and_then(|o| t.rounds[o].get(k))
                    .map_or(t.scoring.draw, |o| o.points)
            } else {
                t.scoring.draw
            };
            if r.points > against {
                1.0
            } else if r.points == against {
                0.5
            } else {
                0.0
            }
        })
        .sum()
}

/// One value of a Buchholz-like sum: what it adds, and whether it comes from a round the
/// player chose not to play (cut first).
#[derive(Clone, Copy, Debug)]
struct Part {
    value: f64,
    vur: bool,
    /// The opponent's score behind it (Sonneborn-Berger's cut goes by it).
    basis: f64,
}

/// The parts of player `i`'s Buchholz (or, `fore`, Fore Buchholz).
fn buchholz_parts(t: &Table, i: usize, fore: bool, as_games: bool) -> Vec<Part> {
    let (own, adjusted) = if fore {
        (t.fore_points[i], &t.fore_adjusted)
    } else {
        (t.points[i], &t.adjusted)
    };
    t.rounds[i]
        .iter()
        .filter(|r| r.kind != Kind::Pending)
        .map(|r| match r.opponent {
            Some(o) if t.is_game(r, as_games) => Part {
                value: adjusted[o],
                vur: false,
                basis: adjusted[o],
            },
            _ => {
                let v = t.stand_in(r, own, adjusted);
                Part {
                    value: v,
                    vur: r.is_vur(),
                    basis: v,
                }
            }
        })
        .collect()
}

/// Removes the `n` least significant parts, a part of a round the player chose not to play
/// first (C.07 16.5), always keeping one.
fn cut_least(parts: &mut Vec<Part>, n: u32) {
    for _ in 0..n {
        if parts.len() <= 1 {
            return;
        }
        let pick = |vur_only: bool| {
            parts
                .iter()
                .enumerate()
                .filter(|(_, p)| !vur_only || p.vur)
                .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
                .map(|(k, _)| k)
        };
        if let Some(k) = pick(true).or_else(|| pick(false)) {
            parts.remove(k);
        }
    }
}

fn cut_most(parts: &mut Vec<Part>, n: u32) {
    for _ in 0..n {
        if let Some(k) = parts
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
            .map(|(k, _)| k)
        {
            parts.remove(k);
        }
    }
}

/// BH or FB with its cut or median, for every player.
fn buchholz_family(
    t: &Table,
    cut: Option<u32>,
    median: Option<u32>,
    fore: bool,
    as_games: bool,
) -> Vec<Option<f64>> {
    (0..t.rounds.len())
        .map(|i| {
            let mut parts = buchholz_parts(t, i, fore, as_games);
            if let Some(c) = cut {
                cut_least(&mut parts, c);
            } else if let Some(m) = median
                && parts.len() > 2 * m as usize
            {
                cut_least(&mut parts, m);
                cut_most(&mut parts, m);
            }
            Some(parts.iter().map(|p| p.value).sum::<f64>() + 0.0)
        })
        .collect()
}

/// Sonneborn-Berger: each opponent's score times the points scored against them (an
/// unplayed round: the stand-in's). A cut removes the part of the opponent with the lowest
/// score (the lowest part among them), or, when higher, the lowest part of a round the player
/// chose not to play.
fn sonneborn_berger(t: &Table, i: usize, cut: u32, as_games: bool) -> f64 {
    let mut parts: Vec<Part> = buchholz_parts(t, i, false, as_games)
        .into_iter()
        .zip(t.rounds[i].iter().filter(|r| r.kind != Kind::Pending))
        .map(|(p, r)| Part {
            value: p.basis * r.points,
            ..p
        })
        .collect();
    for _ in 0..cut {
        if parts.len() <= 1 {
            break;
        }
        let low = parts.iter().map(|p| p.basis).fold(f64::INFINITY, f64::min);
        let least = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.basis == low)
            .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
            .map(|(k, p)| (k, p.value));
        let vur = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.vur)
            .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
            .map(|(k, p)| (k, p.value));
        let k = match (least, vur) {
            (Some((_, d)), Some((v, x))) if x >= d => Some(v),
            (Some((k, _)), _) => Some(k),
            (None, v) => v.map(|(k, _)| k),
        };
        if let Some(k) = k {
            parts.remove(k);
        }
    }
    parts.iter().map(|p| p.value).sum()
}

#[cfg(test)]
mod tests {
    use super::super::{Edition, Scoring, Settings, Standings, standings};
    use super::*;
    use crate::trf::{ByeCode, Cell, HalfPoints, TrfPlayer, TrfTournament};

    fn g(opponent: u32, colour: Colour, o: Outcome) -> Cell {
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
                    rating: Some(2000 + 100 * i as u32),
                    points: None::<HalfPoints>,
                    cells,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn run(t: &Trf, codes: &str, edition: Edition) -> Standings {
        let s = Settings {
            tiebreaks: super::super::codes::parse_list(codes).expect("codes"),
            edition,
            ..Settings::default()
        };
        standings(t, &s)
    }

    /// (start rank, value of each code) by start rank.
    fn values(st: &Standings) -> Vec<(u32, Vec<f64>)> {
        let mut v: Vec<(u32, Vec<f64>)> = st
            .players
            .iter()
            .map(|p| {
                (
                    p.start_rank,
                    p.values.iter().map(|x| x.unwrap_or(f64::NAN)).collect(),
                )
            })
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }

    /// Four players, three rounds: a half-point bye followed by play, a pairing-allocated
    /// bye, a forfeit.
    fn with_byes() -> Trf {
        use Colour::*;
        use Outcome::*;
        trf(vec![
            vec![g(2, White, Win), g(3, Black, Win), g(4, White, Draw)],
            vec![
                g(1, Black, Loss),
                bye(ByeCode::Half),
                g(3, Neither, ForfeitWin),
            ],
            vec![
                g(4, White, Draw),
                g(1, White, Loss),
                g(2, Neither, ForfeitLoss),
            ],
            vec![g(3, Black, Draw), bye(ByeCode::Pairing), g(1, Black, Draw)],
        ])
    }

    #[test]
    fn article_16_in_both_editions() {
        let t = with_byes();
        let st = run(&t, "BH,BH/C1,SB,REP,WIN,WON,BPG", Edition::Fide2026);
        // 2026: the bye's stand-in is capped at a draw a round (1.5), the forfeit win's at
        // the opponent's score (0.5). A cut takes the half-point bye's part (a round the
        // player chose not to play) before the lower forfeit part.
        assert_eq!(
            values(&st),
            vec![
                (1, vec![4.0, 3.5, 3.0, 3.0, 2.0, 2.0, 1.0]),
                (2, vec![4.5, 3.0, 1.25, 2.0, 1.0, 0.0, 1.0]),
                (3, vec![5.0, 4.5, 1.0, 2.0, 0.0, 0.0, 0.0]),
                (4, vec![4.5, 4.0, 3.0, 3.0, 1.0, 0.0, 2.0]),
            ]
        );
        assert_eq!(
            st.players.iter().map(|p| p.games).collect::<Vec<_>>(),
            vec![3, 2, 1, 2]
        );
        // 2024: every unplayed round's stand-in has the player's own score.
        let st = run(&t, "BH,BH/C1", Edition::Fide2024);
        assert_eq!(
            values(&st),
            vec![
                (1, vec![4.0, 3.5]),
                (2, vec![5.5, 4.0]),
                (3, vec![5.0, 4.5]),
                (4, vec![5.0, 4.5]),
            ]
        );
    }

    #[test]
    fn a_late_bye_is_a_draw_for_the_opponents() {
        use Colour::*;
        use Outcome::*;
        // 2 loses to 1 and then withdraws (blank): for 1's Buchholz, 2 has 0 + ½ + ½.
        let t = trf(vec![
            vec![g(2, White, Win), g(3, White, Win), g(3, Black, Draw)],
            vec![g(1, Black, Loss), Cell::Blank, Cell::Blank],
            vec![bye(ByeCode::Pairing), g(1, Black, Loss), g(1, White, Draw)],
        ]);
        let st = run(&t, "BH", Edition::Fide2024);
        assert_eq!(values(&st)[0], (1, vec![1.0 + 1.5 + 1.5]));
        // 2's own Buchholz: 1's score, then own score (0) twice.
        assert_eq!(values(&st)[1], (2, vec![2.5]));
    }

    /// Four players all playing all: C beats A, so C is ahead of A on direct encounter
    /// though A has the lower start rank; B and D are equal and B beat D.
    fn round_robin() -> Trf {
        use Colour::*;
        use Outcome::*;
        trf(vec![
            vec![g(2, White, Win), g(3, Black, Loss), g(4, White, Win)],
            vec![g(1, Black, Loss), g(4, White, Win), g(3, Black, Loss)],
            vec![g(4, White, Loss), g(1, White, Win), g(2, White, Win)],
            vec![g(3, Black, Win), g(2, Black, Loss), g(1, Black, Loss)],
        ])
    }

    fn order(st: &Standings) -> Vec<u32> {
        st.players.iter().map(|p| p.start_rank).collect()
    }

    #[test]
    fn equal_players_go_by_start_rank_or_direct_encounter() {
        let t = round_robin();
        let st = run(&t, "", Edition::Fide2026);
        assert_eq!(order(&st), vec![1, 3, 2, 4]);
        assert_eq!(
            st.players.iter().map(|p| p.rank).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        let st = run(&t, "DE", Edition::Fide2026);
        assert_eq!(order(&st), vec![3, 1, 2, 4]);
        assert_eq!(st.players[0].values, vec![None]);
        // TPN has no number either, and orders by start rank.
        let st = run(&t, "TPN,DE", Edition::Fide2026);
        assert_eq!(order(&st), vec![1, 3, 2, 4]);
    }

    #[test]
    fn direct_encounter_when_not_all_met() {
        use Colour::*;
        use Outcome::*;
        // 1, 2 and 3 on 2 points; 3 beat both, who never met: 3 is first whatever their
        // missing game would have given; 1 and 2 stay equal (start rank).
        let t = trf(vec![
            vec![
                g(3, Black, Loss),
                g(4, White, Win),
                g(5, White, Win),
                Cell::Blank,
            ],
            vec![
                g(4, White, Win),
                g(3, Black, Loss),
                Cell::Blank,
                g(5, White, Win),
            ],
            vec![g(1, White, Win), g(2, White, Win), Cell::Blank, Cell::Blank],
            vec![
                g(2, Black, Loss),
                g(1, Black, Loss),
                Cell::Blank,
                Cell::Blank,
            ],
            vec![
                Cell::Blank,
                Cell::Blank,
                g(1, Black, Loss),
                g(2, Black, Loss),
            ],
        ]);
        assert_eq!(order(&run(&t, "", Edition::Fide2026)), vec![1, 2, 3, 4, 5]);
        assert_eq!(
            order(&run(&t, "DE", Edition::Fide2026)),
            vec![3, 1, 2, 4, 5]
        );
    }

    #[test]
    fn three_one_zero() {
        let mut t = round_robin();
        t.tournament = TrfTournament {
            scoring: Some(" W 3.0    D 1.0    L 0.0".into()),
            ..Default::default()
        };
        // One draw, so the scoring shows: 2 and 3 draw their game.
        t.players[1].cells[2] = g(3, Colour::Black, Outcome::Draw);
        t.players[2].cells[2] = g(2, Colour::White, Outcome::Draw);
        let s = Settings {
            scoring: Scoring::from_trf(&t.tournament),
            tiebreaks: super::super::codes::parse_list("WIN,PS,KS").expect("codes"),
            ..Settings::default()
        };
        let st = standings(&t, &s);
        let pts: Vec<(u32, f64)> = st
            .players
            .iter()
            .map(|p| (p.start_rank, p.points))
            .collect();
        // 1: 3+0+3; 3: 0+3+1; 2: 0+3+1; 4: 3+0+0 (3 ahead of 2 by Koya, below).
        assert_eq!(pts, vec![(1, 6.0), (3, 4.0), (2, 4.0), (4, 3.0)]);
        // 2 and 3: one win each; PS 0+3+4 = 7 and 0+3+4 = 7; Koya: opponents with at least
        // half of 9 (4.5): only 1, whom 3 beat (3 points) and 2 lost to.
        let v = values(&st);
        assert_eq!(v[1], (2, vec![1.0, 7.0, 0.0]));
        assert_eq!(v[2], (3, vec![1.0, 7.0, 3.0]));
        assert_eq!(order(&st), vec![1, 3, 2, 4]);
    }

    #[test]
    fn rating_codes_and_team_codes() {
        let t = round_robin();
        let st = run(&t, "ARO,ARO/C1,TPR,RTNG,BH:MP,MP", Edition::Fide2026);
        let v = values(&st);
        // 1 (2000) met 2100, 2200, 2300: average 2200; without the lowest 2250; 2 of 3 is
        // 0.67, +125.
        assert_eq!(v[0].1[..4], [2200.0, 2250.0, 2325.0, 2000.0]);
        assert!(v[0].1[4].is_nan() && v[0].1[5].is_nan());
    }
}
