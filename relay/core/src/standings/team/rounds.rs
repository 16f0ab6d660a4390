//! What each team did in each round, made from its players' cells.
//!
//! A TRF has no match lines: a team's match in a round is the games its players had against
//! the players of one other team. Read here:
//! - A game against a player of another team is a board of the match against that team; its
//!   game points are the board's result under the individual scoring (a forfeit, `+`/`-`
//!   beside an opponent, as a forfeit win or loss; a double forfeit as two forfeit losses).
//! - A forfeit win against nobody (`0000 - +`) is a board the team won without an opponent
//!   at the board (the other team left it empty): a game point of the team's match of that
//!   round. A team with such boards and no game at all won its match by forfeit against a
//!   team the file does not name (TRF-2026 keeps that in its `330` record).
//! - `0000 - -` is a team's reserve sitting out, or a board left empty: no board, no point.
//!   Other byes of single players are not team results.
//! - A team with no board in a round had no match: nothing scored, opponent unknown (its
//!   bye, `240`/`320`, or its forfeited match, `330`, are records the reader does not keep).
//! - The boards of a match are numbered in the team's board order (its `310`/`013` line):
//!   the first of its players at a board is board 1.
//! - Match points follow once every board of the match has a result: more game points than
//!   the other team is a won match, as many a drawn one; a match of double forfeits only is
//!   lost by both.
//! - Team records given beside the file ([`TeamRoundRecord`]) then fill in what cells cannot
//!   say: a team bye in a round the team had no match, the two teams of a forfeited match.

use crate::standings::model::{TeamByeKind, TeamRoundRecord};
use crate::standings::scoring::{Scoring, TeamScoring};
use crate::trf::{ByeCode, Cell, Colour, Outcome, Trf};
use std::collections::{BTreeMap, HashMap};

/// How a team's round went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// At least one game of the match was played at the board (or is being played).
    Played,
    /// Every board was won or lost by forfeit: a match not played.
    Forfeit,
    /// A team bye (TRF-2026 `240`, `320`) with what it scored.
    Bye,
    /// No match: nothing scored.
    Unplayed,
}

/// One team's round.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Round {
    /// From 1.
    pub number: u32,
    pub kind: Kind,
    /// The other team; `None` when the file does not name one.
    pub opponent: Option<u32>,
    pub mp: f64,
    pub gp: f64,
    pub gp_against: f64,
    /// Game points by board, board 1 first, as many as the event has boards.
    pub boards: Vec<f64>,
    /// Every board has a result.
    pub finished: bool,
}

impl Round {
    /// A meeting with a known team that counts for the tie-breaks: played, or (`/P`:
    /// forfeits as played) forfeited.
    pub fn met(&self, forfeits_played: bool) -> Option<u32> {
        match self.kind {
            Kind::Played => self.opponent,
            Kind::Forfeit if forfeits_played => self.opponent,
            _ => None,
        }
    }
}

/// A board of a team in a round.
struct Board {
    /// The other team, `None` for a forfeit win against nobody.
    against: Option<u32>,
    points: f64,
    points_against: f64,
    played: bool,
    finished: bool,
}

fn other_colour(c: Colour) -> Colour {
    match c {
        Colour::White => Colour::Black,
        Colour::Black => Colour::White,
        Colour::Neither => Colour::Neither,
    }
}

/// Every team's rounds 1 ..= `last`, by team number; and the number of boards of a match
/// (the most any team had in one round).
pub(crate) fn team_rounds(
    trf: &Trf,
    scoring: &Scoring,
    team_scoring: &TeamScoring,
    last: u32,
    records: &[TeamRoundRecord],
) -> (BTreeMap<u32, Vec<Round>>, usize) {
    let team_of: HashMap<u32, u32> = trf
        .team_of()
        .into_iter()
        .map(|(p, t)| (p, t.number))
        .collect();
    // Each team's boards, per round.
    let mut boards: BTreeMap<u32, Vec<Vec<Board>>> = BTreeMap::new();
    for t in &trf.teams {
        let mut per_round = Vec::new();
        for r in 0..last as usize {
            let mut bs = Vec::new();
            for rank in &t.players {
                // A player in two teams plays for the first (`team_of`).
                if team_of.get(rank) != Some(&t.number) {
                    continue;
                }
                let Some(p) = trf.player(*rank) else { continue };
                match p.cells.get(r) {
                    Some(Cell::Game {
                        opponent,
                        outcome,
                        colour,
                    }) => {
                        let Some(&other) = team_of.get(opponent) else {
                            continue;
                        };
                        if other == t.number {
                            continue;
                        }
                        let theirs = trf.player(*opponent).and_then(|o| match o.cells.get(r) {
                            Some(Cell::Game {
                                outcome: Some(x),
                                colour,
                                ..
                            }) => Some((*x, *colour)),
                            _ => None,
                        });
                        bs.push(Board {
                            against: Some(other),
                            points: outcome.map_or(0.0, |o| scoring.of_outcome(o, *colour)),
                            // Their own cell says what they scored (a double forfeit is a
                            // loss for both).
                            points_against: theirs
                                .or(outcome.map(|o| (o.other(), other_colour(*colour))))
                                .map_or(0.0, |(o, c)| scoring.of_outcome(o, c)),
                            played: !matches!(
                                outcome,
                                Some(Outcome::ForfeitWin | Outcome::ForfeitLoss)
                            ),
                            finished: outcome.is_some(),
                        });
                    }
                    Some(Cell::Bye {
                        code: ByeCode::ForfeitWin,
                        ..
                    }) => bs.push(Board {
                        against: None,
                        points: scoring.forfeit_win,
                        points_against: scoring.forfeit_loss,
                        played: false,
                        finished: true,
                    }),
                    _ => {}
                }
            }
            per_round.push(bs);
        }
        boards.insert(t.number, per_round);
    }
    let width = boards
        .values()
        .flat_map(|rs| rs.iter().map(Vec::len))
        .max()
        .unwrap_or(0)
        .max(1);
    let mut out = BTreeMap::new();
    for (&team, rounds) in &boards {
        let mut v = Vec::with_capacity(rounds.len());
        for (r, bs) in rounds.iter().enumerate() {
            v.push(round_of(team, r, bs, &boards, width, team_scoring));
        }
        out.insert(team, v);
    }
    for rec in records {
        apply(&mut out, rec, width, scoring, team_scoring);
    }
    (out, width)
}

/// A team record put into the rounds made from the cells.
fn apply(
    out: &mut BTreeMap<u32, Vec<Round>>,
    rec: &TeamRoundRecord,
    width: usize,
    scoring: &Scoring,
    ts: &TeamScoring,
) {
    match *rec {
        TeamRoundRecord::Bye {
            round,
            team,
            kind,
            match_points,
            game_points,
        } => {
            let Some(r) = round_mut(out, team, round) else {
                return;
            };
            if r.kind != Kind::Unplayed {
                return;
            }
            // C.07 12: a pairing-allocated bye counts a win on every board for the board
            // codes; another bye its game points shared out over the boards.
            let per_board = match kind {
                TeamByeKind::Pairing => scoring.win,
                _ => game_points / width as f64,
            };
            r.kind = Kind::Bye;
            r.mp = match_points;
            r.gp = game_points;
            r.boards = vec![per_board; width];
        }
        TeamRoundRecord::ForfeitedMatch {
            round,
            white,
            black,
            winner,
        } => {
            for (team, other) in [(white, black), (black, white)] {
                let Some(r) = round_mut(out, team, round) else {
                    continue;
                };
                if !matches!(r.kind, Kind::Forfeit | Kind::Unplayed) {
                    continue;
                }
                r.kind = Kind::Forfeit;
                r.opponent = Some(other);
                r.mp = if winner == Some(team) {
                    ts.win
                } else {
                    ts.loss
                };
            }
            // Each side's points against: the other's boards.
            let gp = |out: &BTreeMap<u32, Vec<Round>>, t: u32| {
                out.get(&t)
                    .and_then(|rs| rs.get(round.checked_sub(1)? as usize))
                    .map_or(0.0, |r| r.gp)
            };
            let (gw, gb) = (gp(out, white), gp(out, black));
            for (team, against) in [(white, gb), (black, gw)] {
                if let Some(r) = round_mut(out, team, round)
                    && r.kind == Kind::Forfeit
                {
                    r.gp_against = against;
                }
            }
        }
    }
}

fn round_mut(out: &mut BTreeMap<u32, Vec<Round>>, team: u32, round: u32) -> Option<&mut Round> {
    out.get_mut(&team)?.get_mut(round.checked_sub(1)? as usize)
}

fn round_of(
    team: u32,
    r: usize,
    bs: &[Board],
    all: &BTreeMap<u32, Vec<Vec<Board>>>,
    width: usize,
    ts: &TeamScoring,
) -> Round {
    let number = r as u32 + 1;
    if bs.is_empty() {
        return Round {
            number,
            kind: Kind::Unplayed,
            opponent: None,
            mp: 0.0,
            gp: 0.0,
            gp_against: 0.0,
            boards: vec![0.0; width],
            finished: true,
        };
    }
    // The other team: the one most boards were against (one, unless the file is odd).
    let mut count: BTreeMap<u32, usize> = BTreeMap::new();
    for b in bs {
        if let Some(o) = b.against {
            *count.entry(o).or_default() += 1;
        }
    }
    let opponent = count
        .iter()
        .max_by_key(|(o, n)| (**n, std::cmp::Reverse(**o)))
        .map(|(o, _)| *o);
    let mine: Vec<&Board> = bs
        .iter()
        .filter(|b| b.against.is_none() || b.against == opponent)
        .collect();
    let gp: f64 = mine.iter().map(|b| b.points).sum();
    // The other team's points: its boards against us and its forfeit wins against nobody
    // (the boards we left empty).
    let gp_against = match opponent {
        Some(o) => all.get(&o).and_then(|rs| rs.get(r)).map_or(0.0, |theirs| {
            theirs
                .iter()
                .filter(|b| b.against.is_none() || b.against == Some(team))
                .map(|b| b.points)
                .sum()
        }),
        None => mine.iter().map(|b| b.points_against).sum(),
    };
    let finished = mine.iter().all(|b| b.finished)
        && opponent.is_none_or(|o| {
            all.get(&o)
                .and_then(|rs| rs.get(r))
                .is_none_or(|theirs| theirs.iter().all(|b| b.finished))
        });
    let played = mine.iter().any(|b| b.played);
    let mp = if !finished {
        0.0
    } else if gp > gp_against {
        ts.win
    } else if gp < gp_against || (!played && gp == 0.0) {
        // A match nobody played and nobody won (every board a double forfeit) is lost by
        // both teams.
        ts.loss
    } else {
        ts.draw
    };
    let mut boards = vec![0.0; width];
    for (slot, b) in boards.iter_mut().zip(&mine) {
        *slot = b.points;
    }
    Round {
        number,
        kind: if played { Kind::Played } else { Kind::Forfeit },
        opponent,
        mp,
        gp,
        gp_against,
        boards,
        finished,
    }
}
