//! The teams' standings. (Stub: being written.)

use super::{Settings, TeamStanding};
use crate::trf::Trf;

pub(super) fn rank_teams(trf: &Trf, settings: &Settings, _round: u32) -> Vec<TeamStanding> {
    trf.teams
        .iter()
        .enumerate()
        .map(|(i, t)| TeamStanding {
            number: t.number,
            rank: i as u32 + 1,
            match_points: 0.0,
            game_points: 0.0,
            values: vec![None; settings.tiebreaks.len()],
        })
        .collect()
}
