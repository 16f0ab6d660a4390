//! Opening a store: the URL read, the pool made with the settings each backend needs, and the
//! schema brought up to date before anything else touches it (see `migrate`). The SQLite
//! pragmas are here too, as the writer's own connections (`direct`) take the same ones.

use crate::error::{Result, StoreError, plain_message};
use crate::migrate;
use crate::pool::Store;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use std::str::FromStr;
use std::time::Duration;

/// How long a connection to a SQLite file waits for another's write before it gives up.
pub(crate) const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The pragmas of every connection to a SQLite file: sqlx's pools and the writer's own
/// (`direct`). `auto_checkpoint` is off for the writer's connections (see
/// [`Store::open_writer`]).
pub(crate) fn sqlite_pragmas(auto_checkpoint: bool) -> [(&'static str, &'static str); 5] {
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
}
