//! Tournaments, rounds, e-boards and their assignment to board numbers: what the live service
//! needs to place a board's game, and what arbiters edit.

use crate::batch::{Op, Touched, bump, guard, notify};
use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId, Seq, TournamentId};
use crate::model::{NewTournament, Pairing, RoundInfo, StoredMove, TournamentInfo};
use crate::pool::{Store, now_ms, on_pool};

type RoundRow = (
    RoundId,
    TournamentId,
    String,
    Option<String>,
    Option<i64>,
    i64,
    Seq,
    i64,
);

/// `SELECT <round columns> FROM rounds <rest>` as one literal (sqlx takes only static SQL).
macro_rules! select_rounds {
    ($rest:literal) => {
        concat!(
            "SELECT id, tournament_id, number, date, delay_secs, final, seq, auto FROM rounds ",
            $rest
        )
    };
}

fn round_info(r: RoundRow) -> RoundInfo {
    RoundInfo {
        id: r.0,
        tournament_id: r.1,
        number: r.2,
        date: r.3,
        delay_secs: r.4.and_then(|v| u32::try_from(v).ok()),
        is_final: r.5 != 0,
        seq: r.6,
        auto: r.7 != 0,
    }
}

/// Fields of a tournament an arbiter may change; `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct TournamentPatch {
    pub name: Option<String>,
    pub site: Option<Option<String>>,
    pub start_date: Option<Option<String>>,
    pub end_date: Option<Option<String>>,
    pub time_control: Option<Option<String>>,
    pub delay_secs: Option<u32>,
    pub public_incidents: Option<bool>,
    /// The origins whose pages may frame the tournament's embedded boards.
    pub embed_origins: Option<Vec<String>>,
    /// The event key (see [`TournamentInfo::event_key`]); `Some(None)` takes it away.
    pub event_key: Option<Option<String>>,
}

/// Fields of a round an arbiter may change; `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct RoundPatch {
    pub number: Option<String>,
    pub date: Option<Option<String>>,
    /// `Some(None)` falls back to the tournament's delay.
    pub delay_secs: Option<Option<u32>>,
    pub is_final: Option<bool>,
}

/// Where a game starts and how its e-board lies (see [`Store::start_games`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameStart {
    pub game: GameId,
    /// `None`: the standard position.
    pub start_fen: Option<String>,
    pub chess960: bool,
    pub orientation: Option<String>,
}

/// The number after a round number ("3" → "4"; anything else gets ".2" appended).
pub fn next_round_number(number: &str) -> String {
    match number.parse::<u64>() {
        Ok(n) => (n + 1).to_string(),
        Err(_) => format!("{number}.2"),
    }
}

impl Store {
    pub async fn create_tournament(&self, t: &NewTournament) -> Result<TournamentId> {
        let sql = "INSERT INTO tournaments (name, site, start_date, end_date, time_control, delay_secs, created_at, event_key)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id";
        let made: std::result::Result<(TournamentId,), sqlx::Error> = on_pool!(self, pool => {
            sqlx::query_as(sql)
                .bind(&t.name)
                .bind(&t.site)
                .bind(&t.start_date)
                .bind(&t.end_date)
                .bind(&t.time_control)
                .bind(i64::from(t.delay_secs))
                .bind(now_ms())
                .bind(&t.event_key)
                .fetch_one(pool)
                .await
        });
        match made {
            Ok((id,)) => Ok(id),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(StoreError::Conflict(format!(
                    "another tournament has the event key {}",
                    t.event_key.clone().unwrap_or_default()
                )))
            }
            Err(e) => Err(e.into()),
        }
    }

    pub async fn create_round(
        &self,
        tournament: TournamentId,
        number: &str,
        date: Option<&str>,
    ) -> Result<RoundId> {
        let sql =
            "INSERT INTO rounds (tournament_id, number, date) VALUES ($1, $2, $3) RETURNING id";
        on_pool!(self, pool => {
            let r: std::result::Result<(RoundId,), sqlx::Error> =
                sqlx::query_as(sql).bind(tournament).bind(number).bind(date).fetch_one(pool).await;
            match r {
                Ok((id,)) => Ok(id),
                Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                    Err(StoreError::NotFound { what: "tournament", id: tournament.to_string() })
                }
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    Err(StoreError::Conflict(format!("round {number} exists already")))
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    pub async fn tournaments(&self) -> Result<Vec<TournamentInfo>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            id: TournamentId,
            name: String,
            site: Option<String>,
            start_date: Option<String>,
            end_date: Option<String>,
            time_control: Option<String>,
            delay_secs: i64,
            federation: Option<String>,
            arbiters: Option<String>,
            rounds_planned: Option<i64>,
            public_incidents: i64,
            embed_origins: Option<String>,
            event_key: Option<String>,
            ranking: Option<String>,
        }
        let (ts, rounds): (Vec<Row>, Vec<RoundRow>) = on_pool!(self, pool => {
            let ts = sqlx::query_as("SELECT id, name, site, start_date, end_date, time_control, delay_secs, federation, arbiters, rounds_planned, public_incidents, embed_origins, event_key, ranking FROM tournaments ORDER BY id")
                .fetch_all(pool).await?;
            let rs = sqlx::query_as(select_rounds!("ORDER BY tournament_id, id"))
                .fetch_all(pool).await?;
            (ts, rs)
        });
        let rounds: Vec<RoundInfo> = rounds.into_iter().map(round_info).collect();
        Ok(ts
            .into_iter()
            .map(|t| TournamentInfo {
                id: t.id,
                name: t.name,
                site: t.site,
                start_date: t.start_date,
                end_date: t.end_date,
                time_control: t.time_control,
                delay_secs: u32::try_from(t.delay_secs).unwrap_or(0),
                rounds: rounds
                    .iter()
                    .filter(|r| r.tournament_id == t.id)
                    .cloned()
                    .collect(),
                federation: t.federation,
                arbiters: t
                    .arbiters
                    .map(|a| a.lines().map(str::to_string).collect())
                    .unwrap_or_default(),
                rounds_planned: t.rounds_planned.and_then(|v| u32::try_from(v).ok()),
                public_incidents: t.public_incidents != 0,
                embed_origins: t
                    .embed_origins
                    .map(|a| a.lines().map(str::to_string).collect())
                    .unwrap_or_default(),
                event_key: t.event_key,
                tiebreaks: t
                    .ranking
                    .and_then(|j| serde_json::from_str::<crate::standings::RankingTerms>(&j).ok())
                    .map(|r| r.tiebreaks)
                    .unwrap_or_default(),
            })
            .collect())
    }

    pub async fn tournament(&self, id: TournamentId) -> Result<TournamentInfo> {
        self.tournaments()
            .await?
            .into_iter()
            .find(|t| t.id == id)
            .ok_or(StoreError::NotFound {
                what: "tournament",
                id: id.to_string(),
            })
    }

    /// The broadcast delay of a tournament, in seconds (one small query: it is read on every
    /// public request).
    pub async fn tournament_delay(&self, id: TournamentId) -> Result<u32> {
        let row: Option<(i64,)> = on_pool!(self, pool => sqlx::query_as("SELECT delay_secs FROM tournaments WHERE id = $1")
            .bind(id).fetch_optional(pool).await?);
        let (d,) = row.ok_or(StoreError::NotFound {
            what: "tournament",
            id: id.to_string(),
        })?;
        Ok(u32::try_from(d).unwrap_or(0))
    }

    /// What a game's record needs of its tournament: the time control (which Laws apply to
    /// an illegal move) and whether spectators see the record (one small query, not the
    /// whole tournament list).
    pub async fn record_terms(&self, tournament: TournamentId) -> Result<(Option<String>, bool)> {
        let row: Option<(Option<String>, i64)> = on_pool!(self, pool => sqlx::query_as("SELECT time_control, public_incidents FROM tournaments WHERE id = $1")
            .bind(tournament).fetch_optional(pool).await?);
        let (tc, public) = row.ok_or(StoreError::NotFound {
            what: "tournament",
            id: tournament.to_string(),
        })?;
        Ok((tc, public != 0))
    }

    /// The origins that may frame the boards of a round (`round`), or of a game's round
    /// (`game`): one small query for every embedded page shown, not the tournament list.
    /// None for an unknown id.
    pub async fn embed_origins(
        &self,
        round: Option<i64>,
        game: Option<i64>,
    ) -> Result<Vec<String>> {
        let row: Option<(Option<String>,)> = on_pool!(self, pool => sqlx::query_as("SELECT t.embed_origins FROM tournaments t JOIN rounds r ON r.tournament_id = t.id WHERE r.id = COALESCE($1, (SELECT round_id FROM games WHERE id = $2))")
            .bind(round).bind(game).fetch_optional(pool).await?);
        Ok(row
            .and_then(|(o,)| o)
            .map(|o| o.lines().map(str::to_string).collect())
            .unwrap_or_default())
    }

    pub async fn round(&self, id: RoundId) -> Result<RoundInfo> {
        let row: Option<RoundRow> = on_pool!(self, pool => sqlx::query_as(select_rounds!("WHERE id = $1"))
            .bind(id).fetch_optional(pool).await?);
        row.map(round_info).ok_or(StoreError::NotFound {
            what: "round",
            id: id.to_string(),
        })
    }

    pub async fn update_tournament(&self, id: TournamentId, p: &TournamentPatch) -> Result<()> {
        let t = self.tournament(id).await?;
        let name = p.name.clone().unwrap_or(t.name);
        let site = p.site.clone().unwrap_or(t.site);
        let start = p.start_date.clone().unwrap_or(t.start_date);
        let end = p.end_date.clone().unwrap_or(t.end_date);
        let tc = p.time_control.clone().unwrap_or(t.time_control);
        let delay = i64::from(p.delay_secs.unwrap_or(t.delay_secs));
        let public = i64::from(p.public_incidents.unwrap_or(t.public_incidents));
        let origins = p.embed_origins.clone().unwrap_or(t.embed_origins);
        let origins = (!origins.is_empty()).then(|| origins.join("\n"));
        let key = p.event_key.clone().unwrap_or(t.event_key);
        let done = on_pool!(self, pool => sqlx::query("UPDATE tournaments SET name = $1, site = $2, start_date = $3, end_date = $4, time_control = $5, delay_secs = $6, public_incidents = $7, embed_origins = $8, event_key = $9 WHERE id = $10")
            .bind(name).bind(site).bind(start).bind(end).bind(tc).bind(delay).bind(public).bind(origins).bind(&key).bind(id).execute(pool).await.map(|_| ()));
        match done {
            Ok(()) => self.notify_rounds_edited().await,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(StoreError::Conflict(format!(
                    "another tournament has the event key {}",
                    key.unwrap_or_default()
                )))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Changes a round's number, date, own delay and/or whether it is final.
    pub async fn update_round(&self, id: RoundId, p: &RoundPatch) -> Result<RoundInfo> {
        let r = self.round(id).await?;
        let number = p.number.clone().unwrap_or(r.number);
        let date = p.date.clone().unwrap_or(r.date);
        let delay = p.delay_secs.unwrap_or(r.delay_secs).map(i64::from);
        let fin = i64::from(p.is_final.unwrap_or(r.is_final));
        let done = on_pool!(self, pool => sqlx::query("UPDATE rounds SET number = $1, date = $2, delay_secs = $3, final = $4 WHERE id = $5")
            .bind(&number).bind(date).bind(delay).bind(fin).bind(id).execute(pool).await.map(|_| ()));
        match done {
            Ok(_) => {
                self.notify_rounds_edited().await?;
                self.round(id).await
            }
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::Conflict(
                format!("round {number} exists already"),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// The round boards are played in now: the newest round that is not marked final.
    pub async fn current_round(&self) -> Result<Option<RoundInfo>> {
        let row: Option<RoundRow> = on_pool!(self, pool => sqlx::query_as(select_rounds!("WHERE final = 0 ORDER BY id DESC LIMIT 1"))
            .fetch_optional(pool).await?);
        Ok(row.map(round_info))
    }

    /// A tournament and its first round, made by the service when nobody configured one.
    pub async fn create_auto_round(&self, name: &str, date: &str) -> Result<RoundInfo> {
        let t = self
            .create_tournament(&NewTournament {
                name: name.to_string(),
                start_date: Some(date.to_string()),
                ..Default::default()
            })
            .await?;
        let id = self.create_round(t, "1", Some(date)).await?;
        on_pool!(self, pool => { sqlx::query("UPDATE rounds SET auto = 1 WHERE id = $1").bind(id).execute(pool).await?; });
        self.round(id).await
    }

    /// The round after `round` in its tournament, made (marked automatic) if it does not exist.
    pub async fn next_round(&self, round: RoundId) -> Result<RoundInfo> {
        let r = self.round(round).await?;
        let number = next_round_number(&r.number);
        let found: Option<(RoundId,)> = on_pool!(self, pool => sqlx::query_as("SELECT id FROM rounds WHERE tournament_id = $1 AND number = $2")
            .bind(r.tournament_id).bind(&number).fetch_optional(pool).await?);
        if let Some((id,)) = found {
            return self.round(id).await;
        }
        let date = r.date.clone();
        let id = self
            .create_round(r.tournament_id, &number, date.as_deref())
            .await?;
        on_pool!(self, pool => { sqlx::query("UPDATE rounds SET auto = 1 WHERE id = $1").bind(id).execute(pool).await?; });
        self.round(id).await
    }

    /// Every e-board's assignment in the open rounds (not marked final), newest round first:
    /// (round, board number, serial).
    pub async fn open_assignments(&self) -> Result<Vec<(RoundId, u32, String)>> {
        let rows: Vec<(RoundId, i64, String)> = on_pool!(self, pool => sqlx::query_as(
            "SELECT a.round_id, a.board_no, a.serial FROM assignments a JOIN rounds r ON r.id = a.round_id
             WHERE r.final = 0 ORDER BY a.round_id DESC, a.board_no")
            .fetch_all(pool).await?);
        Ok(rows
            .into_iter()
            .map(|(r, b, s)| (r, u32::try_from(b).unwrap_or(0), s))
            .collect())
    }

    /// Board numbers of a round with the e-board assigned to each.
    pub async fn assignments(&self, round: RoundId) -> Result<Vec<(u32, String)>> {
        let rows: Vec<(i64, String)> = on_pool!(self, pool => sqlx::query_as("SELECT board_no, serial FROM assignments WHERE round_id = $1 ORDER BY board_no")
            .bind(round).fetch_all(pool).await?);
        Ok(rows
            .into_iter()
            .map(|(b, s)| (u32::try_from(b).unwrap_or(0), s))
            .collect())
    }

    /// The lowest board number of a round with no e-board: a paired board still waiting for
    /// one, else one past the highest board number, and never below `first` (a hall of a
    /// several-hall event numbers its boards from its own first board, `--first-board`).
    pub async fn free_board_no(&self, round: RoundId, first: u32) -> Result<u32> {
        let free = self.free_board_nos(round, first, 1).await?;
        Ok(free.first().copied().unwrap_or(first.max(1)))
    }

    /// The `n` lowest board numbers of a round with no e-board, in the order
    /// [`Store::free_board_no`] would give them one after the other (each taken before the
    /// next is asked): the paired boards still waiting for one first, then past the highest.
    pub async fn free_board_nos(&self, round: RoundId, first: u32, n: usize) -> Result<Vec<u32>> {
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let paired: Vec<(i64,)> = on_pool!(self, pool => sqlx::query_as(
            "SELECT board_no FROM games WHERE round_id = $1 AND board_no NOT IN (SELECT board_no FROM assignments WHERE round_id = $1) ORDER BY board_no LIMIT $2")
            .bind(round).bind(limit).fetch_all(pool).await?);
        let mut free: Vec<u32> = paired
            .iter()
            .map(|(b,)| u32::try_from(*b).unwrap_or(1))
            .collect();
        if free.len() < n {
            let (max,): (Option<i64>,) = on_pool!(self, pool => sqlx::query_as(
                "SELECT MAX(b) FROM (SELECT board_no AS b FROM games WHERE round_id = $1 UNION SELECT board_no AS b FROM assignments WHERE round_id = $1) AS x")
                .bind(round).fetch_one(pool).await?);
            let next = u32::try_from(max.unwrap_or(0) + 1)
                .unwrap_or(1)
                .max(first.max(1));
            free.extend((0..).map(|i| next.saturating_add(i)).take(n - free.len()));
        }
        Ok(free)
    }

    /// Assigns an e-board to a board number of a round (taking it off any other board of that
    /// round) and makes sure the game exists. Returns the game id and the change number.
    pub async fn assign(
        &self,
        round: RoundId,
        board_no: u32,
        serial: &str,
        port: Option<&str>,
    ) -> Result<(GameId, Seq)> {
        let done = self
            .assign_many(
                round,
                &[(board_no, serial.to_string(), port.map(str::to_string))],
            )
            .await?;
        done.first().copied().ok_or(StoreError::NotFound {
            what: "round",
            id: round.to_string(),
        })
    }

    /// [`Store::assign`] for several e-boards of one round, `(board number, serial, port)`,
    /// in one transaction (one commit however many: a hall's e-boards all come at its start).
    /// Returns each one's game id and change number, in the order given.
    pub async fn assign_many(
        &self,
        round: RoundId,
        seats: &[(u32, String, Option<String>)],
    ) -> Result<Vec<(GameId, Seq)>> {
        if seats.is_empty() {
            return Ok(Vec::new());
        }
        let at = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            // A write first: with SQLite a transaction that reads first and writes later
            // cannot wait for the write lock (it gets "busy" at once when another
            // connection wrote meanwhile), so this one takes the lock from its start.
            for (_, serial, port) in seats {
                sqlx::query("INSERT INTO eboards (serial, port, last_seen) VALUES ($1, $2, $3)
                             ON CONFLICT (serial) DO UPDATE SET port = COALESCE(excluded.port, eboards.port), last_seen = excluded.last_seen")
                    .bind(serial).bind(port).bind(at).execute(&mut *tx).await?;
            }
            let exists: Option<(i64,)> = sqlx::query_as("SELECT id FROM rounds WHERE id = $1").bind(round).fetch_optional(&mut *tx).await?;
            if exists.is_none() {
                return Err(StoreError::NotFound { what: "round", id: round.to_string() });
            }
            let mut done = Vec::with_capacity(seats.len());
            for (board_no, serial, _) in seats {
                let board = i64::from(*board_no);
                sqlx::query("DELETE FROM assignments WHERE round_id = $1 AND (serial = $2 OR board_no = $3)")
                    .bind(round).bind(serial).bind(board).execute(&mut *tx).await?;
                sqlx::query("INSERT INTO assignments (round_id, board_no, serial) VALUES ($1, $2, $3)")
                    .bind(round).bind(board).bind(serial).execute(&mut *tx).await?;
                sqlx::query("INSERT INTO games (round_id, board_no) VALUES ($1, $2) ON CONFLICT (round_id, board_no) DO NOTHING")
                    .bind(round).bind(board).execute(&mut *tx).await?;
                let (game,): (GameId,) = sqlx::query_as("SELECT id FROM games WHERE round_id = $1 AND board_no = $2")
                    .bind(round).bind(board).fetch_one(&mut *tx).await?;
                let payload = serde_json::json!({"board_no": board_no, "serial": serial}).to_string();
                let seq = bump!(tx, touched, game, "game", &payload);
                done.push((game, Seq::from(seq)));
            }
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(done)
        })
    }

    /// Adds (or replaces the players of) the game on `board_no` of a round.
    pub async fn set_pairing(&self, round: RoundId, p: &Pairing) -> Result<GameId> {
        let done = self.set_pairings(round, std::slice::from_ref(p)).await?;
        done.first().map(|(id, _)| *id).ok_or(StoreError::NotFound {
            what: "round",
            id: round.to_string(),
        })
    }

    /// Loads a round's pairings in one transaction: all of them, or none. Returns each
    /// game's id with the change number of its new pairing.
    pub async fn set_pairings(
        &self,
        round: RoundId,
        pairings: &[Pairing],
    ) -> Result<Vec<(GameId, Seq)>> {
        let sql = crate::batch::sql::PAIRING;
        self.round(round).await?;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            let mut ids = Vec::with_capacity(pairings.len());
            for p in pairings {
                let (id,): (GameId,) = sqlx::query_as(sql)
                    .bind(round)
                    .bind(i64::from(p.board_no))
                    .bind(&p.white.name).bind(&p.white.title).bind(p.white.rating.map(i64::from))
                    .bind(p.white.fide_id.map(|v| v as i64)).bind(&p.white.federation)
                    .bind(&p.black.name).bind(&p.black.title).bind(p.black.rating.map(i64::from))
                    .bind(p.black.fide_id.map(|v| v as i64)).bind(&p.black.federation)
                    .bind(p.white.start_rank.map(i64::from)).bind(p.black.start_rank.map(i64::from))
                    .bind(&p.white.team).bind(&p.black.team)
                    // No team match: the one the game has (if any) stays.
                    .bind(None::<i64>).bind(0_i64)
                    .fetch_one(&mut *tx)
                    .await?;
                let payload = serde_json::json!({"board_no": p.board_no}).to_string();
                let seq = bump!(tx, touched, id, "game", &payload);
                ids.push((id, Seq::from(seq)));
            }
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(ids)
        })
    }

    /// Gives a game another board number of its round (an arbiter's renumbering); the game on
    /// that number, if any, takes this one's. Refused while an e-board sits on either board:
    /// the e-board's place is the writer's, and moves with its game only through it. Returns
    /// each game moved with its change number.
    pub async fn renumber_board(
        &self,
        game: GameId,
        board_no: u32,
        actor: &str,
    ) -> Result<Vec<(GameId, Seq)>> {
        let to = i64::from(board_no);
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            // A write first, so SQLite's lock is this transaction's (see `assign`).
            let n = sqlx::query("UPDATE games SET edits = edits WHERE id = $1").bind(game).execute(&mut *tx).await?.rows_affected();
            if n == 0 {
                return Err(StoreError::NotFound { what: "game", id: game.to_string() });
            }
            let (round, from): (i64, i64) = sqlx::query_as("SELECT round_id, board_no FROM games WHERE id = $1")
                .bind(game).fetch_one(&mut *tx).await?;
            if from == to {
                return Ok(vec![]);
            }
            let seated: Vec<(i64, String)> = sqlx::query_as(
                "SELECT board_no, serial FROM assignments WHERE round_id = $1 AND (board_no = $2 OR board_no = $3)")
                .bind(round).bind(from).bind(to).fetch_all(&mut *tx).await?;
            if let Some((b, serial)) = seated.first() {
                return Err(StoreError::Conflict(format!(
                    "e-board {serial} is on board {b}: put e-boards on boards after renumbering them"
                )));
            }
            let other: Option<(GameId,)> = sqlx::query_as("SELECT id FROM games WHERE round_id = $1 AND board_no = $2")
                .bind(round).bind(to).fetch_optional(&mut *tx).await?;
            // Through a number no board has, as (round, board) is unique at every step.
            sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(-from).bind(game).execute(&mut *tx).await?;
            if let Some((o,)) = other {
                sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(from).bind(o).execute(&mut *tx).await?;
            }
            sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(to).bind(game).execute(&mut *tx).await?;
            let mut done = Vec::new();
            for (g, b) in std::iter::once((game, to)).chain(other.map(|(o,)| (o, from))) {
                let payload = serde_json::json!({"board_no": b}).to_string();
                let seq = bump!(tx, touched, g, "game", &payload);
                done.push((g, Seq::from(seq)));
            }
            // A venue's game placed here by an arbiter no longer follows the venue's number.
            for g in std::iter::once(game).chain(other.map(|(o,)| o)) {
                sqlx::query("UPDATE mirror_ids SET follows = 0 WHERE kind = 'game' AND local_id = $1 AND follows <> 0")
                    .bind(g).execute(&mut *tx).await?;
            }
            let detail = serde_json::json!({"from": from, "to": to, "swapped_with": other.map(|(o,)| o)}).to_string();
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                .bind(now_ms()).bind(actor).bind("renumber").bind(game).bind(&detail)
                .execute(&mut *tx).await?;
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(done)
        })
    }

    /// Notes when an e-board was last heard from, and on which port.
    pub async fn touch_eboard(&self, serial: &str, port: &str) -> Result<()> {
        on_pool!(self, pool => { sqlx::query("INSERT INTO eboards (serial, port, last_seen) VALUES ($1, $2, $3)
                     ON CONFLICT (serial) DO UPDATE SET port = excluded.port, last_seen = excluded.last_seen")
            .bind(serial).bind(port).bind(now_ms()).execute(pool).await?; });
        Ok(())
    }

    /// Sets where a game starts (Chess960, a set-up position) and how its e-board lies.
    pub async fn start_game(
        &self,
        game: GameId,
        start_fen: Option<&str>,
        chess960: bool,
        orientation: Option<&str>,
    ) -> Result<Seq> {
        let start = GameStart {
            game,
            start_fen: start_fen.map(str::to_string),
            chess960,
            orientation: orientation.map(str::to_string),
        };
        let seqs = self.start_games(std::slice::from_ref(&start)).await?;
        seqs.first().copied().ok_or(StoreError::NotFound {
            what: "game",
            id: game.to_string(),
        })
    }

    /// [`Store::start_game`] for several games in one transaction; their change numbers in
    /// the order given.
    pub async fn start_games(&self, starts: &[GameStart]) -> Result<Vec<Seq>> {
        if starts.is_empty() {
            return Ok(Vec::new());
        }
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            let mut seqs = Vec::with_capacity(starts.len());
            for s in starts {
                let payload = serde_json::json!({"start_fen": s.start_fen, "chess960": s.chess960}).to_string();
                sqlx::query("UPDATE games SET start_fen = $1, chess960 = $2, orientation = $3 WHERE id = $4")
                    .bind(&s.start_fen).bind(i64::from(s.chess960)).bind(&s.orientation).bind(s.game).execute(&mut *tx).await?;
                let seq = bump!(tx, touched, s.game, "game", &payload);
                seqs.push(Seq::from(seq));
            }
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(seqs)
        })
    }

    /// Fills in the clock of a move once the lever press that ended it is known. `None` when
    /// the move is no longer there (taken back meanwhile).
    pub async fn set_move_clock(
        &self,
        game: GameId,
        ply: u32,
        clk_ms: Option<u64>,
        emt_ms: Option<u64>,
    ) -> Result<Option<i64>> {
        self.commit_one(Op::MoveClock {
            game,
            ply,
            clk_ms,
            emt_ms,
        })
        .await
    }

    /// Replaces all moves of a game (an arbiter's upload), keeping the old ones in the audit
    /// trail. One transaction: either the whole new game is there or nothing changed.
    pub async fn replace_moves(
        &self,
        game: GameId,
        moves: &[StoredMove],
        actor: &str,
    ) -> Result<Seq> {
        self.replace_moves_on(game, None, moves, actor).await
    }

    /// [`Store::replace_moves`] as an arbiter's edit made on the game's `edits`-th version
    /// (`None`: whatever it is): refused as a conflict when another edit came first.
    pub async fn replace_moves_on(
        &self,
        game: GameId,
        edits: Option<i64>,
        moves: &[StoredMove],
        actor: &str,
    ) -> Result<Seq> {
        let old = self.game(game).await?;
        let detail = serde_json::json!({
            "replaced": old.moves.iter().map(|m| m.san.as_str()).collect::<Vec<_>>(),
            "with": moves.iter().map(|m| m.san.as_str()).collect::<Vec<_>>(),
        })
        .to_string();
        let payload = serde_json::json!({"replace": moves.len()}).to_string();
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            if let Some(edits) = edits {
                guard!(tx, game, edits);
            }
            sqlx::query("DELETE FROM moves WHERE game_id = $1").bind(game).execute(&mut *tx).await?;
            for m in moves {
                sqlx::query("INSERT INTO moves (game_id, ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after)
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
                    .bind(game).bind(i64::from(m.ply)).bind(&m.san).bind(&m.uci)
                    .bind(m.clk_ms.map(|v| v as i64)).bind(m.emt_ms.map(|v| v as i64))
                    .bind(m.accepted_at_ms).bind(&m.fen_after)
                    .execute(&mut *tx).await?;
            }
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                .bind(now_ms()).bind(actor).bind("replace").bind(game).bind(&detail)
                .execute(&mut *tx).await?;
            let seq = bump!(tx, touched, game, "game", &payload);
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(Seq::from(seq))
        })
    }
}
