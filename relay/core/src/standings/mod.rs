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
//! - `individual`: the players' tie-breaks; `team`: the teams'; `rank`: ordering.

pub mod codes;
pub mod rating;
pub mod scoring;

mod article16;
mod individual;
mod rank;
mod team;

pub use codes::{Code, CodeError};
pub use scoring::{Scoring, TeamScoring};
pub use team::{TeamByeKind, TeamMatchKind, TeamMatchResult, TeamRoundRecord, team_standings};

use crate::trf::Trf;

/// Which edition of FIDE's tie-break regulations (C.07) the values follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Edition {
    /// In force since 1 March 2026.
    #[default]
    Fide2026,
    /// The 2024 edition, for a tournament that asks for it.
    Fide2024,
}

/// How a tournament is ranked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    pub scoring: Scoring,
    /// Match points in a team event (2/1/0 by default).
    pub team_scoring: TeamScoring,
    /// In order. In a team event the team codes rank the teams and the individual codes the
    /// players; a value a row cannot have (a team code on a player) is `None`.
    pub tiebreaks: Vec<Code>,
    pub edition: Edition,
    /// A round robin (Article 16's round-robin rules, Koya's meaning); else a Swiss.
    pub round_robin: bool,
    /// Standings after this round (from 1); `None`: the last round with any result.
    pub round: Option<u32>,
}

/// One player's line.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerStanding {
    pub start_rank: u32,
    /// 1, 2, 3 … each player their own (equal after every code: by start rank).
    pub rank: u32,
    pub points: f64,
    /// One per code of [`Settings::tiebreaks`], in its order.
    pub values: Vec<Option<f64>>,
    /// Games played over the board in the rounds covered (forfeits and byes not counted).
    pub games: u32,
}

/// One team's line.
#[derive(Clone, Debug, PartialEq)]
pub struct TeamStanding {
    pub number: u32,
    pub rank: u32,
    pub match_points: f64,
    pub game_points: f64,
    pub values: Vec<Option<f64>>,
    /// Every round covered, from round 1: the match, or no match.
    pub matches: Vec<TeamMatchResult>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Standings {
    /// The last round covered (0 before any result).
    pub round: u32,
    /// By rank.
    pub players: Vec<PlayerStanding>,
    /// By rank; empty unless the file has teams.
    pub teams: Vec<TeamStanding>,
}

/// The standings of `trf` after `settings.round` (or its last round with a result).
pub fn standings(trf: &Trf, settings: &Settings) -> Standings {
    let round = settings.round.unwrap_or_else(|| last_round_with_result(trf));
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
