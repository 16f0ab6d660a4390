//! The standings' data: the settings a tournament is ranked under and the lines it gives,
//! players' and teams', with a team's rounds as its line shows them. Below every module of
//! the standings that computes them, so that each can import these without importing the
//! module that uses it (the house rule against import circles).

use super::codes::Code;
use super::scoring::{Scoring, TeamScoring};

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
/// for [`team_standings`](super::team_standings). (The TRF reader does not keep them yet.)
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
