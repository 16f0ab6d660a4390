//! A tournament's standings: points under its scoring, FIDE's tie-breaks (C.07, the edition in
//! force since 1 March 2026, and the 2024 edition where a tournament asks for it) and the
//! ranks they give, for players and, in a team event, for teams.
//!
//! The input is a [`Trf`]: a pairing program's file as read, or relay's own record of a
//! tournament made into one (the store's `trf_of`). Nothing here reads a database or a clock.
//!
//! - [`scoring`]: points for each kind of result (TRF-2026 `162`/`362`, TRF(x) `XXS`).
//! - [`codes`]: tie-break codes as record 202 writes them (`BH/C1`, `SB`, `BH:MP/C1/P`).
//! - `article16`: each round of a player as C.07 Article 16 sorts it (played, forfeit,
//!   which kind of bye) and what an unplayed round counts for in each tie-break.
//! - `model`: the settings and the standings' lines, below every module that computes them.
//! - `individual`: the players' tie-breaks; `team`: the teams'; `rank`: ordering.

pub mod codes;
pub mod rating;
pub mod scoring;

mod article16;
mod individual;
mod model;
mod rank;
mod team;

pub use codes::{Code, CodeError};
pub use model::{
    Edition, PlayerStanding, Settings, Standings, TeamByeKind, TeamMatchKind, TeamMatchResult,
    TeamRoundRecord, TeamStanding,
};
pub use scoring::{Scoring, TeamScoring};

use crate::trf::Trf;

/// The standings of `trf` after `settings.round` (or its last round with a result).
pub fn standings(trf: &Trf, settings: &Settings) -> Standings {
    let round = settings
        .round
        .unwrap_or_else(|| last_round_with_result(trf));
    let players = individual::rank_players(trf, settings, round);
    let teams = if trf.teams.is_empty() {
        Vec::new()
    } else {
        team::rank_teams(trf, settings, round)
    };
    Standings {
        round,
        players,
        teams,
    }
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
        .unwrap_or_else(|| last_round_with_result(trf));
    team::rank_teams_with(trf, settings, round, records)
}

/// The last round (from 1) in which any cell has a result (a played game or a bye); 0 when none.
pub fn last_round_with_result(trf: &Trf) -> u32 {
    use crate::trf::Cell;
    let mut last = 0;
    for p in &trf.players {
        for (i, c) in p.cells.iter().enumerate() {
            let done = match c {
                Cell::Game { outcome, .. } => outcome.is_some(),
                Cell::Bye { .. } => true,
                Cell::Blank => false,
            };
            if done {
                last = last.max(i as u32 + 1);
            }
        }
    }
    last
}
