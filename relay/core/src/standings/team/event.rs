//! Every team's rounds and totals as the values (`values`) and the order (`order`) read them,
//! below both: its methods here are the ones they share, each tie-break's its own in `values`.

use super::code::Score;
use super::rounds::{self, Round};
use crate::standings::model::{Settings, TeamRoundRecord};
use crate::standings::scoring::{Scoring, TeamScoring};
use crate::trf::Trf;
use std::collections::BTreeMap;

/// Every team's rounds and totals, for the values and the order.
pub(crate) struct Event<'a> {
    pub(super) rounds: BTreeMap<u32, Vec<Round>>,
    pub(super) totals: BTreeMap<u32, (f64, f64)>,
    /// Boards of a match.
    pub(super) width: usize,
    /// The last round covered.
    pub(super) last: u32,
    pub(super) primary: Score,
    pub(super) scoring: &'a Scoring,
    pub(super) team_scoring: &'a TeamScoring,
}

impl<'a> Event<'a> {
    pub(super) fn new(
        trf: &Trf,
        settings: &'a Settings,
        last: u32,
        records: &[TeamRoundRecord],
    ) -> Event<'a> {
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

    pub(super) fn teams(&self) -> impl Iterator<Item = u32> + '_ {
        self.rounds.keys().copied()
    }

    pub(super) fn rounds(&self, team: u32) -> &[Round] {
        self.rounds.get(&team).map_or(&[], Vec::as_slice)
    }

    pub(super) fn total(&self, team: u32, s: Score) -> f64 {
        let (mp, gp) = self.totals.get(&team).copied().unwrap_or((0.0, 0.0));
        match s {
            Score::Mp => mp,
            Score::Gp => gp,
        }
    }
}
