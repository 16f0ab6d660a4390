//! Schema migrations, one folder per backend (`migrations/sqlite`, `migrations/postgres`),
//! embedded in the binary and applied at start-up in order, each in its own transaction. The
//! applied version is kept in `relay_schema`; a database from a newer relay is refused before
//! anything is touched.

use super::{Store, StoreError};

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
];

/// The newest schema this relay knows.
pub const SCHEMA_VERSION: i64 = 2;

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

pub async fn run(store: &Store) -> Result<(), StoreError> {
    on_pool!(store, pool => {
        sqlx::query("CREATE TABLE IF NOT EXISTS relay_schema (version BIGINT NOT NULL)").execute(pool).await?;
        let current: Option<(i64,)> = sqlx::query_as("SELECT MAX(version) FROM relay_schema").fetch_optional(pool).await?
            .and_then(|(v,): (Option<i64>,)| v.map(|v| (v,)));
        let current = current.map_or(0, |(v,)| v);
        if current > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema { found: current, known: SCHEMA_VERSION });
        }
        for (version, sqlite, postgres) in MIGRATIONS {
            if *version <= current {
                continue;
            }
            let script = match store {
                Store::Sqlite(_) => sqlite,
                Store::Postgres(_) => postgres,
            };
            let mut tx = pool.begin().await?;
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
