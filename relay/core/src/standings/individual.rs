//! The players' tie-breaks. (Stub: being written.)

use super::{PlayerStanding, Settings};
use crate::trf::{Trf, total};

pub(super) fn rank_players(trf: &Trf, settings: &Settings, round: u32) -> Vec<PlayerStanding> {
    let mut v: Vec<PlayerStanding> = trf
        .players
        .iter()
        .map(|p| {
            let cells = &p.cells[..p.cells.len().min(round as usize)];
            PlayerStanding {
                start_rank: p.start_rank,
                rank: 0,
                points: total(cells).as_f64(),
                values: vec![None; settings.tiebreaks.len()],
                games: 0,
            }
        })
        .collect();
    v.sort_by(|a, b| b.points.total_cmp(&a.points).then(a.start_rank.cmp(&b.start_rank)));
    for (i, p) in v.iter_mut().enumerate() {
        p.rank = i as u32 + 1;
    }
    v
}
