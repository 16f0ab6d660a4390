//! The teams' standings (C.07 Articles 11–13): each team's matches as its players' cells make
//! them (`rounds`), match points under the event's team scoring and game points under the
//! individual scoring, the team codes among the tournament's tie-breaks (`code`, `values`)
//! and the order they give (`order`).
//!
//! The primary score is match points; game points are the secondary score (`MPvGP`).
//! Individual codes in the list have no value for a team and break no tie between teams.
//! The team codes are computed alike under the 2024 and 2026 editions; the 2024 edition's
//! `ESB` is read as the opponent's match points times the game points made against it.
//!
//! Read as the referee library (tiebreak-core) reads them, C.07's text not being at hand, and
//! open to a check against it:
//! - Article 16 is not applied to teams: a round without a met opponent counts the team's own
//!   final score (no 2026 cap), opponents' scores are their plain totals (no late byes taken
//!   as draws), cuts take the least values (no unplayed rounds first).
//! - A chain (`EDET`…) goes on with the board codes over the whole event for any two teams
//!   the direct encounter left equal, whether or not they met.

mod code;
mod order;
mod rounds;
mod values;

use super::{Scoring, Settings, TeamScoring, TeamStanding};
use crate::trf::Trf;
use code::{Base, Score, TeamCode};
use rounds::{Kind, Round};
use std::collections::BTreeMap;

/// How a team's round went, as its page shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TeamMatchKind {
    /// At least one game was played at the board.
    Played,
    /// Every board won or lost by forfeit (against the team named, or against a team the
    /// file does not name).
    Forfeit,
    /// A team bye, from a [`TeamRoundRecord`].
    Bye,
    /// No match: an absence, or a bye or forfeited match the file records elsewhere.
    NoMatch,
}

/// Which team bye (TRF-2026 `240`: `F`, `H`, `Z`; `320`: the pairing-allocated bye).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TeamByeKind {
    Full,
    Half,
    Zero,
    Pairing,
}

/// What a team did in a round that its players' cells cannot say: TRF-2026's team records,
/// for [`team_standings`]. (The TRF reader does not keep them yet.)
#[derive(Clone, Debug, PartialEq)]
pub enum TeamRoundRecord {
    /// `240`, `320`: a bye and what it scores; ignored where the team had a match.
    Bye {
        round: u32,
        team: u32,
        kind: TeamByeKind,
        match_points: f64,
        game_points: f64,
    },
    /// `330`: a match forfeited, `winner` `None` for a double forfeit. The teams' boards
    /// (their `0000 - +` cells) stay as the cells have them; this names the opponents.
    ForfeitedMatch {
        round: u32,
        white: u32,
        black: u32,
        winner: Option<u32>,
    },
}

/// One round of a team.
#[derive(Clone, Debug, PartialEq)]
pub struct TeamMatchResult {
    /// From 1.
    pub round: u32,
    /// The other team's number; `None` for no match or a forfeit against a team the file
    /// does not name.
    pub opponent: Option<u32>,
    pub kind: TeamMatchKind,
    pub match_points: f64,
    pub game_points: f64,
    pub game_points_against: f64,
    /// The team's game points board by board, board 1 first, as many as a match has
    /// boards (the team's players in its board order; a board it left empty is not
    /// counted among them). A bye's are its game points shared over the boards, but a
    /// pairing-allocated bye's a win on each board, as C.07 12 counts it for the board codes.
    pub boards: Vec<f64>,
    /// Every board has a result (match points count only then).
    pub finished: bool,
}

/// Every team's rounds and totals, for the values and the order.
pub(crate) struct Event<'a> {
    rounds: BTreeMap<u32, Vec<Round>>,
    totals: BTreeMap<u32, (f64, f64)>,
    /// Boards of a match.
    width: usize,
    /// The last round covered.
    last: u32,
    primary: Score,
    scoring: &'a Scoring,
    team_scoring: &'a TeamScoring,
}

impl<'a> Event<'a> {
    fn new(trf: &Trf, settings: &'a Settings, last: u32, records: &[TeamRoundRecord]) -> Event<'a> {
        let (rounds, width) = rounds::team_rounds(
            trf,
            &settings.scoring,
            &settings.team_scoring,
            last,
            records,
        );
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
            width,
            last,
            primary: Score::Mp,
            scoring: &settings.scoring,
            team_scoring: &settings.team_scoring,
        }
    }

    fn teams(&self) -> impl Iterator<Item = u32> + '_ {
        self.rounds.keys().copied()
    }

    fn rounds(&self, team: u32) -> &[Round] {
        self.rounds.get(&team).map_or(&[], Vec::as_slice)
    }

    fn total(&self, team: u32, s: Score) -> f64 {
        let (mp, gp) = self.totals.get(&team).copied().unwrap_or((0.0, 0.0));
        match s {
            Score::Mp => mp,
            Score::Gp => gp,
        }
    }

    /// A code's value for `team`; `None` for the direct encounter, which orders a group and
    /// has no value of its own, and an SSSC whose normaliser comes to less than one.
    fn value(&self, team: u32, c: &TeamCode) -> Option<f64> {
        let p = c.forfeits_played;
        Some(match c.base {
            Base::Total(s) => self.total(team, s),
            Base::Secondary => self.total(team, self.primary.other()),
            Base::Esb(basis, scored) => self.esb(team, basis, scored, c.cut, p),
            Base::Ede(_) => return None,
            Base::Board(b) => self.board_value(team, b),
            Base::Sssc => return self.sssc(team, c.cut, c.k, c.fore, p),
            Base::Buchholz(s) => {
                values::cut_median(self.buchholz_parts(team, s, c.fore, p), c.cut, c.median)
                    .iter()
                    .sum()
            }
            Base::ForeBuchholz(s) => {
                values::cut_median(self.buchholz_parts(team, s, true, p), c.cut, c.median)
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
}

pub(super) fn rank_teams(trf: &Trf, settings: &Settings, round: u32) -> Vec<TeamStanding> {
    rank_teams_with(trf, settings, round, &[])
}

/// The teams' standings of `trf` after `settings.round` (or its last round with a result),
/// with the team records `records` the file has beside its cells.
pub fn team_standings(
    trf: &Trf,
    settings: &Settings,
    records: &[TeamRoundRecord],
) -> Vec<TeamStanding> {
    let round = settings
        .round
        .unwrap_or_else(|| super::last_round_with_result(trf));
    rank_teams_with(trf, settings, round, records)
}

fn rank_teams_with(
    trf: &Trf,
    settings: &Settings,
    round: u32,
    records: &[TeamRoundRecord],
) -> Vec<TeamStanding> {
    let ev = Event::new(trf, settings, round, records);
    let codes: Vec<Option<TeamCode>> = settings
        .tiebreaks
        .iter()
        .map(|c| code::team_code(c, ev.primary))
        .collect();
    let team_codes: Vec<TeamCode> = codes.iter().flatten().copied().collect();
    order::rank(&ev, &team_codes)
        .into_iter()
        .enumerate()
        .map(|(i, team)| TeamStanding {
            number: team,
            rank: i as u32 + 1,
            match_points: ev.total(team, Score::Mp),
            game_points: ev.total(team, Score::Gp),
            values: codes
                .iter()
                .map(|c| c.as_ref().and_then(|c| ev.value(team, c)))
                .collect(),
            matches: ev.rounds(team).iter().map(result_of).collect(),
        })
        .collect()
}

fn result_of(r: &Round) -> TeamMatchResult {
    TeamMatchResult {
        round: r.number,
        opponent: r.opponent,
        kind: match r.kind {
            Kind::Played => TeamMatchKind::Played,
            Kind::Forfeit => TeamMatchKind::Forfeit,
            Kind::Bye => TeamMatchKind::Bye,
            Kind::Unplayed => TeamMatchKind::NoMatch,
        },
        match_points: r.mp,
        game_points: r.gp,
        game_points_against: r.gp_against,
        boards: r.boards.clone(),
        finished: r.finished,
    }
}
