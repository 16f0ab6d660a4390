//! Tournaments from pairing programs' files, through the store: every file of
//! `shared/data/pairings/` imported, written back as TRF and read by an outside reader
//! (caissify-pairings), which must find the same players, pairings with colours, results, byes
//! and points as in the original file; importing again after the next pairing adds the round
//! and keeps what the boards recorded; a conflicting file is refused and changes nothing.
//! On SQLite always; on PostgreSQL when `RELAY_TEST_POSTGRES` is set (else skipped with a
//! notice, or a failure under `RELAY_REQUIRE_ALL=1`).

#[path = "../../core/tests/referees/mod.rs"]
mod referees;

use referees::{FILES, as_paired, available, data, file, referee};
use relay_core::trf::{Cell, read_trf, write_trf};
use relay_store::{Store, StoredMove};
use serde_json::Value;
use std::path::Path;

/// A cell as the referee reads it, with every "nobody, no points" form as one.
fn cell(c: Option<&Value>) -> String {
    let Some(c) = c else { return "zero".into() };
    match c["opponent"].as_u64() {
        Some(o) => format!(
            "{o} {} {}",
            c["color"].as_str().unwrap_or(""),
            c["result"].as_str().unwrap_or("").to_uppercase()
        ),
        None => match c["result"].as_str().unwrap_or("").to_uppercase().as_str() {
            "" | "-" | "Z" => "zero".into(),
            r => format!("bye {r}"),
        },
    }
}

/// The outside reader finds the same in relay's TRF as in the original, with these allowances:
/// a blank, `-` or `Z` bye are all "nobody, no points"; a blank bye that scored (the points
/// column says so) is written as the `H`/`F` it was; a team's reserve sitting out is absent.
fn same_reading(name: &str, original: &Value, ours: &Value) -> usize {
    let (a, b) = (
        original["players"].as_array().expect("players"),
        ours["players"].as_array().expect("players"),
    );
    assert_eq!(a.len(), b.len(), "{name}: players");
    let mut cells = 0;
    for (pa, pb) in a.iter().zip(b) {
        let rank = pa["start_rank"].as_u64().expect("rank");
        assert_eq!(rank, pb["start_rank"].as_u64().expect("rank"));
        for k in ["name", "rating", "federation", "fide_id", "points"] {
            assert_eq!(pa[k], pb[k], "{name} player {rank}: {k}");
        }
        let rounds = pa["results"].as_object().map_or(0, |m| {
            m.keys()
                .filter_map(|k| k.parse::<usize>().ok())
                .max()
                .unwrap_or(0)
        });
        let rounds = rounds.max(pb["results"].as_object().map_or(0, |m| {
            m.keys()
                .filter_map(|k| k.parse::<usize>().ok())
                .max()
                .unwrap_or(0)
        }));
        for r in 1..=rounds {
            let (ca, cb) = (
                cell(pa["results"].get(r.to_string())),
                cell(pb["results"].get(r.to_string())),
            );
            let scored_blank = ca == "zero" && (cb == "bye H" || cb == "bye F");
            assert!(
                ca == cb || scored_blank,
                "{name} player {rank} round {r}: file {ca:?}, relay {cb:?}"
            );
            cells += 1;
        }
    }
    cells
}

async fn every_file(store: &Store, dir: &Path) {
    for name in FILES {
        let bytes = std::fs::read(file(name)).expect("file");
        let trf = read_trf(&bytes).expect("reads");
        let done = store
            .import_trf(&trf, &bytes, None, "test", name)
            .await
            .expect("import");
        let back = store.trf_of(done.tournament_id).await.expect("trf of");
        let path = dir.join(name);
        std::fs::write(&path, write_trf(&back)).expect("write");
        let cells = same_reading(name, &referee("read", &file(name)), &referee("read", &path));
        println!(
            "{name}: {} players, {} rounds, {} games, {} results, {} byes; {cells} cells read alike",
            done.players,
            done.rounds_added.len(),
            done.games_added,
            done.results_taken,
            done.byes
        );
        // Each round's boards are the file's pairings; the games carry identity.
        let t = store
            .tournament(done.tournament_id)
            .await
            .expect("tournament");
        let first = store.round_games(t.rounds[0].id).await.expect("games");
        let g = &first[0];
        assert!(g.pairing.white.start_rank.is_some() && g.pairing.black.start_rank.is_some());
        let p = trf
            .player(g.pairing.white.start_rank.unwrap_or(0))
            .expect("player");
        assert_eq!(g.pairing.white.name.as_deref(), Some(p.name.as_str()));
        assert_eq!(g.pairing.white.fide_id, p.fide_id);
        // Importing the same file again changes nothing recorded and adds nothing.
        let again = store
            .import_trf(&trf, &bytes, Some(done.tournament_id), "test", name)
            .await
            .expect("again");
        assert!(
            again.rounds_added.is_empty() && again.games_added == 0 && again.results_taken == 0,
            "{name}: {again:?}"
        );
        assert!(
            again.results_kept.is_empty(),
            "{name}: {:?}",
            again.results_kept
        );
    }
}

fn a_move(ply: u32) -> StoredMove {
    let (san, uci, fen) = if ply == 1 {
        (
            "e4",
            "e2e4",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        )
    } else {
        (
            "e5",
            "e7e5",
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        )
    };
    StoredMove {
        ply,
        san: san.into(),
        uci: uci.into(),
        clk_ms: Some(5_000_000),
        emt_ms: Some(3000),
        accepted_at_ms: 1,
        fen_after: fen.into(),
    }
}

async fn again_after_each_pairing(store: &Store) {
    let bytes = std::fs::read(file("javafo_sample2_gros_2010.trf")).expect("file");
    let full = read_trf(&bytes).expect("reads");
    // Round 3 just paired.
    let r3 = as_paired(&full, 3);
    let r3_bytes = write_trf(&r3).into_bytes();
    let done = store
        .import_trf(&r3, &r3_bytes, None, "arbiter", "after round 3 paired")
        .await
        .expect("import");
    let t = store.tournament(done.tournament_id).await.expect("t");
    assert_eq!(t.rounds.len(), 3);
    let round3 = t.rounds[2].id;
    let games = store.round_games(round3).await.expect("games");
    assert!(games.iter().all(|g| g.result == "*"));
    // Board 1 is played on an e-board: two moves, and the arbiter's result differs from what
    // the file will say.
    let g1 = &games[0];
    store
        .replace_moves(g1.id, &[a_move(1), a_move(2)], "board")
        .await
        .expect("moves");
    let file_says = match full
        .player(g1.pairing.white.start_rank.expect("rank"))
        .expect("p")
        .cells[2]
    {
        Cell::Game {
            outcome: Some(o), ..
        } => o.code(),
        _ => panic!("round 3 was played"),
    };
    let ours = if file_says == '1' { "0-1" } else { "1-0" };
    store
        .set_result(g1.id, ours, None, "confirmed", "arbiter")
        .await
        .expect("result");
    // Round 4 paired: the pairing program's file has round 3's results and round 4.
    let r4 = as_paired(&full, 4);
    let r4_bytes = write_trf(&r4).into_bytes();
    let again = store
        .import_trf(
            &r4,
            &r4_bytes,
            Some(done.tournament_id),
            "arbiter",
            "after round 4 paired",
        )
        .await
        .expect("again");
    assert_eq!(again.rounds_added, vec!["4".to_string()]);
    assert_eq!(again.results_kept.len(), 1, "{again:?}");
    let g1_after = store.game(g1.id).await.expect("g1");
    assert_eq!(g1_after.moves.len(), 2, "the board's moves stay");
    assert_eq!(g1_after.result, ours, "the board's result stays");
    let others = store.round_games(round3).await.expect("games");
    assert!(
        others
            .iter()
            .filter(|g| g.id != g1.id)
            .all(|g| g.result != "*" || g.termination.is_some())
    );
    // A file that pairs board 1's players differently in round 3 is refused; nothing changes.
    let mut wrong = r4.clone();
    let (w, b) = (
        g1.pairing.white.start_rank.expect("w"),
        g1.pairing.black.start_rank.expect("b"),
    );
    // Swap the black player of board 1 with the black player of board 2.
    let g2 = &others
        .iter()
        .find(|g| g.pairing.board_no == 2)
        .expect("board 2");
    let (w2, b2) = (
        g2.pairing.white.start_rank.expect("w2"),
        g2.pairing.black.start_rank.expect("b2"),
    );
    for p in &mut wrong.players {
        let new_opp = match p.start_rank {
            x if x == w => Some(b2),
            x if x == b2 => Some(w),
            x if x == w2 => Some(b),
            x if x == b => Some(w2),
            _ => None,
        };
        if let (Some(o), Some(Cell::Game { opponent, .. })) = (new_opp, p.cells.get_mut(2)) {
            *opponent = o;
        }
    }
    let before = store.round_games(round3).await.expect("games");
    let players_before = store
        .tournament_players(done.tournament_id, &Default::default())
        .await
        .expect("players");
    let wrong_bytes = write_trf(&wrong).into_bytes();
    let e = store
        .import_trf(
            &wrong,
            &wrong_bytes,
            Some(done.tournament_id),
            "arbiter",
            "wrong",
        )
        .await
        .expect_err("refused");
    let msg = e.to_string();
    assert!(msg.contains("round 3 board 1"), "{msg}");
    assert_eq!(store.round_games(round3).await.expect("games"), before);
    assert_eq!(
        store
            .tournament_players(done.tournament_id, &Default::default())
            .await
            .expect("players"),
        players_before
    );
    // Points as a delayed broadcast's public sees them: a result counts once it is older than
    // the round's cutoff.
    let rounds = store
        .tournament(done.tournament_id)
        .await
        .expect("t")
        .rounds;
    let sum = |ps: Vec<relay_store::TournamentPlayer>| ps.iter().map(|p| p.points).sum::<f64>();
    let cut = |at: i64| {
        rounds
            .iter()
            .map(|r| (r.id, at))
            .collect::<std::collections::HashMap<_, _>>()
    };
    let live = sum(store
        .tournament_players(done.tournament_id, &Default::default())
        .await
        .expect("p"));
    let before = sum(store
        .tournament_players(done.tournament_id, &cut(0))
        .await
        .expect("p"));
    let later = sum(store
        .tournament_players(done.tournament_id, &cut(i64::MAX))
        .await
        .expect("p"));
    assert!(
        before < live,
        "results set after the cutoff still counted: {before} of {live}"
    );
    assert_eq!(later, live);
    // The audit trail says who imported what.
    let audit = store.audit_all(None, 100).await.expect("audit");
    let ours = format!("\"tournament\":{}", done.tournament_id);
    let imports: Vec<_> = audit
        .iter()
        .filter(|a| a.entry.action == "trf_import" && a.entry.detail.contains(&ours))
        .collect();
    assert_eq!(imports.len(), 2);
    assert!(
        imports
            .iter()
            .any(|a| a.entry.detail.contains("after round 4 paired") && a.entry.actor == "arbiter")
    );
}

/// An arbiter renumbers boards of a round from a file: swapping two, never under an e-board.
async fn renumbering(store: &Store) {
    let bytes = std::fs::read(file("vega_sample_tournament.trfx")).expect("file");
    let trf = read_trf(&bytes).expect("reads");
    let done = store
        .import_trf(&trf, &bytes, None, "arbiter", "vega")
        .await
        .expect("import");
    let t = store.tournament(done.tournament_id).await.expect("t");
    let round = t.rounds[0].id;
    let before = store.round_games(round).await.expect("games");
    let (g1, g2) = (&before[0], &before[1]);
    let moved = store
        .renumber_board(g1.id, 2, "arbiter")
        .await
        .expect("renumber");
    assert_eq!(moved.len(), 2);
    let after = store.round_games(round).await.expect("games");
    assert_eq!(after[0].id, g2.id, "board 1 is the other game now");
    assert_eq!(after[1].id, g1.id);
    // A board number nobody has: the game just moves.
    store
        .renumber_board(g1.id, 9, "arbiter")
        .await
        .expect("to 9");
    assert_eq!(store.game(g1.id).await.expect("g").pairing.board_no, 9);
    // Under an e-board, no.
    store.assign(round, 3, "00042", None).await.expect("assign");
    let e = store
        .renumber_board(g1.id, 3, "arbiter")
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("e-board 00042"), "{e}");
    assert_eq!(store.game(g1.id).await.expect("g").pairing.board_no, 9);
    // And the TRF written back is the same whatever the board numbers.
    let back = store.trf_of(done.tournament_id).await.expect("trf");
    assert_eq!(back.players[0].cells, trf.players[0].cells);
}

async fn all(store: &Store, dir: &Path) {
    renumbering(store).await;
    every_file(store, dir).await;
    again_after_each_pairing(store).await;
}

#[tokio::test]
async fn trf_files_on_sqlite() {
    if data(FILES[0]).is_none() || !available() {
        return;
    }
    let dir = boards::testdata::temp_dir("trf-sqlite");
    let store = Store::open(&format!("sqlite://{}/relay.db", dir.display()))
        .await
        .expect("open");
    all(&store, &dir).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn trf_files_on_postgres() {
    let Ok(base) = std::env::var("RELAY_TEST_POSTGRES") else {
        if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!("RELAY_TEST_POSTGRES is not set but RELAY_REQUIRE_ALL=1");
        }
        println!("skipping: RELAY_TEST_POSTGRES not set");
        return;
    };
    if data(FILES[0]).is_none() || !available() {
        return;
    }
    let name = format!("relay_trf_{}", std::process::id());
    let admin = Store::open(&base).await.expect("connect");
    let Store::Postgres(pool) = &admin else {
        panic!("RELAY_TEST_POSTGRES must be postgres://")
    };
    let drop = format!("DROP DATABASE IF EXISTS {name}");
    sqlx_exec(pool, &drop).await;
    sqlx_exec(pool, &format!("CREATE DATABASE {name}")).await;
    let url = match base.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => panic!("RELAY_TEST_POSTGRES has no database part"),
    };
    let store = Store::open(&url).await.expect("open");
    let dir = boards::testdata::temp_dir("trf-postgres");
    all(&store, &dir).await;
    if let Store::Postgres(p) = store {
        p.close().await;
    }
    sqlx_exec(pool, &drop).await;
    let _ = std::fs::remove_dir_all(&dir);
}

async fn sqlx_exec(pool: &sqlx::PgPool, sql: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(pool)
        .await
        .expect(sql);
}
