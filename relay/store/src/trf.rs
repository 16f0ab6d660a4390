//! Tournaments run from a pairing program's file (FIDE's TRF): importing one, again after each
//! pairing, and writing the tournament back as TRF with relay's results.
//!
//! Importing is one transaction: the tournament's details, its players and teams, each round
//! of the file with its boards and byes, and an audit entry saying who imported what. What the
//! boards recorded is never overwritten: a game is matched to its pairing by the two players'
//! start ranks; a game with moves or a result keeps them, and a pairing that would put other
//! players on it is refused, naming the board, with nothing stored. A result the file has is
//! taken only by a game that has none. Games without moves that the file no longer pairs lose
//! their players (an empty board stays, as an e-board may sit on it).
//!
//! How results are kept: a forfeit is `1-0`/`0-1` with the termination `forfeit` (`forfeit,
//! no colours` when the file drew none), a double forfeit is `*` with `double forfeit`, and a
//! game of less than one move has `not played`; writing the TRF reads them back to `+`, `-`,
//! `W`, `D`, `L`.

use crate::batch::{Touched, bump, notify};
use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId, Seq, TournamentId};
use crate::pool::{Store, now_ms, on_pool};
use relay_core::trf::{
    Board, Cell, Outcome, RoundPlan, Sex, Trf, TrfPlayer, TrfTournament, differences, plan_rounds,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// A player of a tournament as the API lists them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentPlayer {
    pub start_rank: u32,
    pub name: String,
    pub title: Option<String>,
    pub rating: Option<u32>,
    pub federation: Option<String>,
    pub fide_id: Option<u64>,
    /// The team's name, in a team event.
    pub team: Option<String>,
    /// "m" or "w", as the file says.
    pub sex: Option<String>,
    pub birth: Option<String>,
    /// Points by the results relay has (games and byes), standard scoring.
    pub points: f64,
}

/// A bye of a round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundBye {
    pub start_rank: u32,
    /// H (half point), F (full point), U (pairing-allocated), Z (absent), + or - (forfeit
    /// without an opponent).
    pub code: String,
    pub points: f64,
    pub name: Option<String>,
    /// The player's team, in a team event (a forfeit won without an opponent is a game
    /// point of the team's match).
    pub team: Option<String>,
}

/// A team of a team event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentTeam {
    pub number: u32,
    pub name: String,
    pub nickname: Option<String>,
    /// Start ranks, in board order.
    pub players: Vec<u32>,
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TrfImported {
    pub tournament_id: TournamentId,
    pub players: usize,
    pub teams: usize,
    /// Round numbers made by this import.
    pub rounds_added: Vec<String>,
    pub games_added: usize,
    pub games_updated: usize,
    /// Results the file gave to games that had none.
    pub results_taken: usize,
    /// Results the file has that differ from what relay recorded: relay's kept.
    pub results_kept: Vec<String>,
    /// Pairings put on another board than the file's, as a game that stays was on theirs
    /// (an e-board's game begun before the file came): the arbiter decides.
    pub boards_moved: Vec<String>,
    pub byes: usize,
    /// The arbiter's check: every result and player's points on which the file and relay's
    /// record (after this import) disagree.
    pub differences: Vec<relay_core::trf::Difference>,
    /// (round id, game id, change number) of every game changed, to announce.
    #[serde(skip)]
    pub changed: Vec<(RoundId, GameId, Seq)>,
}

/// A game of a round as the import compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Existing {
    id: i64,
    board_no: u32,
    white: Option<u32>,
    black: Option<u32>,
    result: String,
    termination: Option<String>,
    moves: i64,
    /// The players as stored (names, titles, ratings, ids, federations, teams, match).
    identity: String,
}

impl Existing {
    fn recorded(&self) -> bool {
        self.moves > 0 || self.result != "*"
    }
}

/// What to do to one board.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Put {
    board_no: u32,
    white: u32,
    black: u32,
    /// Set the result (the game has none).
    result: Option<(&'static str, Option<&'static str>)>,
    new: bool,
}

/// The result and termination a board of the file stands for.
fn stored_result(b: &Board) -> Option<(&'static str, Option<&'static str>)> {
    let o = b.white_outcome?;
    if b.double_forfeit {
        return Some(("*", Some("double forfeit")));
    }
    let forfeit = if b.colourless {
        "forfeit, no colours"
    } else {
        "forfeit"
    };
    Some(match o {
        Outcome::Win => ("1-0", None),
        Outcome::Draw => ("1/2-1/2", None),
        Outcome::Loss => ("0-1", None),
        Outcome::ForfeitWin => ("1-0", Some(forfeit)),
        Outcome::ForfeitLoss => ("0-1", Some(forfeit)),
        Outcome::ShortWin => ("1-0", Some("not played")),
        Outcome::ShortDraw => ("1/2-1/2", Some("not played")),
        Outcome::ShortLoss => ("0-1", Some("not played")),
    })
}

/// The boards of one round to write, or the conflict that stops the import.
fn plan_boards(
    round: &str,
    plan: &RoundPlan,
    existing: &[Existing],
    name: &dyn Fn(u32) -> String,
    report: &mut TrfImported,
) -> std::result::Result<(Vec<Put>, Vec<i64>), String> {
    let by_pair: HashMap<(u32, u32), &Existing> = existing
        .iter()
        .filter_map(|e| Some(((e.white?, e.black?), e)))
        .collect();
    let paired: std::collections::HashSet<(u32, u32)> = plan
        .boards
        .iter()
        .flat_map(|b| [(b.white, b.black), (b.black, b.white)])
        .collect();
    // A recorded game the file does not pair (or pairs with other colours) stops the import.
    for e in existing.iter().filter(|e| e.recorded()) {
        match (e.white, e.black) {
            (Some(w), Some(b)) if plan.boards.iter().any(|p| (p.white, p.black) == (w, b)) => {}
            (Some(w), Some(b)) if paired.contains(&(w, b)) => {
                return Err(format!(
                    "round {round} board {}: {} – {} has moves or a result, and the file swaps their colours; the arbiter decides",
                    e.board_no,
                    name(w),
                    name(b)
                ));
            }
            (Some(w), Some(b)) => {
                return Err(format!(
                    "round {round} board {}: {} – {} has moves or a result, and the file no longer pairs them; the arbiter decides",
                    e.board_no,
                    name(w),
                    name(b)
                ));
            }
            _ => {}
        }
    }
    let mut taken: BTreeSet<u32> = existing
        .iter()
        .filter(|e| {
            e.recorded()
                || e.white
                    .is_some_and(|w| paired.contains(&(w, e.black.unwrap_or(0))))
        })
        .map(|e| e.board_no)
        .collect();
    let mut puts = Vec::new();
    let mut kept_games = Vec::new();
    for b in &plan.boards {
        let want = stored_result(b);
        if let Some(e) = by_pair.get(&(b.white, b.black)) {
            kept_games.push(e.id);
            let result = match want {
                Some((r, t)) if (e.result.as_str(), e.termination.as_deref()) == (r, t) => None,
                Some(w) if e.result == "*" && e.termination.is_none() && e.moves == 0 => Some(w),
                Some((r, _)) if e.result != r => {
                    report.results_kept.push(format!(
                        "round {round} board {}: relay has {}, the file {r}",
                        e.board_no, e.result
                    ));
                    None
                }
                _ => None,
            };
            puts.push(Put {
                board_no: e.board_no,
                white: b.white,
                black: b.black,
                result,
                new: false,
            });
            continue;
        }
        // A new pairing: its own board number unless a game that stays is there.
        let blocked = |n: u32| {
            taken.contains(&n)
                || existing
                    .iter()
                    .any(|e| e.board_no == n && e.white.is_none() && e.recorded())
        };
        let mut n = b.board_no;
        if blocked(n) {
            let planned = n;
            n = existing
                .iter()
                .map(|e| e.board_no)
                .chain(taken.iter().copied())
                .chain(plan.boards.iter().map(|b| b.board_no))
                .max()
                .unwrap_or(0)
                + 1;
            while blocked(n) {
                n += 1;
            }
            report.boards_moved.push(format!(
                "round {round}: board {planned} holds a game that has moves or a result; {} – {} went to board {n}",
                name(b.white),
                name(b.black)
            ));
        }
        if let Some(e) = existing.iter().find(|e| e.board_no == n) {
            kept_games.push(e.id);
        }
        taken.insert(n);
        puts.push(Put {
            board_no: n,
            white: b.white,
            black: b.black,
            result: want,
            new: true,
        });
    }
    // Games without moves the file no longer pairs: their players go.
    let cleared = existing
        .iter()
        .filter(|e| !kept_games.contains(&e.id) && !e.recorded() && e.white.is_some())
        .map(|e| e.id)
        .collect();
    Ok((puts, cleared))
}

pub(crate) fn sex_text(s: Option<Sex>) -> Option<&'static str> {
    s.map(|s| match s {
        Sex::Male => "m",
        Sex::Female => "w",
    })
}

/// The PGN TimeControl of a file: its 222 line, else 122 when it reads as PGN's form.
fn time_control(t: &TrfTournament) -> Option<String> {
    let read =
        |s: &str| relay_core::time_control::TimeControl::from_free_text(s).map(|tc| tc.to_string());
    t.time_control_code
        .as_deref()
        .and_then(read)
        .or_else(|| t.time_control.as_deref().and_then(read))
}

/// A short fingerprint of the file for the audit trail (FNV-1a, 64 bits).
fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

type GameRowT = (
    i64,
    i64,
    Option<i64>,
    Option<i64>,
    String,
    Option<String>,
    i64,
    String,
);

/// A pairing's players as [`Existing::identity`] holds them.
fn identity(
    w: Option<&TrfPlayer>,
    b: Option<&TrfPlayer>,
    wt: Option<&String>,
    bt: Option<&String>,
    m: Option<u32>,
) -> String {
    let side = |p: Option<&TrfPlayer>, t: Option<&String>| {
        format!(
            "{}|{}|{}|{}|{}|{}",
            p.map(|p| p.name.as_str()).unwrap_or(""),
            p.and_then(|p| p.title.as_deref()).unwrap_or(""),
            p.and_then(|p| p.rating)
                .map(|v| v.to_string())
                .unwrap_or_default(),
            p.and_then(|p| p.fide_id)
                .map(|v| v.to_string())
                .unwrap_or_default(),
            p.and_then(|p| p.federation.as_deref()).unwrap_or(""),
            t.map(String::as_str).unwrap_or(""),
        )
    };
    format!(
        "{}#{}#{}",
        side(w, wt),
        side(b, bt),
        m.map(|v| v.to_string()).unwrap_or_default()
    )
}

impl Store {
    /// Imports a file into tournament `into` (made from the file when `None`). `source` names
    /// the file in the audit trail, `actor` who imported it.
    pub async fn import_trf(
        &self,
        trf: &Trf,
        bytes: &[u8],
        into: Option<TournamentId>,
        actor: &str,
        source: &str,
    ) -> Result<TrfImported> {
        // The arbiter's check compares the file with relay's record under the file's scoring.
        let scoring = relay_core::standings::Scoring::from_trf(&trf.tournament);
        let points = |c: &Cell| scoring.of_cell(c);
        match self.import_whole(trf, bytes, into, actor, source).await {
            Ok(mut done) => {
                // Committed: a record that cannot be read back now is no failed import.
                if let Ok(ours) = self.trf_of(done.tournament_id).await {
                    done.differences = differences(trf, &ours, points);
                }
                Ok(done)
            }
            // Refused: with the reason, everything else the two disagree on.
            Err(StoreError::Conflict(mut why)) => {
                if let Some(id) = into
                    && let Ok(ours) = self.trf_of(id).await
                {
                    let d = differences(trf, &ours, points);
                    if !d.is_empty() {
                        let texts: Vec<&str> = d.iter().take(20).map(|d| d.text.as_str()).collect();
                        why.push_str("; the file and relay's record also differ: ");
                        why.push_str(&texts.join("; "));
                        if d.len() > 20 {
                            why.push_str(&format!("; and {} more", d.len() - 20));
                        }
                    }
                }
                Err(StoreError::Conflict(why))
            }
            Err(e) => Err(e),
        }
    }

    /// The import itself, in one transaction (see the module text).
    async fn import_whole(
        &self,
        trf: &Trf,
        bytes: &[u8],
        into: Option<TournamentId>,
        actor: &str,
        source: &str,
    ) -> Result<TrfImported> {
        let plans = plan_rounds(trf);
        let t = &trf.tournament;
        let team_of = trf.team_of();
        let team_name = |p: &u32| team_of.get(p).map(|t| &t.name);
        let name = |r: u32| {
            trf.player(r).map_or_else(
                || format!("start rank {r}"),
                |p| format!("{} ({r})", p.name),
            )
        };
        let arbiters = (!t.arbiters.is_empty()).then(|| t.arbiters.join("\n"));
        let one_day = t
            .start_date
            .clone()
            .filter(|d| t.end_date.as_ref() == Some(d) && relay_core::trf::iso_date(d));
        let tc = time_control(t);
        let mut report = TrfImported {
            players: trf.players.len(),
            teams: trf.teams.len(),
            ..Default::default()
        };
        let mut added_round = false;
        let result: Result<TrfImported> = on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            // The tournament first: a write, so SQLite's lock is this transaction's from here.
            let id = match into {
                Some(id) => {
                    let n = sqlx::query("UPDATE tournaments SET name = $1, site = COALESCE($2, site), start_date = COALESCE($3, start_date),
                                         end_date = COALESCE($4, end_date), time_control = COALESCE($5, time_control),
                                         federation = $6, arbiters = $7, rounds_planned = COALESCE($8, rounds_planned), kind = $9 WHERE id = $10")
                        .bind(&t.name).bind(&t.city).bind(&t.start_date).bind(&t.end_date).bind(&tc)
                        .bind(&t.federation).bind(&arbiters).bind(t.rounds_planned.map(i64::from)).bind(&t.kind).bind(id)
                        .execute(&mut *tx).await?.rows_affected();
                    if n == 0 {
                        return Err(StoreError::NotFound { what: "tournament", id: id.to_string() });
                    }
                    id
                }
                None => {
                    let (id,): (TournamentId,) = sqlx::query_as("INSERT INTO tournaments (name, site, start_date, end_date, time_control, delay_secs, created_at,
                                                        federation, arbiters, rounds_planned, kind)
                                                        VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9, $10) RETURNING id")
                        .bind(&t.name).bind(&t.city).bind(&t.start_date).bind(&t.end_date).bind(&tc).bind(now_ms())
                        .bind(&t.federation).bind(&arbiters).bind(t.rounds_planned.map(i64::from)).bind(&t.kind)
                        .fetch_one(&mut *tx).await?;
                    id
                }
            };
            report.tournament_id = id;
            // What the file says about ranking (202, 162/XXS, 362, its type) over what was set.
            let (ranking,): (Option<String>,) = sqlx::query_as("SELECT ranking FROM tournaments WHERE id = $1")
                .bind(id).fetch_one(&mut *tx).await?;
            let mut terms: crate::standings::RankingTerms =
                ranking.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default();
            terms.take_from_file(t);
            let records: Vec<String> = trf.round_records.iter().map(relay_core::trf::write_record).collect();
            let records = (!records.is_empty()).then(|| records.join("\n"));
            sqlx::query("UPDATE tournaments SET ranking = $1, round_records = $2 WHERE id = $3")
                .bind(serde_json::to_string(&terms).ok()).bind(records).bind(id).execute(&mut *tx).await?;
            // Every hall importing the same file names the same event (several halls
            // pushing one event to a cloud relay); a key set already is the arbiter's.
            if let Some(key) = crate::push::event_key_from(&t.name, t.start_date.as_deref()) {
                sqlx::query("UPDATE tournaments SET event_key = $1 WHERE id = $2 AND event_key IS NULL
                             AND NOT EXISTS (SELECT 1 FROM tournaments WHERE event_key = $1)")
                    .bind(&key).bind(id).execute(&mut *tx).await?;
            }
            for p in &trf.players {
                sqlx::query("INSERT INTO players (tournament_id, start_rank, name, sex, title, rating, federation, fide_id, birth, team)
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                             ON CONFLICT (tournament_id, start_rank) DO UPDATE SET name = excluded.name, sex = excluded.sex,
                               title = excluded.title, rating = excluded.rating, federation = excluded.federation,
                               fide_id = excluded.fide_id, birth = excluded.birth, team = excluded.team")
                    .bind(id).bind(i64::from(p.start_rank)).bind(&p.name).bind(sex_text(p.sex)).bind(&p.title)
                    .bind(p.rating.map(i64::from)).bind(&p.federation).bind(p.fide_id.map(|v| v as i64)).bind(&p.birth)
                    .bind(team_of.get(&p.start_rank).map(|t| i64::from(t.number)))
                    .execute(&mut *tx).await?;
            }
            for team in &trf.teams {
                let members = team.players.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
                sqlx::query("INSERT INTO teams (tournament_id, number, name, nickname, players) VALUES ($1, $2, $3, $4, $5)
                             ON CONFLICT (tournament_id, number) DO UPDATE SET name = excluded.name, nickname = excluded.nickname, players = excluded.players")
                    .bind(id).bind(i64::from(team.number)).bind(&team.name).bind(&team.nickname).bind(members)
                    .execute(&mut *tx).await?;
            }
            for plan in &plans {
                if plan.boards.is_empty() && plan.byes.is_empty() {
                    continue;
                }
                let number = plan.number.to_string();
                // A one-day event's rounds are on its day when the file gives no round dates.
                let date = plan.date.clone().or_else(|| one_day.clone());
                let found: Option<(i64,)> = sqlx::query_as("SELECT id FROM rounds WHERE tournament_id = $1 AND number = $2")
                    .bind(id).bind(&number).fetch_optional(&mut *tx).await?;
                let round = match found {
                    Some((r,)) => {
                        sqlx::query("UPDATE rounds SET date = COALESCE(date, $1) WHERE id = $2")
                            .bind(&date).bind(r).execute(&mut *tx).await?;
                        r
                    }
                    None => {
                        let (r,): (i64,) = sqlx::query_as("INSERT INTO rounds (tournament_id, number, date) VALUES ($1, $2, $3) RETURNING id")
                            .bind(id).bind(&number).bind(&date).fetch_one(&mut *tx).await?;
                        report.rounds_added.push(number.clone());
                        added_round = true;
                        r
                    }
                };
                let rows: Vec<GameRowT> = sqlx::query_as(
                    "SELECT g.id, g.board_no, g.white_rank, g.black_rank, g.result, g.termination,
                            (SELECT COUNT(*) FROM moves m WHERE m.game_id = g.id),
                            COALESCE(g.white, '') || '|' || COALESCE(g.white_title, '') || '|' || COALESCE(CAST(g.white_elo AS TEXT), '') || '|' ||
                            COALESCE(CAST(g.white_fide_id AS TEXT), '') || '|' || COALESCE(g.white_fed, '') || '|' || COALESCE(g.white_team, '') || '#' ||
                            COALESCE(g.black, '') || '|' || COALESCE(g.black_title, '') || '|' || COALESCE(CAST(g.black_elo AS TEXT), '') || '|' ||
                            COALESCE(CAST(g.black_fide_id AS TEXT), '') || '|' || COALESCE(g.black_fed, '') || '|' || COALESCE(g.black_team, '') || '#' ||
                            COALESCE(CAST(g.match_no AS TEXT), '')
                     FROM games g WHERE g.round_id = $1 ORDER BY g.board_no")
                    .bind(round).fetch_all(&mut *tx).await?;
                let existing: Vec<Existing> = rows.into_iter().map(|r| Existing {
                    id: r.0,
                    board_no: u32::try_from(r.1).unwrap_or(0),
                    white: r.2.and_then(|v| u32::try_from(v).ok()),
                    black: r.3.and_then(|v| u32::try_from(v).ok()),
                    result: r.4,
                    termination: r.5,
                    moves: r.6,
                    identity: r.7,
                }).collect();
                let (puts, cleared) = plan_boards(&number, plan, &existing, &name, &mut report).map_err(StoreError::Conflict)?;
                for put in &puts {
                    let player = |r: u32| trf.player(r);
                    let (w, b): (Option<&TrfPlayer>, Option<&TrfPlayer>) = (player(put.white), player(put.black));
                    let match_no = plan.boards.iter().find(|x| (x.white, x.black) == (put.white, put.black)).and_then(|x| x.match_no);
                    let unchanged = !put.new
                        && put.result.is_none()
                        && existing.iter().any(|e| e.board_no == put.board_no
                            && e.identity == identity(w, b, team_name(&put.white), team_name(&put.black), match_no));
                    if unchanged {
                        continue;
                    }
                    let (game,): (i64,) = sqlx::query_as(crate::batch::sql::PAIRING)
                        .bind(round).bind(i64::from(put.board_no))
                        .bind(w.map(|p| p.name.clone())).bind(w.and_then(|p| p.title.clone())).bind(w.and_then(|p| p.rating).map(i64::from))
                        .bind(w.and_then(|p| p.fide_id).map(|v| v as i64)).bind(w.and_then(|p| p.federation.clone()))
                        .bind(b.map(|p| p.name.clone())).bind(b.and_then(|p| p.title.clone())).bind(b.and_then(|p| p.rating).map(i64::from))
                        .bind(b.and_then(|p| p.fide_id).map(|v| v as i64)).bind(b.and_then(|p| p.federation.clone()))
                        .bind(i64::from(put.white)).bind(i64::from(put.black))
                        .bind(team_name(&put.white)).bind(team_name(&put.black))
                        .bind(match_no.map(i64::from)).bind(1_i64)
                        .fetch_one(&mut *tx).await?;
                    if let Some((res, term)) = put.result {
                        sqlx::query("UPDATE games SET result = $1, termination = $2, status = 'confirmed', result_at = $3 WHERE id = $4")
                            .bind(res).bind(term).bind(now_ms()).bind(game).execute(&mut *tx).await?;
                        report.results_taken += 1;
                    }
                    if put.new {
                        report.games_added += 1;
                    } else {
                        report.games_updated += 1;
                    }
                    let payload = serde_json::json!({"board_no": put.board_no, "trf": true}).to_string();
                    let seq = bump!(tx, touched, game, "game", &payload);
                    report.changed.push((round.into(), game.into(), seq.into()));
                }
                for game in cleared {
                    sqlx::query("UPDATE games SET white = NULL, white_title = NULL, white_elo = NULL, white_fide_id = NULL, white_fed = NULL,
                                 black = NULL, black_title = NULL, black_elo = NULL, black_fide_id = NULL, black_fed = NULL,
                                 white_rank = NULL, black_rank = NULL, white_team = NULL, black_team = NULL, match_no = NULL WHERE id = $1")
                        .bind(game).execute(&mut *tx).await?;
                    let seq = bump!(tx, touched, game, "game", r#"{"trf":"cleared"}"#);
                    report.changed.push((round.into(), game.into(), seq.into()));
                }
                sqlx::query("DELETE FROM byes WHERE round_id = $1").bind(round).execute(&mut *tx).await?;
                for (rank, code, points) in &plan.byes {
                    sqlx::query("INSERT INTO byes (round_id, start_rank, code, half_points) VALUES ($1, $2, $3, $4)")
                        .bind(round).bind(i64::from(*rank)).bind(code.code().to_string()).bind(i64::from(points.0))
                        .execute(&mut *tx).await?;
                    report.byes += 1;
                }
            }
            let detail = serde_json::json!({
                "file": source,
                "bytes": bytes.len(),
                "fnv1a": fingerprint(bytes),
                "tournament": id,
                "players": report.players,
                "rounds_added": report.rounds_added,
                "games_added": report.games_added,
                "games_updated": report.games_updated,
                "results_taken": report.results_taken,
                "results_kept": report.results_kept,
                "boards_moved": report.boards_moved,
                "byes": report.byes,
            }).to_string();
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, NULL, $4)")
                .bind(now_ms()).bind(actor).bind("trf_import").bind(&detail)
                .execute(&mut *tx).await?;
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(report)
        });
        let report = result?;
        if added_round || into.is_none() {
            self.notify_rounds_edited().await?;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u32, w: u32, b: u32, o: Option<Outcome>) -> Board {
        Board {
            board_no: n,
            white: w,
            black: b,
            white_outcome: o,
            double_forfeit: false,
            colourless: false,
            match_no: None,
        }
    }

    fn game(id: i64, n: u32, w: u32, b: u32, result: &str, moves: i64) -> Existing {
        Existing {
            id,
            board_no: n,
            white: Some(w),
            black: Some(b),
            result: result.into(),
            termination: None,
            moves,
            identity: String::new(),
        }
    }

    fn unpaired(moves: i64) -> Existing {
        Existing {
            white: None,
            black: None,
            ..game(9, 1, 0, 0, "*", moves)
        }
    }

    fn plan(boards: Vec<Board>) -> RoundPlan {
        RoundPlan {
            number: 3,
            date: None,
            boards,
            byes: vec![],
            matches: vec![],
        }
    }

    #[test]
    fn a_recorded_game_keeps_its_board_and_result() {
        let mut r = TrfImported::default();
        let existing = [game(10, 1, 1, 2, "1-0", 40), game(11, 2, 3, 4, "*", 0)];
        let p = plan(vec![
            board(1, 1, 2, Some(Outcome::Draw)),
            board(2, 3, 4, Some(Outcome::Win)),
        ]);
        let (puts, cleared) =
            plan_boards("3", &p, &existing, &|r| r.to_string(), &mut r).expect("plan");
        assert!(cleared.is_empty());
        assert_eq!(puts[0].result, None, "relay's 1-0 stays");
        assert_eq!(r.results_kept.len(), 1);
        assert_eq!(
            puts[1].result,
            Some(("1-0", None)),
            "a game without a result takes the file's"
        );
    }

    #[test]
    fn a_changed_pairing_on_a_played_board_is_refused() {
        let mut r = TrfImported::default();
        let existing = [game(10, 1, 1, 2, "*", 12)];
        let p = plan(vec![board(1, 1, 3, None), board(2, 2, 4, None)]);
        let e = plan_boards("3", &p, &existing, &|r| format!("P{r}"), &mut r).expect_err("refused");
        assert!(
            e.contains("round 3 board 1") && e.contains("P1 – P2"),
            "{e}"
        );
        let swapped = plan(vec![board(1, 2, 1, None)]);
        let e =
            plan_boards("3", &swapped, &existing, &|r| r.to_string(), &mut r).expect_err("refused");
        assert!(e.contains("swaps their colours"), "{e}");
    }

    #[test]
    fn a_new_pairing_goes_around_a_game_that_stays() {
        let mut r = TrfImported::default();
        // Board 1 holds a game nobody paired (an e-board's, with moves).
        let existing = [unpaired(5)];
        let p = plan(vec![board(1, 1, 2, None)]);
        let (puts, _) = plan_boards("3", &p, &existing, &|r| r.to_string(), &mut r).expect("plan");
        assert_eq!(puts[0].board_no, 2);
        assert_eq!(r.boards_moved.len(), 1, "and the arbiter is told: {r:?}");
        // A pending one is taken over.
        let existing = [unpaired(0)];
        let (puts, _) = plan_boards("3", &p, &existing, &|r| r.to_string(), &mut r).expect("plan");
        assert_eq!(puts[0].board_no, 1);
    }
}
