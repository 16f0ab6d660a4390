//! A tournament's record read back from the store: its players with their points, a round's
//! byes, its teams, and the whole as a TRF (what relay holds, each round's results cut at a
//! moment where asked), which the standings and the pairing program's file are made from.

use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId, TournamentId};
use crate::pool::{Store, on_pool};
use crate::trf::{RoundBye, TournamentPlayer, TournamentTeam, sex_text};
use relay_core::trf::{
    ByeCode, Cell, Colour, HalfPoints, Outcome, Sex, Trf, TrfPlayer, TrfTeam, TrfTournament, total,
};
use std::collections::{BTreeMap, HashMap};

/// A tournament's federation, arbiters, planned rounds, kind and round records (240, 320, 330).
type Extra = (
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
);

impl Store {
    /// The players of a tournament with the points relay's results give them; a round in
    /// `cutoffs` (round id → ms) counts only the results set by then (a delayed broadcast's
    /// public sees a result no sooner than its moves).
    pub async fn tournament_players(
        &self,
        tournament: TournamentId,
        cutoffs: &HashMap<RoundId, i64>,
    ) -> Result<Vec<TournamentPlayer>> {
        let trf = self.trf_at(tournament, cutoffs).await?;
        let teams: HashMap<u32, String> = trf
            .team_of()
            .into_iter()
            .map(|(p, t)| (p, t.name.clone()))
            .collect();
        Ok(trf
            .players
            .iter()
            .map(|p| TournamentPlayer {
                start_rank: p.start_rank,
                name: p.name.clone(),
                title: p.title.clone(),
                rating: p.rating,
                federation: p.federation.clone(),
                fide_id: p.fide_id,
                team: teams.get(&p.start_rank).cloned(),
                sex: sex_text(p.sex).map(str::to_string),
                birth: p.birth.clone(),
                points: p.points.unwrap_or_default().as_f64(),
            })
            .collect())
    }

    /// A round's byes, by start rank, with the players' names.
    pub async fn round_byes(&self, round: RoundId) -> Result<Vec<RoundBye>> {
        type Row = (i64, String, i64, Option<String>, Option<String>);
        let rows: Vec<Row> = on_pool!(self, pool => sqlx::query_as(
            "SELECT b.start_rank, b.code, b.half_points, p.name, t.name FROM byes b JOIN rounds r ON r.id = b.round_id
             LEFT JOIN players p ON p.tournament_id = r.tournament_id AND p.start_rank = b.start_rank
             LEFT JOIN teams t ON t.tournament_id = r.tournament_id AND t.number = p.team
             WHERE b.round_id = $1 ORDER BY b.start_rank")
            .bind(round).fetch_all(pool).await?);
        Ok(rows
            .into_iter()
            .map(|(r, code, half, name, team)| RoundBye {
                start_rank: u32::try_from(r).unwrap_or(0),
                code,
                points: half as f64 / 2.0,
                name,
                team,
            })
            .collect())
    }

    /// The teams of a team event, by number.
    pub async fn tournament_teams(&self, tournament: TournamentId) -> Result<Vec<TournamentTeam>> {
        let rows: Vec<(i64, String, Option<String>, String)> = on_pool!(self, pool => sqlx::query_as(
            "SELECT number, name, nickname, players FROM teams WHERE tournament_id = $1 ORDER BY number")
            .bind(tournament).fetch_all(pool).await?);
        Ok(rows
            .into_iter()
            .map(|(n, name, nickname, players)| TournamentTeam {
                number: u32::try_from(n).unwrap_or(0),
                name,
                nickname,
                players: players
                    .split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect(),
            })
            .collect())
    }

    /// The tournament as a TRF: its players with every round's game or bye as relay has it,
    /// their points by those results, and ranks by points (then start rank).
    pub async fn trf_of(&self, tournament: TournamentId) -> Result<Trf> {
        self.trf_at(tournament, &HashMap::new()).await
    }

    /// [`Store::trf_of`] with, for the rounds in `cutoffs`, only the results set by then.
    pub async fn trf_at(
        &self,
        tournament: TournamentId,
        cutoffs: &HashMap<RoundId, i64>,
    ) -> Result<Trf> {
        Ok(self.record_at(tournament, cutoffs).await?.0)
    }

    /// [`Store::trf_at`], and where each player's game of each round is: (round from 1,
    /// start rank) → (game id, board number), read in the same pass (the standings link
    /// every cell to its game).
    pub async fn record_at(
        &self,
        tournament: TournamentId,
        cutoffs: &HashMap<RoundId, i64>,
    ) -> Result<(Trf, HashMap<(u32, u32), (GameId, u32)>)> {
        let mut at_board = HashMap::new();
        let info = self.tournament(tournament).await?;
        type P = (
            i64,
            String,
            Option<String>,
            Option<String>,
            Option<i64>,
            Option<String>,
            Option<i64>,
            Option<String>,
        );
        let (extra, players): (Extra, Vec<P>) = on_pool!(self, pool => {
            let extra = sqlx::query_as("SELECT federation, arbiters, rounds_planned, kind, round_records FROM tournaments WHERE id = $1")
                .bind(tournament).fetch_one(pool).await?;
            let players = sqlx::query_as("SELECT start_rank, name, sex, title, rating, federation, fide_id, birth FROM players
                                          WHERE tournament_id = $1 ORDER BY start_rank")
                .bind(tournament).fetch_all(pool).await?;
            (extra, players)
        });
        if players.is_empty() {
            return Err(StoreError::Conflict(format!(
                "tournament {tournament} has no players from a pairing program's file: import its TRF first"
            )));
        }
        let teams = self.tournament_teams(tournament).await?;
        // Rounds numbered 1, 2, … as the file numbered them; others are not the file's.
        let mut rounds: Vec<(u32, &crate::model::RoundInfo)> = info
            .rounds
            .iter()
            .filter_map(|r| Some((r.number.parse::<u32>().ok().filter(|n| *n > 0)?, r)))
            .collect();
        rounds.sort_by_key(|(n, _)| *n);
        let count = rounds.last().map_or(0, |(n, _)| *n as usize);
        let mut cells: BTreeMap<u32, Vec<Cell>> = players
            .iter()
            .map(|p| (u32::try_from(p.0).unwrap_or(0), vec![Cell::Blank; count]))
            .collect();
        let mut round_dates = vec![None; count];
        for (n, r) in &rounds {
            let i = *n as usize - 1;
            round_dates[i] = r.date.clone();
            let games = self.round_results(r.id).await?;
            let any_game = games.iter().any(|g| g.pairing.white.start_rank.is_some());
            for g in &games {
                for sr in [g.pairing.white.start_rank, g.pairing.black.start_rank]
                    .into_iter()
                    .flatten()
                {
                    at_board.insert((*n, sr), (g.id, g.pairing.board_no));
                }
                let (Some(w), Some(b)) = (g.pairing.white.start_rank, g.pairing.black.start_rank)
                else {
                    continue;
                };
                // A result set after the round's cutoff is not known yet to whoever asks.
                let known = match (cutoffs.get(&r.id), g.result_at_ms) {
                    (Some(c), Some(at)) => at <= *c,
                    _ => true,
                };
                let result = if known { g.result.as_str() } else { "*" };
                let term = if known {
                    g.termination.as_deref().unwrap_or("")
                } else {
                    ""
                };
                let colourless = term == "forfeit, no colours";
                let forfeit = term.starts_with("forfeit");
                let short = term == "not played";
                let white_outcome = match (result, term) {
                    (_, "double forfeit") => Some(Outcome::ForfeitLoss),
                    ("1-0", _) if forfeit => Some(Outcome::ForfeitWin),
                    ("0-1", _) if forfeit => Some(Outcome::ForfeitLoss),
                    ("1-0", _) if short => Some(Outcome::ShortWin),
                    ("0-1", _) if short => Some(Outcome::ShortLoss),
                    ("1/2-1/2", _) if short => Some(Outcome::ShortDraw),
                    ("1-0", _) => Some(Outcome::Win),
                    ("0-1", _) => Some(Outcome::Loss),
                    ("1/2-1/2", _) => Some(Outcome::Draw),
                    _ => None,
                };
                let black_outcome = if term == "double forfeit" {
                    Some(Outcome::ForfeitLoss)
                } else {
                    white_outcome.map(Outcome::other)
                };
                let (cw, cb) = if colourless {
                    (Colour::Neither, Colour::Neither)
                } else {
                    (Colour::White, Colour::Black)
                };
                if let Some(c) = cells.get_mut(&w) {
                    c[i] = Cell::Game {
                        opponent: b,
                        colour: cw,
                        outcome: white_outcome,
                    };
                }
                if let Some(c) = cells.get_mut(&b) {
                    c[i] = Cell::Game {
                        opponent: w,
                        colour: cb,
                        outcome: black_outcome,
                    };
                }
            }
            for bye in self.round_byes(r.id).await? {
                let code = ByeCode::from_code(&bye.code).unwrap_or(ByeCode::Zero);
                if let Some(c) = cells.get_mut(&bye.start_rank) {
                    c[i] = Cell::Bye {
                        code,
                        points: HalfPoints((bye.points * 2.0) as u32),
                    };
                }
            }
            // In a round with games, nothing is an absence: written Z, as the text reads blank.
            if any_game {
                for c in cells.values_mut() {
                    if c[i] == Cell::Blank {
                        c[i] = Cell::Bye {
                            code: ByeCode::Zero,
                            points: HalfPoints::ZERO,
                        };
                    }
                }
            }
        }
        let mut out: Vec<TrfPlayer> = players
            .into_iter()
            .map(|p| {
                let rank = u32::try_from(p.0).unwrap_or(0);
                let cells = cells.remove(&rank).unwrap_or_default();
                let points = total(&cells);
                TrfPlayer {
                    start_rank: rank,
                    sex: match p.2.as_deref() {
                        Some("m") => Some(Sex::Male),
                        Some("w") => Some(Sex::Female),
                        _ => None,
                    },
                    title: p.3,
                    name: p.1,
                    rating: p.4.and_then(|v| u32::try_from(v).ok()),
                    federation: p.5,
                    fide_id: p.6.and_then(|v| u64::try_from(v).ok()),
                    birth: p.7,
                    points: Some(points),
                    rank: None,
                    cells,
                    line: 0,
                }
            })
            .collect();
        let mut order: Vec<(HalfPoints, u32)> = out
            .iter()
            .map(|p| (p.points.unwrap_or_default(), p.start_rank))
            .collect();
        order.sort_by_key(|(pts, r)| (std::cmp::Reverse(*pts), *r));
        let place: HashMap<u32, u32> = order
            .iter()
            .enumerate()
            .map(|(i, (_, r))| (*r, i as u32 + 1))
            .collect();
        for p in &mut out {
            p.rank = place.get(&p.start_rank).copied();
        }
        let (federation, arbiters, planned, kind, records) = extra;
        // Kept as the file wrote them: a line that no longer reads is left out, not fatal.
        let round_records = records
            .as_deref()
            .unwrap_or("")
            .lines()
            .filter_map(|l| {
                let chars: Vec<char> = l.chars().collect();
                relay_core::trf::read_record(&chars).ok().flatten()
            })
            .collect();
        let trf = Trf {
            tournament: TrfTournament {
                name: info.name,
                city: info.site,
                federation,
                start_date: info.start_date,
                end_date: info.end_date,
                arbiters: arbiters
                    .map(|a| a.lines().map(str::to_string).collect())
                    .unwrap_or_default(),
                time_control: info.time_control.clone(),
                time_control_code: None,
                rounds_planned: planned.and_then(|v| u32::try_from(v).ok()),
                round_dates,
                kind,
                ..Default::default()
            },
            players: out,
            teams: teams
                .into_iter()
                .map(|t| TrfTeam {
                    number: t.number,
                    name: t.name,
                    nickname: t.nickname,
                    players: t.players,
                })
                .collect(),
            round_records,
        };
        Ok((trf, at_board))
    }
}
