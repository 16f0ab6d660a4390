//! The relay's storage: one [`Store`] over SQLite (the embedded default, `sqlite://relay.db`)
//! or PostgreSQL (`postgres://…`), with per-backend migrations applied at start-up.
//!
//! Every write that changes what spectators see (a move, a correction, a result) happens in
//! one transaction with the round's change sequence number, and returns that number only after
//! the commit: the caller publishes after this returns, so nothing is announced that a crash
//! could take back. SQLite runs in WAL mode with `synchronous=FULL` (the commit is on disk
//! when it returns); PostgreSQL with its defaults (`fsync`, `synchronous_commit` on).
//!
//! The SQL is shared by both backends: parameters are written `$1`, `$2`, … in the order they
//! first appear, which SQLite reads as numbered parameters too. Only the schema differs.

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{PgPool, SqlitePool};
use std::str::FromStr;
use std::time::Duration;

/// Why the store could not do something.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "database URL {url:?} not understood: {reason} (expected sqlite://FILE or postgres://USER@HOST/DB)"
    )]
    BadUrl { url: String, reason: String },
    #[error("cannot open the database: {0}")]
    Connect(String),
    #[error("cannot set up the database's tables: {0} (the user needs the right to create them)")]
    Schema(String),
    #[error(
        "the database was written by a newer relay (schema {found}, this relay knows up to {known}); refusing to touch it"
    )]
    NewerSchema { found: i64, known: i64 },
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// An error of SQLite called directly (the writer's group commits, see `direct`).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The server's own words for a refusal ("role \"x\" does not exist"), without the wrapping
/// and the server's source line that sqlx adds; other errors as sqlx says them.
fn plain_message(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(db) => db.message().to_string(),
        other => other.to_string(),
    }
}

impl StoreError {
    /// Failures worth waiting out and retrying: the database went away, is restarting, is
    /// busy or is out of room. Anything else (a refused row, an unknown id, a row that does
    /// not decode) would fail again.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Connect(_) => true,
            StoreError::Database(e) => match e {
                sqlx::Error::Database(db) => {
                    let code = db.code().map(|c| c.to_string()).unwrap_or_default();
                    if db
                        .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
                        .is_some()
                    {
                        // SQLSTATE classes: connection exception (08), transaction rollback
                        // (40), insufficient resources such as a full disk (53), operator
                        // intervention such as a shutdown (57), system error (58).
                        ["08", "40", "53", "57", "58"]
                            .iter()
                            .any(|p| code.starts_with(p))
                    } else {
                        code.parse::<i32>().is_ok_and(sqlite_code_is_transient)
                    }
                }
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::Protocol(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::WorkerCrashed => true,
                _ => false,
            },
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                sqlite_code_is_transient(e.extended_code)
            }
            _ => false,
        }
    }
}

/// Whether a SQLite result code (from sqlx or from SQLite called directly) is worth retrying:
/// BUSY 5, LOCKED 6, IOERR 10, FULL 13, CANTOPEN 14 (extended codes keep the primary in the
/// low byte).
fn sqlite_code_is_transient(code: i32) -> bool {
    matches!(code & 0xff, 5 | 6 | 10 | 13 | 14)
}

/// How long a connection to a SQLite file waits for another's write before it gives up.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The pragmas of every connection to a SQLite file: sqlx's pools and the writer's own
/// (`direct`). `auto_checkpoint` is off for the writer's connections (see
/// [`Store::open_writer`]).
fn sqlite_pragmas(auto_checkpoint: bool) -> [(&'static str, &'static str); 5] {
    [
        ("journal_mode", "WAL"),
        // Durable at each commit.
        ("synchronous", "FULL"),
        ("foreign_keys", "ON"),
        // Statement journals (kept while a statement inside a transaction runs, to undo just
        // that statement) in memory: in a temporary file they were a `pwrite` per page, 8% of
        // the service with 1000 boards. The transaction's own durability is the WAL's and
        // does not change.
        ("temp_store", "memory"),
        // A checkpoint copies every page the WAL holds into the database file; the same hot
        // pages (a round's change number, the newest moves) change in almost every commit, so
        // a longer WAL between checkpoints copies each of them once for many more commits
        // (about 40 MB of WAL at most, instead of 4).
        (
            "wal_autocheckpoint",
            if auto_checkpoint { "10000" } else { "0" },
        ),
    ]
}

/// A connection pool to one of the two backends.
#[derive(Clone, Debug)]
pub enum Store {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs the same code on whichever pool the store has (the SQL is the same for both).
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            Store::Sqlite($pool) => $body,
            Store::Postgres($pool) => $body,
        }
    };
}

/// Raises the round's change number for a change to `game` and records the change, inside the
/// transaction `tx` (a macro so that it is written once for both backends' types). The round's
/// newest number is noted in `$touched` for [`notify!`].
macro_rules! bump {
    ($tx:expr, $touched:expr, $game:expr, $kind:expr, $payload:expr) => {{
        let row: Option<(i64, i64)> = sqlx::query_as(crate::batch::sql::BUMP)
            .bind($game)
            .fetch_optional(&mut *$tx)
            .await?;
        let (round, seq) = row.ok_or_else(|| crate::batch::same::no_game($game))?;
        sqlx::query(crate::batch::sql::CHANGE)
            .bind(round)
            .bind(seq)
            .bind($game)
            .bind($kind)
            .bind($payload)
            .bind(crate::now_ms())
            .execute(&mut *$tx)
            .await?;
        $touched.note(round, seq);
        seq
    }};
}

/// Tells every other relay on the same PostgreSQL which rounds the transaction `tx` changed,
/// up to which change number: one notification per round, sent by the server at the commit
/// (never if it rolls back). Only the numbers travel; listeners read the changes from the
/// log. SQLite has one relay per file and nobody to tell.
macro_rules! notify {
    ($store:expr, $tx:expr, $touched:expr) => {{
        if matches!($store, Store::Postgres(_)) {
            for (round, seq) in $touched.rounds() {
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind($crate::CHANGES_CHANNEL)
                    .bind(format!("{round}:{seq}"))
                    .execute(&mut *$tx)
                    .await?;
            }
        }
    }};
}

/// Counts an arbiter's edit of `game`, made on its `edits`-th version, inside the transaction
/// `tx`; a conflict (returned from the caller) when another edit came first.
macro_rules! guard {
    ($tx:expr, $game:expr, $edits:expr) => {{
        let (game, edits): (i64, i64) = ($game, $edits);
        let n = sqlx::query(crate::batch::sql::GUARD)
            .bind(game)
            .bind(edits)
            .execute(&mut *$tx)
            .await?
            .rows_affected();
        if n == 0 {
            let now: Option<(i64,)> = sqlx::query_as(crate::batch::sql::EDITS)
                .bind(game)
                .fetch_optional(&mut *$tx)
                .await?;
            return Err($crate::batch::same::edited_meanwhile(
                game,
                edits,
                now.map(|(n,)| n),
            ));
        }
    }};
}

/// The PostgreSQL notification channel that carries `round:seq` after each commit.
pub const CHANGES_CHANNEL: &str = "relay_changes";

/// The rounds a transaction changed, each with its newest change number.
#[derive(Default)]
struct Touched(std::collections::BTreeMap<i64, i64>);

impl Touched {
    fn note(&mut self, round: i64, seq: i64) {
        let e = self.0.entry(round).or_insert(seq);
        *e = (*e).max(seq);
    }
    fn rounds(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.0.iter().map(|(r, s)| (*r, *s))
    }
}

mod batch;
mod change;
mod cluster;
mod direct;
mod export;
mod migrate;
mod model;
mod push;
mod rounds;
pub use batch::Op;
pub use change::{ChangeRecord, MoveClockRecord, MoveRecord, ResultRecord, TruncateRecord};
pub use cluster::{EBOARDS_CHANNEL, Heard, Listener, Locks, ROUNDS_CHANNEL, lock_key};
pub use direct::SqliteCommits;
pub use push::{Applied, MirrorSource, PushBatch, PushConflict, PushReply};
pub use rounds::{RoundPatch, TournamentPatch, next_round_number};

pub use export::{round_game, to_game};
pub use migrate::SCHEMA_VERSION;
pub use model::{
    AuditEntry, AuditRecord, Change, NewTournament, Pairing, Player, RawEntry, RoundInfo,
    StoredGame, StoredMove, TournamentInfo,
};

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Store {
    /// Opens (creating a SQLite file if missing) and brings the schema up to date. A bad URL,
    /// wrong credentials or a newer schema is an error before anything is changed.
    pub async fn open(url: &str) -> Result<Store> {
        Store::open_with(url, 4, true).await
    }

    /// Opens the store for the one task that writes (see [`Store::open`]). On SQLite it
    /// holds a single connection: a pool of several hands the writer a different connection
    /// from one commit to the next, and each then finds its page cache stale (another
    /// connection wrote since) and reads the pages it needs again.
    ///
    /// Its commits never checkpoint: whoever opens it calls [`Store::checkpoint`] on another
    /// store every few seconds. SQLite's automatic checkpoint runs inside the commit that
    /// crosses its threshold, which then copies the WAL into the database file before it
    /// returns: with 1000 boards that was a 13-36 ms commit every few seconds, and every move
    /// in or behind it waited (board → spectator p99 8.5 ms beyond the settle time, 4.1 ms
    /// without those commits).
    pub async fn open_writer(url: &str) -> Result<Store> {
        Store::open_with(url, 1, false).await
    }

    /// Copies what the SQLite WAL holds into the database file as far as readers allow, beside
    /// the writer's commits rather than inside one (see [`Store::open_writer`]); PostgreSQL
    /// needs nothing.
    pub async fn checkpoint(&self) -> Result<()> {
        if let Store::Sqlite(pool) = self {
            sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(pool)
                .await?;
        }
        Ok(())
    }

    async fn open_with(url: &str, sqlite_connections: u32, auto_checkpoint: bool) -> Result<Store> {
        let bad = |reason: String| StoreError::BadUrl {
            url: url.to_string(),
            reason,
        };
        let store = if url.starts_with("sqlite:") {
            let opts = sqlite_pragmas(auto_checkpoint).into_iter().fold(
                SqliteConnectOptions::from_str(url)
                    .map_err(|e| bad(e.to_string()))?
                    .create_if_missing(true)
                    .busy_timeout(SQLITE_BUSY_TIMEOUT),
                |opts, (key, value)| opts.pragma(key, value),
            );
            let pool = SqlitePoolOptions::new()
                .max_connections(sqlite_connections)
                // A connection to a local file does not go stale, and sqlx's check before
                // handing one out is a round trip to the connection's worker thread: one
                // more for every group commit, a hundred and fifty a second with 1000 boards.
                .test_before_acquire(false)
                .connect_with(opts)
                .await
                .map_err(|e| StoreError::Connect(plain_message(&e)))?;
            Store::Sqlite(pool)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let opts = PgConnectOptions::from_str(url).map_err(|e| bad(e.to_string()))?;
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await
                .map_err(|e| StoreError::Connect(plain_message(&e)))?;
            Store::Postgres(pool)
        } else {
            return Err(bad("unknown scheme".into()));
        };
        migrate::run(&store).await.map_err(|e| match e {
            StoreError::Database(e @ sqlx::Error::Database(_)) => {
                StoreError::Schema(plain_message(&e))
            }
            other => other,
        })?;
        Ok(store)
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    /// Whether the database answers (for `/health`).
    pub async fn ping(&self) -> bool {
        on_pool!(self, pool => sqlx::query("SELECT 1").execute(pool).await.is_ok())
    }

    pub async fn create_tournament(&self, t: &NewTournament) -> Result<i64> {
        let sql = "INSERT INTO tournaments (name, site, start_date, end_date, time_control, delay_secs, created_at)
                   VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";
        on_pool!(self, pool => {
            let (id,): (i64,) = sqlx::query_as(sql)
                .bind(&t.name)
                .bind(&t.site)
                .bind(&t.start_date)
                .bind(&t.end_date)
                .bind(&t.time_control)
                .bind(i64::from(t.delay_secs))
                .bind(now_ms())
                .fetch_one(pool)
                .await?;
            Ok(id)
        })
    }

    pub async fn create_round(
        &self,
        tournament: i64,
        number: &str,
        date: Option<&str>,
    ) -> Result<i64> {
        let sql =
            "INSERT INTO rounds (tournament_id, number, date) VALUES ($1, $2, $3) RETURNING id";
        on_pool!(self, pool => {
            let r: std::result::Result<(i64,), sqlx::Error> =
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

    /// Adds (or replaces the players of) the game on `board_no` of a round.
    pub async fn set_pairing(&self, round: i64, p: &Pairing) -> Result<i64> {
        let done = self.set_pairings(round, std::slice::from_ref(p)).await?;
        done.first().map(|(id, _)| *id).ok_or(StoreError::NotFound {
            what: "round",
            id: round.to_string(),
        })
    }

    /// Records the move at `m.ply` of a game, durably, and returns the round's new change
    /// number. A ply recorded twice (a replay after a crash) is refused, not duplicated.
    pub async fn record_move(&self, game: i64, m: &StoredMove) -> Result<i64> {
        let op = Op::Move { game, m: m.clone() };
        self.commit_one(op)
            .await?
            .ok_or_else(|| StoreError::Conflict(format!("game {game}: move not recorded")))
    }

    /// Removes the moves from `from_ply` on (a correction or takeback), keeping the reason in
    /// the audit trail. Returns the new change number.
    pub async fn truncate_moves(
        &self,
        game: i64,
        from_ply: u32,
        actor: &str,
        reason: &str,
    ) -> Result<i64> {
        let op = Op::Truncate {
            game,
            from_ply,
            actor: actor.into(),
            reason: reason.into(),
        };
        self.commit_one(op)
            .await?
            .ok_or_else(|| StoreError::Conflict(format!("game {game}: not truncated")))
    }

    /// Sets a game's result (and status: finished, or confirmed by an arbiter).
    pub async fn set_result(
        &self,
        game: i64,
        result: &str,
        termination: Option<&str>,
        status: &str,
        actor: &str,
    ) -> Result<i64> {
        let op = Op::Result {
            game,
            result: result.into(),
            termination: termination.map(str::to_string),
            status: status.into(),
            actor: actor.into(),
        };
        self.commit_one(op)
            .await?
            .ok_or_else(|| StoreError::Conflict(format!("game {game}: result not set")))
    }

    /// A game with its pairing and moves.
    pub async fn game(&self, id: i64) -> Result<StoredGame> {
        on_pool!(self, pool => {
            let row: Option<model::GameRow> = sqlx::query_as(model::GAME_SELECT_BY_ID).bind(id).fetch_optional(pool).await?;
            let row = row.ok_or(StoreError::NotFound { what: "game", id: id.to_string() })?;
            let moves: Vec<model::MoveRow> = sqlx::query_as(
                "SELECT ply, san, uci, clk_ms, emt_ms, accepted_at, fen_after FROM moves WHERE game_id = $1 ORDER BY ply",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            Ok(model::game_from_rows(row, moves))
        })
    }

    /// The games of a round in board order (two queries, whatever the number of games).
    pub async fn round_games(&self, round: i64) -> Result<Vec<StoredGame>> {
        on_pool!(self, pool => {
            let rows: Vec<model::GameRow> = sqlx::query_as(model::GAME_SELECT_BY_ROUND).bind(round).fetch_all(pool).await?;
            let moves: Vec<(i64, model::MoveRow)> = sqlx::query_as::<_, model::RoundMoveRow>(
                "SELECT m.game_id, m.ply, m.san, m.uci, m.clk_ms, m.emt_ms, m.accepted_at, m.fen_after
                 FROM moves m JOIN games g ON g.id = m.game_id WHERE g.round_id = $1 ORDER BY m.game_id, m.ply",
            )
            .bind(round)
            .fetch_all(pool)
            .await?
            .into_iter()
            .map(model::RoundMoveRow::split)
            .collect();
            let mut by_game: std::collections::HashMap<i64, Vec<model::MoveRow>> = std::collections::HashMap::new();
            for (g, m) in moves {
                by_game.entry(g).or_default().push(m);
            }
            Ok(rows.into_iter().map(|r| { let m = by_game.remove(&r.id).unwrap_or_default(); model::game_from_rows(r, m) }).collect())
        })
    }

    /// What changed in a round after change number `after`, oldest first, at most `limit`.
    pub async fn changes_since(&self, round: i64, after: i64, limit: u32) -> Result<Vec<Change>> {
        on_pool!(self, pool => {
            let rows: Vec<(i64, Option<i64>, String, String, i64)> = sqlx::query_as(
                "SELECT seq, game_id, kind, payload, at FROM changes WHERE round_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            )
            .bind(round).bind(after).bind(i64::from(limit)).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(seq, game_id, kind, payload, at_ms)| Change { seq, game_id, kind, payload, at_ms }).collect())
        })
    }

    /// The round's change number as it stood at `at_ms` (for a delayed view).
    pub async fn seq_at(&self, round: i64, at_ms: i64) -> Result<i64> {
        let (seq,): (Option<i64>,) = on_pool!(self, pool => sqlx::query_as(
            "SELECT MAX(seq) FROM changes WHERE round_id = $1 AND at <= $2")
            .bind(round).bind(at_ms).fetch_one(pool).await?);
        Ok(seq.unwrap_or(0))
    }

    /// Appends raw board messages (the black box), in one transaction.
    pub async fn log_raw(&self, entries: &[RawEntry]) -> Result<()> {
        self.commit(entries, &[]).await.map(|_| ())
    }

    /// Raw messages of a port in time order. Not indexed (schema 6): it reads the whole black
    /// box, which is for tests and one-off inspection; `relay replay` reads by serial number.
    pub async fn raw_log(&self, port: &str) -> Result<Vec<RawEntry>> {
        on_pool!(self, pool => {
            let rows: Vec<(String, Option<String>, i64, Vec<u8>)> = sqlx::query_as(
                "SELECT port, serial, received_at, bytes FROM raw_log WHERE port = $1 ORDER BY received_at, id",
            )
            .bind(port).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(port, serial, received_at_ms, bytes)| RawEntry { port, serial, received_at_ms, bytes }).collect())
        })
    }

    /// Raw messages of one e-board in receive order (`relay replay --db`).
    pub async fn raw_log_of(&self, serial: &str) -> Result<Vec<RawEntry>> {
        on_pool!(self, pool => {
            let rows: Vec<(String, Option<String>, i64, Vec<u8>)> = sqlx::query_as(
                "SELECT port, serial, received_at, bytes FROM raw_log WHERE serial = $1 ORDER BY received_at, id",
            )
            .bind(serial).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(port, serial, received_at_ms, bytes)| RawEntry { port, serial, received_at_ms, bytes }).collect())
        })
    }

    /// The whole audit trail (tournaments, rounds, pairings, e-boards and games), newest
    /// first: at most `limit` entries with an id below `before`.
    pub async fn audit_all(&self, before: Option<i64>, limit: u32) -> Result<Vec<AuditRecord>> {
        on_pool!(self, pool => {
            let rows: Vec<(i64, i64, String, String, Option<i64>, String)> = sqlx::query_as(
                "SELECT id, at, actor, action, game_id, detail FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2",
            )
            .bind(before.unwrap_or(i64::MAX)).bind(i64::from(limit)).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(id, at_ms, actor, action, game_id, detail)| AuditRecord {
                id, game_id, entry: AuditEntry { at_ms, actor, action, detail },
            }).collect())
        })
    }

    /// The audit trail of a game, oldest first.
    pub async fn audit_trail(&self, game: i64) -> Result<Vec<AuditEntry>> {
        on_pool!(self, pool => {
            let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
                "SELECT at, actor, action, detail FROM audit WHERE game_id = $1 ORDER BY id",
            )
            .bind(game).fetch_all(pool).await?;
            Ok(rows.into_iter().map(|(at_ms, actor, action, detail)| AuditEntry { at_ms, actor, action, detail }).collect())
        })
    }
}
