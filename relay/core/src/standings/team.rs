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
mod event;
mod order;
mod records;
mod rounds;
mod values;

use super::model::{Settings, TeamMatchKind, TeamMatchResult, TeamRoundRecord, TeamStanding};
use crate::trf::Trf;
use code::{Score, TeamCode};
use event::Event;
use rounds::{Kind, Round};

/// The teams' standings after `round`, with the file's team records (`240`, `320`, `330`)
/// that the players' cells cannot hold.
pub(super) fn rank_teams(trf: &Trf, settings: &Settings, round: u32) -> Vec<TeamStanding> {
    rank_teams_with(trf, settings, round, &records::team_records(trf, settings))
}

pub(super) fn rank_teams_with(
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
