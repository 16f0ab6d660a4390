//! FIDE's rating arithmetic, for the rating tie-breaks (C.07 Article 10) and a player's page:
//! the table from a fractional score to a rating difference, the table from a rating
//! difference to an expected score, tournament performance (TPR), perfect performance (PTP)
//! and the rating change a tournament brings (K × (score − expected) a game).
//!
//! Scores here are FIDE's 1/½/0 whatever the tournament's scoring: ratings know no other.
//! Expected scores are kept in hundredths, as the table gives them, so sums are exact.

use crate::trf::{Cell, Outcome, Trf};

/// Rating difference for a fractional score, by hundredths of a point a game (FIDE Rating
/// Regulations, table 8.1a): index p → dp.
const DP: [i32; 101] = [
    -800, -677, -589, -538, -501, -470, -444, -422, -401, -383, -366, -351, -336, -322, -309, -296,
    -284, -273, -262, -251, -240, -230, -220, -211, -202, -193, -184, -175, -166, -158, -149, -141,
    -133, -125, -117, -110, -102, -95, -87, -80, -72, -65, -57, -50, -43, -36, -29, -21, -14, -7,
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65, 72, 80, 87, 95, 102, 110, 117, 125, 133, 141, 149, 158,
    166, 175, 184, 193, 202, 211, 220, 230, 240, 251, 262, 273, 284, 296, 309, 322, 336, 351, 366,
    383, 401, 422, 444, 470, 501, 538, 589, 677, 800,
];

/// The highest rating difference of each step of table 8.1b; the step's index is the
/// favourite's expected score above 50, in hundredths (0–3 points apart: 50, 4–10: 51 …).
const PD_UPPER: [u32; 50] = [
    3, 10, 17, 25, 32, 39, 46, 53, 61, 68, 76, 83, 91, 98, 106, 113, 121, 129, 137, 145, 153, 162,
    170, 179, 188, 197, 206, 215, 225, 235, 245, 256, 267, 278, 290, 302, 315, 328, 344, 357, 374,
    391, 411, 432, 456, 484, 517, 559, 619, 735,
];

/// Expected score, in hundredths, of a player `diff` rating points above (or, negative,
/// below) the opponent, by table 8.1b with no cap on the difference.
pub fn expected_hundredths(diff: i32) -> u32 {
    let d = diff.unsigned_abs();
    let step = PD_UPPER
        .iter()
        .position(|&u| d <= u)
        .map_or(50, |i| i as u32);
    if diff >= 0 { 50 + step } else { 50 - step }
}

/// Expected score of `own` against `opponent` as the rating change uses it: a difference of
/// more than 400 points counts as 400.
pub fn expected(own: u32, opponent: u32) -> f64 {
    let diff = (i64::from(own) - i64::from(opponent)).clamp(-400, 400) as i32;
    f64::from(expected_hundredths(diff)) / 100.0
}

/// Rounds to the nearest whole number, a half up (C.07's "0.5 rounded up").
pub fn round_half_up(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

/// A game as the rating tie-breaks see it: the points (1, ½, 0) and the opponent's rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatedGame {
    pub score: f64,
    pub opponent: u32,
}

/// The average rating of the opponents, a half rounded up; `None` without any.
pub fn average_rating(games: &[RatedGame]) -> Option<i64> {
    if games.is_empty() {
        return None;
    }
    let sum: u64 = games.iter().map(|g| u64::from(g.opponent)).sum();
    Some(round_half_up(sum as f64 / games.len() as f64))
}

/// Tournament performance rating: the opponents' average rating (rounded) plus the
/// difference table 8.1a gives the fraction scored (rounded to hundredths, a half up).
pub fn performance(games: &[RatedGame]) -> Option<i64> {
    let aro = average_rating(games)?;
    let points: f64 = games.iter().map(|g| g.score).sum();
    let p = round_half_up(points / games.len() as f64 * 100.0).clamp(0, 100) as usize;
    Some(aro + i64::from(DP[p]))
}

/// Perfect tournament performance: the lowest rating whose expected score against these
/// opponents (table 8.1b, no cap) is at least the points scored; 800 below the lowest
/// opponent for no points.
pub fn perfect_performance(games: &[RatedGame]) -> Option<i64> {
    let lowest = i64::from(games.iter().map(|g| g.opponent).min()?);
    let highest = i64::from(games.iter().map(|g| g.opponent).max()?);
    // In hundredths, exactly: every table value is a whole number of hundredths.
    let target: i64 = games.iter().map(|g| round_half_up(g.score * 100.0)).sum();
    if target <= 0 {
        return Some(lowest - 800);
    }
    let reach = |r: i64| -> i64 {
        games
            .iter()
            .map(|g| {
                let diff = (r - i64::from(g.opponent)).clamp(-10_000, 10_000) as i32;
                i64::from(expected_hundredths(diff))
            })
            .sum()
    };
    // The expected score grows with the rating: the lowest that reaches it, by halving.
    let (mut lo, mut hi) = (lowest - 800, highest + 800);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if reach(mid) >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// FIDE's development coefficient: 40 for a player under 2300 until the end of the year of
/// their 18th birthday, 10 once rated 2400 or more, else 20. `birth_year` and `year` (of the
/// tournament) decide the age; without them the player is taken as an adult.
pub fn k_factor(rating: u32, birth_year: Option<i32>, year: Option<i32>) -> u32 {
    let young = matches!((birth_year, year), (Some(b), Some(y)) if y - b <= 18);
    if young && rating < 2300 {
        40
    } else if rating >= 2400 {
        10
    } else {
        20
    }
}

/// The year of a birth date as files write it (`1987/07/05`, `1978`, `01.01.1987`).
pub fn birth_year(birth: &str) -> Option<i32> {
    birth
        .split(|c: char| !c.is_ascii_digit())
        .find(|p| p.len() == 4)
        .and_then(|p| p.parse().ok())
        .filter(|&y| y > 1800)
}

/// One rated game of a player's rating change.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingGame {
    pub round: u32,
    /// The opponent's start rank.
    pub opponent: u32,
    pub opponent_rating: u32,
    pub score: f64,
    pub expected: f64,
    /// K × (score − expected).
    pub change: f64,
}

/// What a tournament does to a player's rating.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingChange {
    pub rating: u32,
    pub k: u32,
    pub games: Vec<RatingGame>,
    /// The sum of the games' changes.
    pub total: f64,
}

/// The rating change of `start_rank` over the rounds up to `round`: every game played over
/// the board against a rated opponent, K by [`k_factor`] (lowered, as FIDE does, so that K
/// times the games is at most 700). `None` for an unrated player or one not in the file.
/// Games of less than one move and forfeits are not rated.
pub fn rating_change(
    trf: &Trf,
    start_rank: u32,
    round: u32,
    year: Option<i32>,
) -> Option<RatingChange> {
    let p = trf.player(start_rank)?;
    let rating = p.rating?;
    let mut games = Vec::new();
    for (i, c) in p.cells.iter().take(round as usize).enumerate() {
        let Cell::Game {
            opponent,
            outcome: Some(o),
            ..
        } = *c
        else {
            continue;
        };
        let score = match o {
            Outcome::Win => 1.0,
            Outcome::Draw => 0.5,
            Outcome::Loss => 0.0,
            _ => continue,
        };
        let Some(opp_rating) = trf.player(opponent).and_then(|o| o.rating) else {
            continue;
        };
        games.push(RatingGame {
            round: i as u32 + 1,
            opponent,
            opponent_rating: opp_rating,
            score,
            expected: expected(rating, opp_rating),
            change: 0.0,
        });
    }
    let mut k = k_factor(rating, p.birth.as_deref().and_then(birth_year), year);
    let n = games.len() as u32;
    if n > 0 && k * n > 700 {
        k = 700 / n;
    }
    let mut total = 0.0;
    for g in &mut games {
        g.change = f64::from(k) * (g.score - g.expected);
        total += g.change;
    }
    Some(RatingChange {
        rating,
        k,
        games,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(score: f64, opponent: u32) -> RatedGame {
        RatedGame { score, opponent }
    }

    #[test]
    fn the_tables() {
        assert_eq!(expected_hundredths(0), 50);
        assert_eq!(expected_hundredths(3), 50);
        assert_eq!(expected_hundredths(4), 51);
        assert_eq!(expected_hundredths(-4), 49);
        assert_eq!(expected_hundredths(735), 99);
        assert_eq!(expected_hundredths(736), 100);
        assert_eq!(expected_hundredths(-800), 0);
        // The 400-point cap of the rating change: 500 apart counts as 400 (0.92).
        assert_eq!(expected(2500, 2000), 0.92);
        assert_eq!(expected(2000, 2500), 0.08);
        assert_eq!(DP[50], 0);
        assert_eq!(DP[100], 800);
    }

    #[test]
    fn performances() {
        let games = [g(1.0, 2000), g(0.5, 2100), g(0.0, 2200)];
        assert_eq!(average_rating(&games), Some(2100));
        assert_eq!(performance(&games), Some(2100));
        // 2/3 → 0.67 → +125.
        let games = [g(1.0, 2000), g(1.0, 2100), g(0.0, 2201)];
        assert_eq!(average_rating(&games), Some(2100));
        assert_eq!(performance(&games), Some(2225));
        assert_eq!(
            perfect_performance(&[g(0.0, 1800), g(0.0, 1900)]),
            Some(1000)
        );
        assert_eq!(perfect_performance(&[g(0.5, 2000)]), Some(1997));
        assert_eq!(perfect_performance(&[g(1.0, 2000)]), Some(2736));
        assert_eq!(performance(&[]), None);
    }

    #[test]
    fn k_and_change() {
        assert_eq!(k_factor(2250, Some(2010), Some(2026)), 40);
        assert_eq!(k_factor(2350, Some(2010), Some(2026)), 20);
        assert_eq!(k_factor(2450, Some(2010), Some(2026)), 10);
        assert_eq!(k_factor(2250, Some(1990), Some(2026)), 20);
        assert_eq!(k_factor(2250, None, Some(2026)), 20);
        // The year of the 18th birthday still counts as young.
        assert_eq!(k_factor(2000, Some(2008), Some(2026)), 40);
        assert_eq!(k_factor(2000, Some(2007), Some(2026)), 20);
        assert_eq!(birth_year("1987/07/05"), Some(1987));
        assert_eq!(birth_year("01.01.1987"), Some(1987));
        assert_eq!(birth_year("1978"), Some(1978));
        assert_eq!(birth_year("n/a"), None);
    }

    #[test]
    fn a_players_change() {
        use crate::trf::{Colour, TrfPlayer};
        let game = |opponent, o| Cell::Game {
            opponent,
            colour: Colour::White,
            outcome: Some(o),
        };
        let p = |start_rank, rating, cells| TrfPlayer {
            start_rank,
            rating,
            cells,
            ..Default::default()
        };
        let t = Trf {
            players: vec![
                p(
                    1,
                    Some(2000),
                    vec![
                        game(2, Outcome::Win),
                        game(3, Outcome::Draw),
                        game(4, Outcome::Win),
                        game(2, Outcome::ForfeitWin),
                    ],
                ),
                p(2, Some(2100), vec![]),
                p(3, Some(2000), vec![]),
                p(4, None, vec![]),
            ],
            ..Default::default()
        };
        let c = rating_change(&t, 1, 4, Some(2026)).expect("rated");
        // Rated: the win against 2100 (expected 0.36) and the draw against 2000; the unrated
        // opponent and the forfeit are not.
        assert_eq!((c.k, c.games.len()), (20, 2));
        assert_eq!(c.games[0].expected, 0.36);
        assert!((c.total - 12.8).abs() < 1e-9, "{}", c.total);
        assert!(rating_change(&t, 4, 4, None).is_none());
        assert_eq!(
            rating_change(&t, 1, 1, None).map(|c| c.games.len()),
            Some(1)
        );
    }
}
