//! Durable moves per second: `Store::record_move` (insert + change number + commit, each move
//! its own transaction, as live play needs) against the raw ceiling of the same database
//! (one-row INSERT + commit), for SQLite and, with `RELAY_TEST_POSTGRES` set, PostgreSQL.
//!
//! `cargo bench -p relay-store --bench durable`; `DURABLE_BENCH_SECS` sets the time per figure.

use relay_store::{NewTournament, Pairing, Store, StoredMove};
use std::time::{Duration, Instant};

fn secs() -> f64 {
    let full = std::env::args().any(|a| a == "--bench");
    std::env::var("DURABLE_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if full { 3.0 } else { 0.2 })
}

async fn measure(store: &Store, label: &str, durability: String) {
    let t = store
        .create_tournament(&NewTournament {
            name: "bench".into(),
            ..Default::default()
        })
        .await
        .expect("tournament");
    let r = store.create_round(t, "1", None).await.expect("round");
    let g = store
        .set_pairing(
            r,
            &Pairing {
                board_no: 1,
                ..Default::default()
            },
        )
        .await
        .expect("game");
    let limit = Duration::from_secs_f64(secs());
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed() < limit {
        n += 1;
        let m = StoredMove {
            ply: n,
            san: "Nf3".into(),
            uci: "g1f3".into(),
            clk_ms: Some(5_400_000),
            emt_ms: Some(12_000),
            accepted_at_ms: i64::from(n),
            fen_after: "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1".into(),
        };
        store.record_move(g, &m).await.expect("record");
    }
    let moves = f64::from(n) / start.elapsed().as_secs_f64();
    // The ceiling: a bare one-row INSERT, committed, on the same database.
    let start = Instant::now();
    // One text for both backends (BIGINT is an integer column in SQLite too); a macro because
    // the two pools are different types.
    macro_rules! ceiling_loop {
        ($pool:expr) => {{
            sqlx::query("CREATE TABLE IF NOT EXISTS bench_ceiling (x BIGINT)")
                .execute($pool)
                .await
                .expect("table");
            let mut k = 0u64;
            while start.elapsed() < limit {
                let mut tx = $pool.begin().await.expect("begin");
                sqlx::query("INSERT INTO bench_ceiling (x) VALUES ($1)")
                    .bind(k as i64)
                    .execute(&mut *tx)
                    .await
                    .expect("insert");
                tx.commit().await.expect("commit");
                k += 1;
            }
            k
        }};
    }
    let k = match store {
        Store::Sqlite(pool) => ceiling_loop!(pool),
        Store::Postgres(pool) => ceiling_loop!(pool),
    };
    let ceiling = k as f64 / start.elapsed().as_secs_f64();
    println!(
        "{label:<10} {moves:>8.0} durable moves/s   ceiling {ceiling:>8.0} INSERT+commit/s   ({durability})"
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = std::env::temp_dir().join(format!("relay-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let sqlite = Store::open(&format!("sqlite://{}/bench.db", dir.display()))
        .await
        .expect("sqlite");
    measure(
        &sqlite,
        "sqlite",
        "WAL, synchronous=FULL: every commit is on disk".into(),
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    match std::env::var("RELAY_TEST_POSTGRES") {
        Ok(url) => match Store::open(&url).await {
            Ok(pg) => {
                let setting = |name: &'static str| {
                    let pg = pg.clone();
                    async move {
                        let Store::Postgres(pool) = &pg else {
                            return String::new();
                        };
                        let q = match name {
                            "fsync" => "SHOW fsync",
                            _ => "SHOW synchronous_commit",
                        };
                        sqlx::query_scalar::<_, String>(q)
                            .fetch_one(pool)
                            .await
                            .unwrap_or_default()
                    }
                };
                let durability = format!(
                    "fsync={}, synchronous_commit={}",
                    setting("fsync").await,
                    setting("sync").await
                );
                measure(&pg, "postgres", durability).await;
            }
            Err(e) => println!("postgres: cannot open RELAY_TEST_POSTGRES: {e}"),
        },
        Err(_) => println!("postgres: RELAY_TEST_POSTGRES not set, skipped"),
    }
}
