//! A file's round records (TRF-2026 `240`, `320`, `330`) as the team standings read them: a
//! team bye scores its match points by the team scoring and its game points as that many
//! boards won (`F`), drawn (`H`) or lost (`Z`); the pairing-allocated bye what `320` gives;
//! a forfeited match names its two teams and its winner.

use crate::standings::model::Settings;
use crate::standings::model::{TeamByeKind, TeamRoundRecord};
use crate::trf::{RoundRecord, Trf};

/// The team records of `trf` (none outside a team event).
pub(crate) fn team_records(trf: &Trf, settings: &Settings) -> Vec<TeamRoundRecord> {
    if trf.teams.is_empty() {
        return Vec::new();
    }
    // A bye is worth as many boards as a match has, as the team rounds count them.
    let (_, width) = super::rounds::team_rounds(
        trf,
        &settings.scoring,
        &settings.team_scoring,
        trf.rounds() as u32,
        &[],
    );
    let n = width as f64;
    let (t, s) = (&settings.team_scoring, &settings.scoring);
    let mut out = Vec::new();
    for r in &trf.round_records {
        match r {
            RoundRecord::Bye { kind, round, ids } => {
                let (kind, match_points, game_points) = match kind {
                    'F' => (TeamByeKind::Full, t.win, n * s.win),
                    'H' => (TeamByeKind::Half, t.draw, n * s.draw),
                    _ => (TeamByeKind::Zero, t.loss, 0.0),
                };
                for team in ids {
                    out.push(TeamRoundRecord::Bye {
                        round: *round,
                        team: *team,
                        kind,
                        match_points,
                        game_points,
                    });
                }
            }
            RoundRecord::PairingByes {
                match_points,
                game_points,
                teams,
            } => {
                for (i, team) in teams.iter().enumerate() {
                    if let Some(team) = team {
                        out.push(TeamRoundRecord::Bye {
                            round: i as u32 + 1,
                            team: *team,
                            kind: TeamByeKind::Pairing,
                            match_points: match_points.as_f64(),
                            game_points: game_points.as_f64(),
                        });
                    }
                }
            }
            RoundRecord::ForfeitedMatch {
                round,
                white,
                black,
                white_won,
            } => out.push(TeamRoundRecord::ForfeitedMatch {
                round: *round,
                white: *white,
                black: *black,
                winner: white_won.map(|w| if w { *white } else { *black }),
            }),
        }
    }
    out
}
