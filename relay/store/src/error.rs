//! What can go wrong in the store, and which of it is worth waiting out: the writer retries a
//! transient failure with backoff, while a refusal would only fail again, so the line between
//! the two is drawn here once, for sqlx's errors and SQLite's own alike.

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
pub(crate) fn plain_message(e: &sqlx::Error) -> String {
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
