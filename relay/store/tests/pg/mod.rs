//! A PostgreSQL database of a test's own, on the server `RELAY_TEST_POSTGRES` names (a user
//! there may create databases, e.g. `postgres://postgres@127.0.0.1/test`), so runs never see
//! each other's rows. Without the variable the test says it skips; under
//! `RELAY_REQUIRE_ALL=1` that is a failure.

use relay_store::Store;

/// The server's URL, or `None` after a notice that the test is skipped.
pub fn postgres_base() -> Option<String> {
    let base = std::env::var("RELAY_TEST_POSTGRES").ok();
    if base.is_none() {
        if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!("RELAY_TEST_POSTGRES is not set but RELAY_REQUIRE_ALL=1");
        }
        println!("skipping: RELAY_TEST_POSTGRES not set (e.g. postgres://postgres@127.0.0.1/test)");
    }
    base
}

/// A new, empty database `name` (made again if a run left it): the server's store, to drop
/// it with afterwards ([`drop_database`]), and the new database's store.
pub async fn scratch_database(name: &str) -> Option<(Store, Store)> {
    let base = postgres_base()?;
    let admin = Store::open(&base)
        .await
        .expect("connect to RELAY_TEST_POSTGRES");
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        run(&admin, sql).await;
    }
    let url = match base.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => panic!("RELAY_TEST_POSTGRES has no database part"),
    };
    let store = Store::open(&url).await.expect("open postgres");
    Some((admin, store))
}

/// Closes the test's store and drops its database.
pub async fn drop_database(admin: &Store, name: &str, store: Store) {
    if let Store::Postgres(p) = store {
        p.close().await;
    }
    run(admin, format!("DROP DATABASE IF EXISTS {name}")).await;
}

async fn run(admin: &Store, sql: String) {
    let Store::Postgres(pool) = admin else {
        panic!("RELAY_TEST_POSTGRES must be a postgres:// URL")
    };
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}
