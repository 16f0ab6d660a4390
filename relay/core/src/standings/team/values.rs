//! The value of each team code for a team (C.07 Articles 11–13, the `:MP`/`:GP` forms of the
//! individual codes by Article 13's reuse of them), given every team's rounds.
//!
//! Readings taken where the articles leave a choice (the referee library reads them alike):
//! - A round without a met opponent (no match, a forfeit against a team the file does not
//!   name, a forfeited match without `/P`) counts in a Buchholz as an opponent with the
//!   team's own final score, as Article 16's dummy does for a player.
//! - The Sonneborn-Berger family sums over met opponents only; its `/C1` leaves out the
//!   opponent with the least score (of those, the least product), `/C2` does it again.
//! - Cuts and medians keep at least one contribution.
//! - The board codes use each board's game points over the whole event.

use super::code::{Base, Board, Score, TeamCode};
use super::event::Event;
use super::rounds::{Kind, Round};

impl Event<'_> {
    /// A code's value for `team`; `None` for the direct encounter, which orders a group and
    /// has no value of its own, and an SSSC whose normaliser comes to less than one.
    pub(super) fn value(&self, team: u32, c: &TeamCode) -> Option<f64> {
        let p = c.forfeits_played;
        Some(match c.base {
            Base::Total(s) => self.total(team, s),
            Base::Secondary => self.total(team, self.primary.other()),
            Base::Esb(basis, scored) => self.esb(team, basis, scored, c.cut, p),
            Base::Ede(_) => return None,
            Base::Board(b) => self.board_value(team, b),
            Base::Sssc => return self.sssc(team, c.cut, c.k, c.fore, p),
            Base::Buchholz(s) => {
                cut_median(self.buchholz_parts(team, s, c.fore, p), c.cut, c.median)
                    .iter()
                    .sum()
            }
            Base::ForeBuchholz(s) => {
                cut_median(self.buchholz_parts(team, s, true, p), c.cut, c.median)
                    .iter()
                    .sum()
            }
            Base::AverageBuchholz(s) => self.average_buchholz(team, s, p),
            Base::Wins(s) => self.wins(team, s, false),
            Base::Won(s) => self.wins(team, s, true),
            Base::Progressive(s) => self.progressive(team, s, c.cut),
            Base::Koya(s) => self.koya(team, s, c.limit_halves, p),
        })
    }

    /// The score `s` a round brought.
    pub fn scored(r: &Round, s: Score) -> f64 {
        match s {
            Score::Mp => r.mp,
            Score::Gp => r.gp,
        }
    }

    /// The most of score `s` one match can bring.
    pub fn match_max(&self, s: Score) -> f64 {
        match s {
            Score::Mp => self.team_scoring.win,
            Score::Gp => self.width as f64 * self.scoring.win,
        }
    }

    /// A team's total `s`, the last round's match taken as drawn with `fore`.
    fn total_for_opponents(&self, team: u32, s: Score, fore: bool) -> f64 {
        let mut v = self.total(team, s);
        if fore {
            let last = self
                .rounds(team)
                .iter()
                .find(|r| r.number == self.last && matches!(r.kind, Kind::Played | Kind::Forfeit));
            if let Some(r) = last {
                v += match s {
                    Score::Mp => self.team_scoring.draw - r.mp,
                    Score::Gp => self.width as f64 * self.scoring.draw - r.gp,
                };
            }
        }
        v
    }

    /// A Buchholz's contributions: each round's opponent's score, or the team's own for a
    /// round without a met opponent.
    pub fn buchholz_parts(&self, team: u32, s: Score, fore: bool, played: bool) -> Vec<f64> {
        self.rounds(team)
            .iter()
            .map(|r| match r.met(played) {
                Some(o) => self.total_for_opponents(o, s, fore),
                None => self.total(team, s),
            })
            .collect()
    }

    pub fn buchholz(&self, team: u32, s: Score, fore: bool, played: bool) -> f64 {
        self.buchholz_parts(team, s, fore, played).iter().sum()
    }

    /// Per met opponent: the opponent's `basis` score times the `scored` score made against
    /// it; `cut` times the opponent with the least basis (the least product of those) left
    /// out.
    pub fn esb(&self, team: u32, basis: Score, scored: Score, cut: u32, played: bool) -> f64 {
        let mut parts: Vec<(f64, f64)> = self
            .rounds(team)
            .iter()
            .filter_map(|r| {
                let o = r.met(played)?;
                let b = self.total(o, basis);
                Some((b, b * Self::scored(r, scored)))
            })
            .collect();
        for _ in 0..(cut as usize).min(parts.len().saturating_sub(1)) {
            let least = parts
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
                .map(|(i, _)| i);
            if let Some(i) = least {
                parts.remove(i);
            }
        }
        parts.iter().map(|(_, p)| p).sum()
    }

    /// SSSC: the secondary score plus the primary Buchholz (cut by `/Cn`) over the
    /// normaliser: the most primary score of the event over the most secondary score of a
    /// match, rounded down, unless `/Kn` gives it.
    pub fn sssc(
        &self,
        team: u32,
        cut: u32,
        k: Option<u32>,
        fore: bool,
        played: bool,
    ) -> Option<f64> {
        let primary = self.primary;
        let secondary = primary.other();
        let most = f64::from(self.last) * self.match_max(primary);
        let divisor = match k {
            Some(k) => f64::from(k),
            None => (most / self.match_max(secondary)).trunc(),
        };
        if divisor < 1.0 {
            return None;
        }
        let parts = cut_median(self.buchholz_parts(team, primary, fore, played), cut, 0);
        Some(self.total(team, secondary) + parts.iter().sum::<f64>() / divisor)
    }

    /// Game points on each board over the event, board 1 first.
    pub fn board_totals(&self, team: u32) -> Vec<f64> {
        let mut v = vec![0.0; self.width];
        for r in self.rounds(team) {
            for (t, b) in v.iter_mut().zip(&r.boards) {
                *t += b;
            }
        }
        v
    }

    /// A board code's key, compared element by element, lower first (lower is better).
    pub fn board_key(&self, team: u32, b: Board) -> Vec<f64> {
        let boards = self.board_totals(team);
        match b {
            Board::Count => vec![board_count(&boards)],
            Board::Top => boards.iter().map(|v| -v).collect(),
            Board::Bottom => (1..=boards.len())
                .map(|k| -boards[..boards.len() - k].iter().sum::<f64>())
                .collect(),
        }
    }

    /// A board code's value as shown: the count, the first board's points, or all boards
    /// but the last.
    pub fn board_value(&self, team: u32, b: Board) -> f64 {
        let boards = self.board_totals(team);
        match b {
            Board::Count => board_count(&boards),
            Board::Top => boards.first().copied().unwrap_or(0.0),
            Board::Bottom => boards[..boards.len().saturating_sub(1)].iter().sum(),
        }
    }

    /// Matches (and byes) that brought the whole of `s` (`played_only`: matches played at the
    /// board).
    pub fn wins(&self, team: u32, s: Score, played_only: bool) -> f64 {
        let whole = self.match_max(s);
        self.rounds(team)
            .iter()
            .filter(|r| match r.kind {
                Kind::Played => true,
                Kind::Forfeit | Kind::Bye => !played_only,
                Kind::Unplayed => false,
            })
            .filter(|r| (Self::scored(r, s) - whole).abs() < 1e-9)
            .count() as f64
    }

    /// The score after each round, summed, the first `cut` rounds' left out.
    pub fn progressive(&self, team: u32, s: Score, cut: u32) -> f64 {
        let mut running = 0.0;
        let mut sum = 0.0;
        for r in self.rounds(team) {
            running += Self::scored(r, s);
            if r.number > cut {
                sum += running;
            }
        }
        sum
    }

    /// The score made against met opponents who scored half the most one could or more
    /// (moved by `limit_halves` half points).
    pub fn koya(&self, team: u32, s: Score, limit_halves: i32, played: bool) -> f64 {
        let bar = f64::from(self.last) * self.match_max(s) / 2.0 + f64::from(limit_halves) * 0.5;
        self.rounds(team)
            .iter()
            .filter_map(|r| {
                let o = r.met(played)?;
                (self.total(o, s) >= bar - 1e-9).then(|| Self::scored(r, s))
            })
            .sum()
    }

    /// The met opponents' own Buchholz on `s`, averaged (0 with none).
    pub fn average_buchholz(&self, team: u32, s: Score, played: bool) -> f64 {
        let bhs: Vec<f64> = self
            .rounds(team)
            .iter()
            .filter_map(|r| r.met(played))
            .map(|o| self.buchholz(o, s, false, played))
            .collect();
        if bhs.is_empty() {
            0.0
        } else {
            bhs.iter().sum::<f64>() / bhs.len() as f64
        }
    }
}

fn board_count(boards: &[f64]) -> f64 {
    boards
        .iter()
        .enumerate()
        .map(|(i, v)| (i + 1) as f64 * v)
        .sum()
}

/// `v` less its `cut` least values, or its `median` least and greatest; at least one kept
/// (a median that would leave fewer than one leaves `v` as it is).
pub(super) fn cut_median(mut v: Vec<f64>, cut: u32, median: u32) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    let cut = (cut as usize).min(v.len().saturating_sub(1));
    v.drain(..cut);
    let m = median as usize;
    if m > 0 && v.len() > 2 * m {
        v.truncate(v.len() - m);
        v.drain(..m);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::cut_median;

    fn check(v: &[f64], cut: u32, median: u32, expected: &[f64]) {
        assert_eq!(cut_median(v.to_vec(), cut, median), expected);
    }

    #[test]
    fn cuts_and_medians_keep_one() {
        check(&[3.0, 1.0, 2.0], 1, 0, &[2.0, 3.0]);
        check(&[3.0, 1.0], 5, 0, &[3.0]);
        check(&[5.0, 1.0, 3.0], 0, 1, &[3.0]);
        check(&[5.0, 1.0], 0, 1, &[1.0, 5.0]);
    }
}
