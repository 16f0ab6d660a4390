//! The [`Store`] itself: one enum over the two backends' connection pools, and `on_pool!`,
//! which writes a method's body once for both. Every other module of the crate builds on
//! these, so they sit at the bottom and import nothing of the crate.

use sqlx::{PgPool, SqlitePool};

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
            $crate::pool::Store::Sqlite($pool) => $body,
            $crate::pool::Store::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

/// The wall clock as the store stamps rows with it: milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Store {
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
}
