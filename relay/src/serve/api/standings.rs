//! The tournament around the games: standings with FIDE's tie-breaks, the crosstable's cells,
//! a player's page and the same as CSV. Public; the public counts a result only once its
//! round's delay has passed since it was set, as points and moves already do.
//!
//! The standings are computed from relay's record made into a TRF (`Store::record_at`) by
//! `relay_core::standings`, at most once a second per tournament, round asked and audience:
//! results arriving faster are in the next computation, never one per move.

use super::error::ApiError;
use super::extract::{Path, Reader};
use crate::serve::id::TournamentId;
use crate::serve::lookup::Lookup;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_core::standings::{Scoring, Standings, rating, standings};
use relay_core::trf::{Cell, Colour, Outcome, Trf};
use relay_store::GameId;
use relay_store::{RankingTerms, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `?round=N`: the standings after round N (default: the last round with a result).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RoundQuery {
    round: Option<u32>,
}

/// One round of a player, as a crosstable cell shows it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RoundCell {
    pub round: u32,
    /// The opponent's start rank; none for a bye.
    pub opponent: Option<u32>,
    /// "w" or "b"; none for a bye or a forfeit without colours.
    pub colour: Option<&'static str>,
    /// "1", "½", "0", "+", "-" for a game (forfeits "+"/"-"); "H", "F", "U", "Z" for a bye
    /// ("+"/"-" with no opponent: a forfeit against nobody); "" not played yet.
    pub result: String,
    /// What it scored under the tournament's scoring.
    pub points: f64,
    pub game_id: Option<GameId>,
    pub board: Option<u32>,
}

/// A player's line of the standings.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StandingRow {
    pub rank: u32,
    pub start_rank: u32,
    pub name: String,
    pub title: Option<String>,
    pub rating: Option<u32>,
    pub federation: Option<String>,
    pub fide_id: Option<u64>,
    /// The team's name, in a team event.
    pub team: Option<String>,
    pub points: f64,
    /// One per code of `tiebreaks`, in its order; null where a code gives only an order.
    pub tiebreaks: Vec<Option<f64>>,
    /// Games played over the board.
    pub games: u32,
    /// Tournament performance rating (FIDE's TPR), when the player met rated opponents.
    pub performance: Option<f64>,
    /// FIDE's development coefficient for the player (40, 20 or 10; lowered so that K times
    /// the games is at most 700), when rated.
    pub k: Option<u32>,
    /// The rating change by FIDE's formula over the rated games played over the board.
    pub rating_change: Option<f64>,
    /// The photo's address, when the organiser gave one (`photos` with the FIDE id).
    pub photo: Option<String>,
    pub rounds: Vec<RoundCell>,
}

/// A team's match of one round.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TeamMatchRow {
    pub round: u32,
    /// The other team's number; none for a bye.
    pub opponent: Option<u32>,
    pub match_points: f64,
    pub game_points: f64,
    pub opponent_game_points: f64,
}

/// A team's line of the standings.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct TeamRow {
    pub rank: u32,
    pub number: u32,
    pub name: String,
    pub match_points: f64,
    pub game_points: f64,
    pub tiebreaks: Vec<Option<f64>>,
    /// Start ranks, in board order.
    pub players: Vec<u32>,
    pub matches: Vec<TeamMatchRow>,
}

/// A tournament's standings after a round.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StandingsAnswer {
    /// The last round counted (0 before any result).
    pub round: u32,
    /// Rounds the tournament has (planned, or paired so far when more).
    pub rounds: u32,
    pub round_robin: bool,
    /// The codes ranked by, in order (TRF-2026 record 202's form).
    pub tiebreaks: Vec<String>,
    /// By rank.
    pub players: Vec<StandingRow>,
    /// By rank; empty unless a team event.
    pub teams: Vec<TeamRow>,
    /// Shown under the players' photos.
    pub photo_credit: Option<String>,
    /// Whether pages open with results hidden until asked.
    pub spoiler_free_default: bool,
}

/// (round from 1, start rank) → (game id, board number), for the links.
type Boards = HashMap<(u32, u32), (GameId, u32)>;

/// Tournament, round asked, arbiter.
type CacheKey = (TournamentId, Option<u32>, bool);

/// Standings computed for one (tournament, round asked, arbiter) within the last second.
#[derive(Default)]
pub struct StandingsCache {
    made: parking_lot::Mutex<HashMap<CacheKey, (Instant, Arc<StandingsAnswer>)>>,
}

impl StandingsCache {
    /// Drops what was computed for a tournament (its ranking changed: the next request
    /// computes again, not a second later).
    pub fn forget(&self, tournament: TournamentId) {
        self.made.lock().retain(|(t, _, _), _| *t != tournament);
    }
}

impl std::fmt::Debug for StandingsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StandingsCache")
    }
}

/// How long one computation serves everyone asking.
const FRESH: Duration = Duration::from_secs(1);

/// The letter or figure a crosstable cell shows, and what the cell scored (by the core's
/// reading of the scoring: one way to score a cell).
fn cell_text(c: &Cell, s: &Scoring) -> (String, f64) {
    let text = match c {
        Cell::Game {
            outcome: Some(o), ..
        } => match o {
            Outcome::Win | Outcome::ShortWin => "1",
            Outcome::Draw | Outcome::ShortDraw => "½",
            Outcome::Loss | Outcome::ShortLoss => "0",
            Outcome::ForfeitWin => "+",
            Outcome::ForfeitLoss => "-",
        }
        .to_string(),
        Cell::Game { outcome: None, .. } | Cell::Blank => String::new(),
        Cell::Bye { code, .. } => code.code().to_string(),
    };
    let points = match c {
        Cell::Game { outcome: None, .. } | Cell::Blank => 0.0,
        _ => s.of_cell(c),
    };
    (text, points)
}

/// The tournament's record as the reader may see it (the public: as of each round's delay),
/// with how it is ranked.
pub(super) async fn record_for(
    lookup: &Lookup,
    id: TournamentId,
    reader: Reader,
) -> Result<(Trf, Boards, RankingTerms), ApiError> {
    let t = lookup.store.tournament(id).await?;
    let mut cutoffs = HashMap::new();
    for r in &t.rounds {
        if let (Some(c), _) = lookup.cutoff(r, reader.arbiter).await? {
            cutoffs.insert(r.id, c);
        }
    }
    let (trf, boards) = lookup.store.record_at(id, &cutoffs).await?;
    let terms = lookup.store.ranking_terms(id).await?;
    Ok((trf, boards, terms))
}

/// Builds the answer from the record and the core's standings.
pub(super) fn answer(
    trf: &Trf,
    terms: &RankingTerms,
    table: &Standings,
    boards: &Boards,
    asked: Option<u32>,
) -> StandingsAnswer {
    // After a round asked for: its rounds only; else every round paired, the newest one's
    // games without results yet, as a crosstable shows the round being played.
    let shown = asked.map_or(usize::MAX, |r| r as usize);
    let scoring = terms.scoring.clone().unwrap_or_default();
    let team_of: HashMap<u32, String> = trf
        .team_of()
        .into_iter()
        .map(|(p, t)| (p, t.name.clone()))
        .collect();
    // The tournament's year, for a young player's K.
    let year = trf
        .tournament
        .start_date
        .as_deref()
        .and_then(rating::birth_year);
    let players = table
        .players
        .iter()
        .filter_map(|row| {
            let p = trf.player(row.start_rank)?;
            let rounds = p
                .cells
                .iter()
                .take(shown)
                .enumerate()
                .map(|(i, c)| {
                    let round = i as u32 + 1;
                    let (result, points) = cell_text(c, &scoring);
                    let (opponent, colour) = match c {
                        Cell::Game {
                            opponent, colour, ..
                        } => (
                            Some(*opponent),
                            match colour {
                                Colour::White => Some("w"),
                                Colour::Black => Some("b"),
                                Colour::Neither => None,
                            },
                        ),
                        _ => (None, None),
                    };
                    let at = boards.get(&(round, p.start_rank));
                    RoundCell {
                        round,
                        opponent,
                        colour,
                        result,
                        points,
                        game_id: at.map(|a| a.0),
                        board: at.map(|a| a.1),
                    }
                })
                .collect();
            let change = rating::rating_change(trf, p.start_rank, table.round, year);
            Some(StandingRow {
                rank: row.rank,
                start_rank: row.start_rank,
                name: p.name.clone(),
                title: p.title.clone(),
                rating: p.rating,
                federation: p.federation.clone(),
                fide_id: p.fide_id,
                team: team_of.get(&p.start_rank).cloned(),
                points: row.points,
                tiebreaks: row.values.clone(),
                games: row.games,
                performance: performance(trf, p.start_rank, table.round),
                k: change.as_ref().map(|c| c.k),
                rating_change: change.map(|c| (c.total * 10.0).round() / 10.0),
                photo: terms.photo_of(p.fide_id),
                rounds,
            })
        })
        .collect();
    let teams = table
        .teams
        .iter()
        .filter_map(|row| {
            let t = trf.teams.iter().find(|t| t.number == row.number)?;
            Some(TeamRow {
                rank: row.rank,
                number: row.number,
                name: t.name.clone(),
                match_points: row.match_points,
                game_points: row.game_points,
                tiebreaks: row.values.clone(),
                players: t.players.clone(),
                matches: team_matches(row),
            })
        })
        .collect();
    StandingsAnswer {
        round: table.round,
        rounds: trf
            .tournament
            .rounds_planned
            .unwrap_or(0)
            .max(trf.rounds() as u32),
        round_robin: terms.is_round_robin(trf),
        tiebreaks: terms.codes(trf),
        players,
        teams,
        photo_credit: terms.photo_credit.clone(),
        spoiler_free_default: terms.spoiler_free,
    }
}

/// A team's matches, round by round, as the core made them from the players' cells.
fn team_matches(row: &relay_core::standings::TeamStanding) -> Vec<TeamMatchRow> {
    row.matches
        .iter()
        .map(|m| TeamMatchRow {
            round: m.round,
            opponent: m.opponent,
            match_points: m.match_points,
            game_points: m.game_points,
            opponent_game_points: m.game_points_against,
        })
        .collect()
}

/// A player's tournament performance over the rounds covered (FIDE's TPR: the games played
/// over the board against rated opponents), when there is one.
fn performance(trf: &Trf, start_rank: u32, round: u32) -> Option<f64> {
    let p = trf.player(start_rank)?;
    let games: Vec<rating::RatedGame> = p
        .cells
        .iter()
        .take(round as usize)
        .filter_map(|c| match *c {
            Cell::Game {
                opponent,
                outcome: Some(o),
                ..
            } => {
                let score = match o {
                    Outcome::Win => 1.0,
                    Outcome::Draw => 0.5,
                    Outcome::Loss => 0.0,
                    _ => return None,
                };
                Some(rating::RatedGame {
                    score,
                    opponent: trf.player(opponent)?.rating?,
                })
            }
            _ => None,
        })
        .collect();
    rating::performance(&games).map(|v| v as f64)
}

/// The standings of a tournament for `reader`, from the last second's computation when
/// there is one.
pub(super) async fn standings_for(
    lookup: &Lookup,
    cache: &StandingsCache,
    id: TournamentId,
    round: Option<u32>,
    reader: Reader,
) -> Result<Arc<StandingsAnswer>, ApiError> {
    let key = (id, round, reader.arbiter);
    if let Some((at, a)) = cache.made.lock().get(&key)
        && at.elapsed() < FRESH
    {
        return Ok(a.clone());
    }
    let (trf, boards, terms) = match record_for(lookup, id, reader).await {
        Ok(r) => r,
        // A tournament not run from a file has no players: empty standings, not an error.
        Err(ApiError::Conflict(_)) => {
            return Ok(Arc::new(StandingsAnswer {
                round: 0,
                rounds: 0,
                round_robin: false,
                tiebreaks: Vec::new(),
                players: Vec::new(),
                teams: Vec::new(),
                photo_credit: None,
                spoiler_free_default: false,
            }));
        }
        Err(e) => return Err(e),
    };
    let settings = terms.settings(&trf, round)?;
    // The computation is CPU work of some milliseconds for a large Swiss: off the async threads.
    let a = tokio::task::spawn_blocking(move || {
        let table = standings(&trf, &settings);
        answer(&trf, &terms, &table, &boards, round)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("standings: {e}")))?;
    let a = Arc::new(a);
    let mut made = cache.made.lock();
    // Old entries of other tournaments and rounds go when they are stale.
    made.retain(|_, (at, _)| at.elapsed() < FRESH * 10);
    made.insert(key, (Instant::now(), a.clone()));
    Ok(a)
}

pub async fn get_standings(
    State(lookup): State<Lookup>,
    State(cache): State<Arc<StandingsCache>>,
    Path(id): Path<TournamentId>,
    Query(q): Query<RoundQuery>,
    reader: Reader,
) -> Result<Json<StandingsAnswer>, ApiError> {
    let a = standings_for(&lookup, &cache, id, q.round, reader).await?;
    Ok(Json((*a).clone()))
}

/// A CSV field: quoted when it holds a separator, a quote or a line end.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn number(v: f64) -> String {
    let r = (v * 10000.0).round() / 10000.0;
    format!("{r}")
}

fn csv_response(text: String, name: &str) -> Response {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    (StatusCode::OK, h, text).into_response()
}

/// The standings as CSV: rank, start rank, title, name, federation, rating, points, each
/// tie-break, games.
pub fn standings_csv_text(a: &StandingsAnswer) -> String {
    let mut out = String::from("rank,start_rank,title,name,federation,rating,fide_id,team,points");
    for c in &a.tiebreaks {
        out.push(',');
        out.push_str(&csv_field(c));
    }
    out.push_str(",games\r\n");
    for p in &a.players {
        let mut line = vec![
            p.rank.to_string(),
            p.start_rank.to_string(),
            csv_field(p.title.as_deref().unwrap_or("")),
            csv_field(&p.name),
            csv_field(p.federation.as_deref().unwrap_or("")),
            p.rating.map(|r| r.to_string()).unwrap_or_default(),
            p.fide_id.map(|r| r.to_string()).unwrap_or_default(),
            csv_field(p.team.as_deref().unwrap_or("")),
            number(p.points),
        ];
        line.extend(
            p.tiebreaks
                .iter()
                .map(|v| v.map(number).unwrap_or_default()),
        );
        line.push(p.games.to_string());
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    out
}

/// The crosstable as CSV: rank, name, points, then per round the opponent's rank, colour and
/// result (`12w1`, `3b½`, `H`; `12w` paired, not played yet).
pub fn crosstable_csv_text(a: &StandingsAnswer) -> String {
    let rank_of: HashMap<u32, u32> = a.players.iter().map(|p| (p.start_rank, p.rank)).collect();
    let mut out = String::from("rank,start_rank,name,points");
    let rounds = a.players.iter().map(|p| p.rounds.len()).max().unwrap_or(0);
    for r in 1..=rounds {
        out.push_str(&format!(",R{r}"));
    }
    out.push_str("\r\n");
    for p in &a.players {
        let mut line = vec![
            p.rank.to_string(),
            p.start_rank.to_string(),
            csv_field(&p.name),
            number(p.points),
        ];
        for r in 0..rounds {
            line.push(
                p.rounds
                    .get(r)
                    .map(|c| csv_field(&cross_cell(c, &rank_of)))
                    .unwrap_or_default(),
            );
        }
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    out
}

/// A crosstable cell: the opponent's rank, the colour and the result (`12w1`); a bye's letter.
pub fn cross_cell(c: &RoundCell, rank_of: &HashMap<u32, u32>) -> String {
    match c.opponent {
        Some(o) => format!(
            "{}{}{}",
            rank_of.get(&o).copied().unwrap_or(o),
            c.colour.unwrap_or("-"),
            c.result
        ),
        None => c.result.clone(),
    }
}

pub async fn standings_csv(
    State(lookup): State<Lookup>,
    State(cache): State<Arc<StandingsCache>>,
    Path(id): Path<TournamentId>,
    Query(q): Query<RoundQuery>,
    reader: Reader,
) -> Result<Response, ApiError> {
    let a = standings_for(&lookup, &cache, id, q.round, reader).await?;
    Ok(csv_response(
        standings_csv_text(&a),
        &format!("standings-{id}.csv"),
    ))
}

pub async fn crosstable_csv(
    State(lookup): State<Lookup>,
    State(cache): State<Arc<StandingsCache>>,
    Path(id): Path<TournamentId>,
    Query(q): Query<RoundQuery>,
    reader: Reader,
) -> Result<Response, ApiError> {
    let a = standings_for(&lookup, &cache, id, q.round, reader).await?;
    Ok(csv_response(
        crosstable_csv_text(&a),
        &format!("crosstable-{id}.csv"),
    ))
}

/// A tie-break code relay ranks by.
#[derive(Debug, Serialize, JsonSchema)]
pub struct KnownCode {
    pub code: String,
    pub name: String,
}

pub async fn list_tiebreaks() -> Json<Vec<KnownCode>> {
    Json(
        relay_store::known_codes()
            .into_iter()
            .map(|(code, name)| KnownCode { code, name })
            .collect(),
    )
}

/// How a tournament is ranked, as set (empty codes: relay's default, which the standings name).
pub async fn get_ranking(
    State(store): State<Store>,
    Path(id): Path<TournamentId>,
) -> Result<Json<RankingTerms>, ApiError> {
    Ok(Json(store.ranking_terms(id).await?))
}
