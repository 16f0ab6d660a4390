//! A player's page: their line of the standings, every game of the event with its opponent,
//! result and link, their performance and rating change (FIDE's rating formula with their K,
//! in their standings line), and their games as PGN.

use super::error::ApiError;
use super::extract::{Path, Reader, Segment};
use super::standings::{StandingRow, StandingsAnswer, StandingsCache, standings_for};
use crate::serve::id::TournamentId;
use crate::serve::lookup::Lookup;
use axum::Json;
use axum::extract::State;
use relay_store::GameId;
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;

/// A player's opponent, as the page names them.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Opponent {
    pub start_rank: u32,
    pub name: String,
    pub title: Option<String>,
    pub rating: Option<u32>,
    pub federation: Option<String>,
}

/// One round of a player's event.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PlayerGame {
    pub round: u32,
    pub board: Option<u32>,
    pub game_id: Option<GameId>,
    /// "w", "b", or none (a bye, a forfeit without colours).
    pub colour: Option<&'static str>,
    /// None for a bye.
    pub opponent: Option<Opponent>,
    /// As a crosstable cell shows it ("1", "½", "0", "+", "-", a bye's letter, "" not yet).
    pub result: String,
    pub points: f64,
}

/// A player's page: their standings line (its count of games as `games_played`: `games` is
/// the list here) and every round of the event.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PlayerAnswer {
    pub rank: u32,
    pub start_rank: u32,
    pub name: String,
    pub title: Option<String>,
    pub rating: Option<u32>,
    pub federation: Option<String>,
    pub fide_id: Option<u64>,
    pub team: Option<String>,
    pub points: f64,
    /// One per code of `tiebreak_codes`.
    pub tiebreaks: Vec<Option<f64>>,
    pub tiebreak_codes: Vec<String>,
    /// Games played over the board.
    pub games_played: u32,
    pub performance: Option<f64>,
    pub k: Option<u32>,
    pub rating_change: Option<f64>,
    pub photo: Option<String>,
    /// Every round paired so far, the newest one's game without a result yet.
    pub games: Vec<PlayerGame>,
    pub photo_credit: Option<String>,
    pub spoiler_free_default: bool,
}

impl PlayerAnswer {
    fn of(row: &StandingRow, games: Vec<PlayerGame>, a: &StandingsAnswer) -> PlayerAnswer {
        PlayerAnswer {
            rank: row.rank,
            start_rank: row.start_rank,
            name: row.name.clone(),
            title: row.title.clone(),
            rating: row.rating,
            federation: row.federation.clone(),
            fide_id: row.fide_id,
            team: row.team.clone(),
            points: row.points,
            tiebreaks: row.tiebreaks.clone(),
            tiebreak_codes: a.tiebreaks.clone(),
            games_played: row.games,
            performance: row.performance,
            k: row.k,
            rating_change: row.rating_change,
            photo: row.photo.clone(),
            games,
            photo_credit: a.photo_credit.clone(),
            spoiler_free_default: a.spoiler_free_default,
        }
    }
}

/// A player's start rank in a tournament's path: a positive number, else nobody (404).
#[derive(Clone, Copy, Debug)]
pub struct StartRank(pub u32);

impl Segment for StartRank {
    fn from_segment(s: &str) -> Result<Self, ApiError> {
        s.parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .map(StartRank)
            .ok_or_else(|| ApiError::NotFound(format!("no player has start rank {s:?}")))
    }
}

pub async fn get_player(
    State(lookup): State<Lookup>,
    State(cache): State<Arc<StandingsCache>>,
    Path((id, start_rank)): Path<(TournamentId, StartRank)>,
    reader: Reader,
) -> Result<Json<PlayerAnswer>, ApiError> {
    let start_rank = start_rank.0;
    let a = standings_for(&lookup, &cache, id, None, reader).await?;
    let row = a
        .players
        .iter()
        .find(|r| r.start_rank == start_rank)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "tournament {id} has no player with start rank {start_rank}"
            ))
        })?;
    let games = row
        .rounds
        .iter()
        .map(|c| PlayerGame {
            round: c.round,
            board: c.board,
            game_id: c.game_id,
            colour: c.colour,
            opponent: c.opponent.and_then(|o| {
                let q = a.players.iter().find(|r| r.start_rank == o)?;
                Some(Opponent {
                    start_rank: o,
                    name: q.name.clone(),
                    title: q.title.clone(),
                    rating: q.rating,
                    federation: q.federation.clone(),
                })
            }),
            result: c.result.clone(),
            points: c.points,
        })
        .collect();
    Ok(Json(PlayerAnswer::of(row, games, &a)))
}
