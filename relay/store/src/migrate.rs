//! Schema migrations, one folder per backend (`migrations/sqlite`, `migrations/postgres`),
//! embedded in the binary and applied at start-up in order, each in its own transaction. The
//! applied version is kept in `relay_schema`; a database from a newer relay is refused before
//! anything is touched.

use crate::error::StoreError;
use crate::pool::{Store, on_pool};

/// (version, SQLite script, PostgreSQL script), in order.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        1,
        include_str!("../../../migrations/sqlite/0001_initial.sql"),
        include_str!("../../../migrations/postgres/0001_initial.sql"),
    ),
    (
        2,
        include_str!("../../../migrations/sqlite/0002_service.sql"),
        include_str!("../../../migrations/postgres/0002_service.sql"),
    ),
    (
        3,
        include_str!("../../../migrations/sqlite/0003_edits.sql"),
        include_str!("../../../migrations/postgres/0003_edits.sql"),
    ),
    (
        4,
        include_str!("../../../migrations/sqlite/0004_upstream.sql"),
        include_str!("../../../migrations/postgres/0004_upstream.sql"),
    ),
    (
        5,
        include_str!("../../../migrations/sqlite/0005_fewer_indexes.sql"),
        include_str!("../../../migrations/postgres/0005_fewer_indexes.sql"),
    ),
    (
        6,
        include_str!("../../../migrations/sqlite/0006_black_box_index.sql"),
        include_str!("../../../migrations/postgres/0006_black_box_index.sql"),
    ),
    (
        7,
        include_str!("../../../migrations/sqlite/0007_trf.sql"),
        include_str!("../../../migrations/postgres/0007_trf.sql"),
    ),
    (
        8,
        include_str!("../../../migrations/sqlite/0008_incidents.sql"),
        include_str!("../../../migrations/postgres/0008_incidents.sql"),
    ),
    (
        9,
        include_str!("../../../migrations/sqlite/0009_evals.sql"),
        include_str!("../../../migrations/postgres/0009_evals.sql"),
    ),
    (
        10,
        include_str!("../../../migrations/sqlite/0010_halls.sql"),
        include_str!("../../../migrations/postgres/0010_halls.sql"),
    ),
    (
        11,
        include_str!("../../../migrations/sqlite/0011_standings.sql"),
        include_str!("../../../migrations/postgres/0011_standings.sql"),
    ),
    (
        12,
        include_str!("../../../migrations/sqlite/0012_sources_lichess.sql"),
        include_str!("../../../migrations/postgres/0012_sources_lichess.sql"),
    ),
];

/// The newest schema this relay knows.
pub const SCHEMA_VERSION: i64 = 12;

fn statements(script: &str) -> impl Iterator<Item = String> + '_ {
    // Comments are whole lines in our scripts; statements end with `;`.
    let body: String = script
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    body.split(';')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .into_iter()
}

/// Lock number that makes relays starting together on one PostgreSQL migrate one at a time.
const MIGRATION_LOCK: i64 = 0x7265_6c61_795f_6d69;

pub async fn run(store: &Store) -> Result<(), StoreError> {
    on_pool!(store, pool => {
        // Several relays may start at once on one PostgreSQL: each migration step (and the
        // version table itself) is done under a transaction lock, reading the version again
        // inside it, so exactly one of them applies each script.
        let pg = matches!(store, Store::Postgres(_));
        let mut tx = pool.begin().await?;
        if pg {
            sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(MIGRATION_LOCK).execute(&mut *tx).await?;
        }
        sqlx::query("CREATE TABLE IF NOT EXISTS relay_schema (version BIGINT NOT NULL)").execute(&mut *tx).await?;
        tx.commit().await?;
        for (version, sqlite, postgres) in MIGRATIONS {
            let mut tx = pool.begin().await?;
            if pg {
                sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(MIGRATION_LOCK).execute(&mut *tx).await?;
            }
            let (current,): (Option<i64>,) = sqlx::query_as("SELECT MAX(version) FROM relay_schema").fetch_one(&mut *tx).await?;
            let current = current.unwrap_or(0);
            if current > SCHEMA_VERSION {
                return Err(StoreError::NewerSchema { found: current, known: SCHEMA_VERSION });
            }
            if *version <= current {
                continue;
            }
            let script = match store {
                Store::Sqlite(_) => sqlite,
                Store::Postgres(_) => postgres,
            };
            for stmt in statements(script) {
                // Our own embedded scripts: the text is a constant of this binary.
                sqlx::raw_sql(sqlx::AssertSqlSafe(stmt)).execute(&mut *tx).await?;
            }
            sqlx::query("INSERT INTO relay_schema (version) VALUES ($1)").bind(*version).execute(&mut *tx).await?;
            tx.commit().await?;
        }
        Ok(())
    })
}
