//! One storage story, told against SQLite and against the real PostgreSQL: a tournament, a
//! round with pairings, a real game's moves with clocks, a correction, the result, and the
//! round's PGN read back.
//!
//! PostgreSQL runs when `RELAY_TEST_POSTGRES` holds a URL of a server where this user may create
//! databases (e.g. `postgres://postgres@127.0.0.1/test`); otherwise the test says it skips it,
//! or fails under `RELAY_REQUIRE_ALL=1`.

// relay-core's test support: the real capture and its replay, written once for both crates.
#[path = "../../core/tests/support/mod.rs"]
mod support;

mod pg;
use pg::postgres_base;

use relay_core::pgn::{WriteOptions, write_game};
use relay_store::{GameId, RoundId, Seq, TournamentId};
use relay_store::{
    NewTournament, Op, Pairing, Player, RawEntry, SqliteCommits, Store, StoreError, StoredMove,
    to_game,
};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, EnPassantMode};

/// The real game from the capture, as the recorder made it (or a short one without the data).
fn recorded_game() -> relay_core::game::Game {
    if let Some(messages) = support::johan_messages() {
        let (games, _) = support::replay_messages(messages);
        return games.into_iter().next().expect("one game");
    }
    relay_core::pgn::read_game(
        "1. e4 {[%clk 0:05:09]} e5 {[%clk 0:05:09]} 2. Nf3 {[%clk 0:05:12]} *",
    )
    .expect("pgn")
}

fn stored_moves(g: &relay_core::game::Game) -> Vec<StoredMove> {
    let mut pos = g.start.clone();
    g.moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            use shakmaty::Position;
            pos.play_unchecked(m.mv);
            StoredMove {
                ply: i as u32 + 1,
                san: m.san.to_string(),
                uci: m.mv.to_uci(CastlingMode::Standard).to_string(),
                clk_ms: m.clk.map(|c| c.millis()),
                emt_ms: m.emt.map(|c| c.millis()),
                accepted_at_ms: 1_000 * i as i64,
                fen_after: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
            }
        })
        .collect()
}

async fn story(store: &Store) {
    let t = store
        .create_tournament(&NewTournament {
            name: "Tata Steel \"Masters\"".into(),
            site: Some("Wijk aan Zee".into()),
            delay_secs: 900,
            ..Default::default()
        })
        .await
        .expect("tournament");
    let r = store
        .create_round(t, "5", Some("2026.11.21"))
        .await
        .expect("round");
    assert!(
        matches!(
            store.create_round(t, "5", None).await,
            Err(StoreError::Conflict(_))
        ),
        "a round number once"
    );
    assert!(matches!(
        store
            .create_round(TournamentId::from(t.get() + 999), "1", None)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    let player = |name: &str, elo| Player {
        name: Some(name.into()),
        title: Some("GM".into()),
        rating: Some(elo),
        fide_id: Some(1_503_014),
        federation: Some("NOR".into()),
        ..Player::default()
    };
    let g1 = store
        .set_pairing(
            r,
            &Pairing {
                board_no: 1,
                white: player("Carlsen, Magnus", 2830),
                black: player("Giri, Anish", 2760),
            },
        )
        .await
        .expect("board 1");
    let g2 = store
        .set_pairing(
            r,
            &Pairing {
                board_no: 2,
                white: player("So, Wesley", 2750),
                black: player("Caruana, Fabiano", 2800),
            },
        )
        .await
        .expect("board 2");
    assert_ne!(g1, g2);

    // The moves, each durably with a new change number (the two pairings were changes 1, 2).
    let game = recorded_game();
    let moves = stored_moves(&game);
    let mut last_seq = 2;
    assert_eq!(store.game(g1).await.expect("game").status, "pending");
    for m in &moves {
        let seq = store.record_move(g1, m).await.expect("move");
        assert_eq!(
            seq,
            Seq::from(last_seq + 1),
            "change numbers count up with each commit"
        );
        last_seq = seq.get();
    }
    // The first move made the game live; the other board has none and waits.
    assert_eq!(store.game(g1).await.expect("game").status, "live");
    assert_eq!(store.game(g2).await.expect("game").status, "pending");
    // The same ply again (a replay after a crash): refused, never twice.
    assert!(matches!(
        store.record_move(g1, &moves[0]).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store.record_move(GameId::from(9_999_999), &moves[0]).await,
        Err(StoreError::NotFound { .. })
    ));
    // A group commit whose last move is refused writes none of the others: board 2's first
    // move, planned beside board 1's replay, is not there and board 2 is still waiting.
    assert!(matches!(
        store
            .commit(
                &[],
                &[
                    Op::Move {
                        game: g2,
                        m: moves[0].clone()
                    },
                    Op::Move {
                        game: g1,
                        m: moves[0].clone()
                    },
                ],
            )
            .await,
        Err(StoreError::Conflict(_))
    ));
    let g2_now = store.game(g2).await.expect("game 2");
    assert!(g2_now.moves.is_empty() && g2_now.status == "pending");
    // Refused changes took no change number and left no record; each stored move left one,
    // saying which move it was.
    let log = store
        .changes_since(r, Seq::from(2), 1000)
        .await
        .expect("changes");
    assert_eq!(log.last().map(|c| c.seq.get()), Some(last_seq));
    assert_eq!(log.len(), moves.len());
    for (c, m) in log.iter().zip(&moves) {
        assert_eq!((c.kind.as_str(), c.game_id), ("move", Some(g1)));
        let record: serde_json::Value = serde_json::from_str(&c.payload).expect("payload");
        assert_eq!(record["uci"], m.uci.as_str(), "{}", c.payload);
    }

    // A correction: the last move taken back and recorded again.
    let n = moves.len() as u32;
    let seq = store
        .truncate_moves(g1, n, "arbiter", "board misread")
        .await
        .expect("truncate");
    assert_eq!(seq, Seq::from(last_seq + 1));
    assert_eq!(
        store.game(g1).await.expect("game").moves.len(),
        moves.len() - 1
    );
    // A move's clock known after the move (the lever pressed once the move was stored): its
    // own change number, in the move's row and the log; the clock of a move no longer there
    // changes nothing and takes no number.
    let clock = |ply, clk_ms, emt_ms| Op::MoveClock {
        game: g1,
        ply,
        clk_ms,
        emt_ms,
    };
    let other = clock(1, Some(5_399_000), Some(61_000));
    assert_eq!(
        store.commit_one(other).await.expect("clock"),
        Some((seq + 1).get())
    );
    let gone = clock(n, Some(5_399_000), Some(61_000));
    assert_eq!(store.commit_one(gone).await.expect("gone"), None);
    let first = store.game(g1).await.expect("game").moves[0].clone();
    assert_eq!(
        (first.clk_ms, first.emt_ms),
        (Some(5_399_000), Some(61_000))
    );
    let log = store.changes_since(r, seq, 10).await.expect("changes");
    assert_eq!(
        log.iter()
            .map(|c| (c.seq, c.kind.as_str()))
            .collect::<Vec<_>>(),
        vec![(seq + 1, "move_clock")]
    );
    // And back to the recorded clock (the export below compares the clocks with the record).
    let back = clock(1, moves[0].clk_ms, moves[0].emt_ms);
    assert_eq!(
        store.commit_one(back).await.expect("clock"),
        Some((seq + 2).get())
    );
    store
        .record_move(g1, &moves[moves.len() - 1])
        .await
        .expect("re-record");
    let seq = store
        .set_result(g1, "1-0", Some("time forfeit"), "confirmed", "arbiter")
        .await
        .expect("result");

    // A client that saw change 3 asks for the rest: exactly what followed, in order.
    let changes = store
        .changes_since(r, Seq::from(3), 1000)
        .await
        .expect("changes");
    assert_eq!(changes.first().map(|c| c.seq.get()), Some(4));
    assert_eq!(changes.last().map(|c| c.seq), Some(seq));
    assert!(changes.windows(2).all(|w| w[1].seq == w[0].seq + 1));
    let trail = store.audit_trail(g1).await.expect("audit");
    assert_eq!(
        trail.iter().map(|a| a.action.as_str()).collect::<Vec<_>>(),
        vec!["truncate", "result"]
    );

    // The black box: raw messages in, in order out.
    let raw = vec![
        RawEntry {
            port: "/dev/ttyACM0".into(),
            serial: Some("01025".into()),
            received_at_ms: 10,
            bytes: vec![0x8E, 0, 5, 0x34, 0],
        },
        RawEntry {
            port: "/dev/ttyACM0".into(),
            serial: Some("01025".into()),
            received_at_ms: 20,
            bytes: vec![0x8E, 0, 5, 0x24, 1],
        },
    ];
    store.log_raw(&raw).await.expect("raw log");
    assert_eq!(store.raw_log("/dev/ttyACM0").await.expect("raw"), raw);

    // The round's PGN: the game as recorded, with its players and clocks.
    let games = store.round_games(r).await.expect("round");
    assert_eq!(
        games.iter().map(|g| g.pairing.board_no).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(games[0].status, "confirmed");
    let back = to_game(
        &games[0],
        "Tata Steel \"Masters\"",
        Some("Wijk aan Zee"),
        "5",
    );
    let pgn = write_game(&back, &WriteOptions::default());
    assert!(
        pgn.contains("[Event \"Tata Steel \\\"Masters\\\"\"]"),
        "{pgn}"
    );
    assert!(
        pgn.contains("[Round \"5.1\"]")
            && pgn.contains("[White \"Carlsen, Magnus\"]")
            && pgn.contains("[WhiteElo \"2830\"]"),
        "{pgn}"
    );
    assert!(
        pgn.contains("[Termination \"time forfeit\"]") && pgn.contains("[Result \"1-0\"]"),
        "{pgn}"
    );
    let want: Vec<(String, Option<u64>)> = game
        .moves
        .iter()
        .map(|m| (m.san.to_string(), m.clk.map(|c| c.millis())))
        .collect();
    let got: Vec<(String, Option<u64>)> = back
        .moves
        .iter()
        .map(|m| (m.san.to_string(), m.clk.map(|c| c.millis())))
        .collect();
    assert_eq!(got, want, "moves and clocks read back");
    assert!(store.ping().await);
    arbiters_record(store).await;
}

/// A game's record: an illegal move and a correction stored with a group commit, listed as
/// open for the round until the arbiter rules, the ruling in the audit trail; a ruling on an
/// incident that does not exist is refused.
async fn arbiters_record(store: &Store) {
    let t = store
        .create_tournament(&NewTournament {
            name: "Record".into(),
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
        .expect("pairing");
    let illegal = relay_store::Incident {
        kind: relay_store::IncidentKind::IllegalMove,
        ply: 1,
        color: relay_store::Side::White,
        illegal: Some(relay_core::incident::IllegalKind::PressWithoutMove),
        clock_pressed: true,
        at_ms: 5,
        ..Default::default()
    };
    let seqs = store
        .commit(
            &[],
            &[Op::Incident {
                game: g,
                incident: illegal,
            }],
        )
        .await
        .expect("stored");
    let id = seqs[0].expect("an id");
    let open = store.open_illegal_moves(r).await.expect("open");
    assert_eq!(open.iter().map(|i| i.id).collect::<Vec<_>>(), [id]);
    assert_eq!(open[0].game_id, g);
    let ruled = store
        .rule_incident(id, relay_store::Ruling::Dismissed, "arbiter")
        .await
        .expect("ruled");
    assert_eq!(ruled.ruling, Some(relay_store::Ruling::Dismissed));
    assert!(store.open_illegal_moves(r).await.expect("open").is_empty());
    let trail = store.audit_trail(g).await.expect("trail");
    assert!(
        trail
            .iter()
            .any(|e| e.action == "incident_ruling" && e.detail.contains("dismissed")),
        "{trail:?}"
    );
    assert!(matches!(
        store
            .rule_incident(id + 1000, relay_store::Ruling::Dismissed, "arbiter")
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

/// The writer's own SQLite connection commits what `Store::commit` commits: the same batches,
/// the refused ones included, answer the same (change numbers, or the same refusal) and leave
/// the same games, change log, audit trail and black box. sqlx's path is the reference; the
/// direct one runs every group commit of a relay on SQLite.
#[tokio::test]
async fn the_writers_own_sqlite_connection_commits_as_the_store_does() {
    let (dir_a, url_a) = sqlite_in("commit-sqlx");
    let (dir_b, url_b) = sqlite_in("commit-direct");
    let store_a = Store::open(&url_a).await.expect("open a");
    let store_b = Store::open(&url_b).await.expect("open b");
    let mut direct = SqliteCommits::open(&url_b)
        .expect("open the writer's connection")
        .expect("a SQLite file has one");
    assert!(
        SqliteCommits::open("postgres://relay@127.0.0.1/relay")
            .expect("pg")
            .is_none()
    );
    assert!(
        SqliteCommits::open("sqlite::memory:")
            .expect("memory")
            .is_none()
    );

    let mut ids = Vec::new();
    for store in [&store_a, &store_b] {
        let t = store
            .create_tournament(&NewTournament {
                name: "Group commits".into(),
                ..Default::default()
            })
            .await
            .expect("tournament");
        let r = store.create_round(t, "1", None).await.expect("round");
        let mut games = Vec::new();
        for board_no in 1..=2 {
            let pairing = Pairing {
                board_no,
                ..Default::default()
            };
            games.push(store.set_pairing(r, &pairing).await.expect("pairing"));
        }
        ids.push((r, games));
    }
    assert_eq!(ids[0], ids[1], "the two databases number alike");
    let (round, games) = ids[0].clone();
    let (g1, g2) = (games[0], games[1]);
    let moves = stored_moves(&recorded_game());
    let mv = |game, i: usize| Op::Move {
        game,
        m: moves[i].clone(),
    };
    let raw = |serial: &str, at| RawEntry {
        port: "/dev/pts/7".into(),
        serial: Some(serial.into()),
        received_at_ms: at,
        bytes: vec![0x8E, 0, 5, 0x34, 0],
    };
    let batches: Vec<(Vec<RawEntry>, Vec<Op>)> = vec![
        // Readings and the first moves of both games: both turn live.
        (
            vec![raw("01025", 10), raw("01026", 11)],
            vec![mv(g1, 0), mv(g2, 0), mv(g1, 1)],
        ),
        // A refused batch (a ply stored already) writes none of it, readings included.
        (vec![raw("01025", 20)], vec![mv(g2, 1), mv(g1, 1)]),
        (vec![], vec![mv(GameId::from(9_999_999), 0)]),
        // A clock of a stored move, and of one that is not there (no number).
        (
            vec![raw("01026", 30)],
            vec![
                Op::MoveClock {
                    game: g1,
                    ply: 1,
                    clk_ms: Some(5_399_000),
                    emt_ms: Some(1_000),
                },
                Op::MoveClock {
                    game: g2,
                    ply: 9,
                    clk_ms: Some(1),
                    emt_ms: None,
                },
            ],
        ),
        // An arbiter's edits: one on the right version, one on a stale one (refused).
        (
            vec![],
            vec![
                Op::Guard { game: g1, edits: 0 },
                Op::Truncate {
                    game: g1,
                    from_ply: 2,
                    actor: "arbiter".into(),
                    reason: "misread".into(),
                },
            ],
        ),
        (
            vec![],
            vec![
                Op::Guard { game: g1, edits: 0 },
                Op::Truncate {
                    game: g1,
                    from_ply: 1,
                    actor: "arbiter".into(),
                    reason: "again".into(),
                },
            ],
        ),
        (
            vec![raw("01025", 40)],
            vec![
                mv(g1, 1),
                Op::Result {
                    game: g2,
                    result: "0-1".into(),
                    termination: Some("time forfeit".into()),
                    status: "finished".into(),
                    actor: "board".into(),
                },
            ],
        ),
        (
            vec![],
            vec![Op::Result {
                game: GameId::from(9_999_999),
                result: "1-0".into(),
                termination: None,
                status: "finished".into(),
                actor: "arbiter".into(),
            }],
        ),
        // The arbiter's record: an incident's slot holds its id, and it is no change.
        (
            vec![raw("01025", 50)],
            vec![
                Op::Incident {
                    game: g1,
                    incident: relay_store::Incident {
                        kind: relay_store::IncidentKind::IllegalMove,
                        ply: 3,
                        color: relay_store::Side::White,
                        illegal: Some(relay_core::incident::IllegalKind::KingInCheck),
                        uci: Some("e2d4".into()),
                        piece: Some("N".into()),
                        captured: Some("p".into()),
                        clock_pressed: true,
                        at_ms: 77,
                        ..Default::default()
                    },
                },
                Op::Incident {
                    game: g1,
                    incident: relay_store::Incident {
                        kind: relay_store::IncidentKind::ClockAdjustment,
                        ply: 3,
                        color: relay_store::Side::Black,
                        delta_ms: Some(120_000),
                        at_ms: 78,
                        ..Default::default()
                    },
                },
            ],
        ),
        (
            vec![],
            vec![Op::Incident {
                game: GameId::from(9_999_999),
                incident: relay_store::Incident::default(),
            }],
        ),
    ];
    for (i, (raws, ops)) in batches.iter().enumerate() {
        let a = store_a.commit(raws, ops).await;
        let b = direct.commit(raws, ops);
        match (&a, &b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "batch {i}: change numbers"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "batch {i}: refusal"),
            _ => panic!("batch {i}: sqlx {a:?}, direct {b:?}"),
        }
    }
    for g in [g1, g2] {
        let (a, b) = (
            store_a.game(g).await.expect("a"),
            store_b.game(g).await.expect("b"),
        );
        assert_eq!(
            (&a.moves, &a.status, &a.result, &a.termination, a.edits),
            (&b.moves, &b.status, &b.result, &b.termination, b.edits),
            "game {g}"
        );
        let trail = |t: Vec<relay_store::AuditEntry>| -> Vec<(String, String, String)> {
            t.into_iter()
                .map(|e| (e.actor, e.action, e.detail))
                .collect()
        };
        assert_eq!(
            trail(store_a.audit_trail(g).await.expect("a")),
            trail(store_b.audit_trail(g).await.expect("b"))
        );
    }
    let log = |c: Vec<relay_store::Change>| -> Vec<(i64, Option<i64>, String, String)> {
        c.into_iter()
            .map(|c| {
                (
                    c.seq.get(),
                    c.game_id.map(relay_store::GameId::get),
                    c.kind,
                    c.payload,
                )
            })
            .collect()
    };
    let log_a = log(store_a
        .changes_since(round, Seq::from(0), 1000)
        .await
        .expect("a"));
    assert_eq!(
        log_a,
        log(store_b
            .changes_since(round, Seq::from(0), 1000)
            .await
            .expect("b"))
    );
    // What the story above expects of the batches: the refused ones took no number.
    assert_eq!(
        log_a.iter().map(|c| c.2.as_str()).collect::<Vec<_>>(),
        [
            "game",
            "game",
            "move",
            "move",
            "move",
            "move_clock",
            "truncate",
            "move",
            "result"
        ]
    );
    let black_box = store_b.raw_log("/dev/pts/7").await.expect("raw");
    assert_eq!(black_box, store_a.raw_log("/dev/pts/7").await.expect("raw"));
    assert_eq!(
        black_box
            .iter()
            .map(|r| r.received_at_ms)
            .collect::<Vec<_>>(),
        [10, 11, 30, 40, 50]
    );
    let record_a = store_a.game_incidents(g1).await.expect("a");
    assert_eq!(record_a, store_b.game_incidents(g1).await.expect("b"));
    assert_eq!(
        record_a
            .iter()
            .map(|i| (i.id, i.kind.as_str(), i.delta_ms))
            .collect::<Vec<_>>(),
        [
            (1, "illegal_move", None),
            (2, "clock_adjustment", Some(120_000))
        ]
    );
    assert_eq!(record_a[0].uci.as_deref(), Some("e2d4"));
    assert!(record_a[0].clock_pressed && record_a[0].ruling.is_none());
    drop((store_a, store_b, direct));
    let _ = std::fs::remove_dir_all(&dir_a);
    let _ = std::fs::remove_dir_all(&dir_b);
}

/// A new, empty scratch folder `relay-NAME-PID` and the URL of a SQLite database in it.
fn sqlite_in(name: &str) -> (std::path::PathBuf, String) {
    let dir = boards::testdata::temp_dir(name);
    let url = format!("sqlite://{}/relay.db", dir.display());
    (dir, url)
}

#[tokio::test]
async fn the_story_on_sqlite() {
    let (dir, url) = sqlite_in("store");
    let store = Store::open(&url).await.expect("open sqlite");
    story(&store).await;
    // Open again: the schema is there and nothing is applied twice.
    drop(store);
    let again = Store::open(&url).await.expect("reopen");
    assert_eq!(
        again
            .round_games(RoundId::from(1))
            .await
            .expect("games")
            .len(),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_story_on_postgres() {
    let name = format!("relay_story_{}", std::process::id());
    let Some((admin, store)) = pg::scratch_database(&name).await else {
        return;
    };
    story(&store).await;
    pg::drop_database(&admin, &name, store).await;
}

#[tokio::test]
async fn bad_urls_and_newer_databases_are_refused() {
    assert!(matches!(
        Store::open("mysql://x").await,
        Err(StoreError::BadUrl { .. })
    ));
    assert!(matches!(
        Store::open("postgres://nobody@127.0.0.1:1/none").await,
        Err(StoreError::Connect(_))
    ));
    let (dir, url) = sqlite_in("store-newer");
    let store = Store::open(&url).await.expect("open");
    let Store::Sqlite(pool) = &store else {
        unreachable!()
    };
    sqlx::query("INSERT INTO relay_schema (version) VALUES (99)")
        .execute(pool)
        .await
        .expect("pretend newer");
    drop(store);
    let err = Store::open(&url).await.expect_err("newer schema refused");
    assert!(err.to_string().contains("newer relay"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Wrong credentials on the real server: a user that does not exist, one that may not log in,
/// and one that may log in but not create the schema. Each is a clear error at opening, and
/// the database is left as it was (the migration's transaction is rolled back).
#[tokio::test]
async fn wrong_postgres_credentials_are_refused_and_change_nothing() {
    let Some(base) = postgres_base() else {
        return;
    };
    let pid = std::process::id();
    let (db, nologin, limited) = (
        format!("relay_creds_{pid}"),
        format!("relay_nologin_{pid}"),
        format!("relay_limited_{pid}"),
    );
    let admin = Store::open(&base)
        .await
        .expect("connect to RELAY_TEST_POSTGRES");
    let Store::Postgres(pool) = &admin else {
        panic!("RELAY_TEST_POSTGRES must be a postgres:// URL")
    };
    let run = |sql: String| async move {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
            .execute(pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    };
    let cleanup = format!(
        "DROP DATABASE IF EXISTS {db}; DROP ROLE IF EXISTS {nologin}; DROP ROLE IF EXISTS {limited}"
    );
    for stmt in cleanup.split("; ") {
        run(stmt.to_string()).await;
    }
    run(format!("CREATE DATABASE {db}")).await;
    run(format!("CREATE ROLE {nologin} NOLOGIN")).await;
    // PostgreSQL 15 and later: ordinary users may connect but not create in `public`.
    run(format!("CREATE ROLE {limited} LOGIN")).await;

    let (server, _) = base
        .rsplit_once('/')
        .expect("RELAY_TEST_POSTGRES has a database part");
    let host = server.rsplit_once('@').map_or(server, |(_, h)| h);
    let as_user = |user: &str| format!("postgres://{user}@{host}/{db}");

    let err = Store::open(&as_user(&format!("relay_nobody_{pid}")))
        .await
        .expect_err("an unknown user is refused");
    println!("unknown user: {err}");
    assert!(matches!(err, StoreError::Connect(_)), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");

    let err = Store::open(&as_user(&nologin))
        .await
        .expect_err("a user that may not log in is refused");
    println!("no login: {err}");
    assert!(err.to_string().contains("not permitted to log in"), "{err}");

    let err = Store::open(&as_user(&limited))
        .await
        .expect_err("a user without the right to create the schema is refused");
    println!("no rights: {err}");
    assert!(matches!(err, StoreError::Schema(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("permission denied for schema public"),
        "{err}"
    );

    // Nothing was made in the database by any of them (a plain connection: opening a Store
    // as the admin would migrate it).
    let conn = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&format!("{server}/{db}"))
        .await
        .expect("connect to look");
    let (tables,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_one(&conn)
    .await
    .expect("count tables");
    conn.close().await;
    assert_eq!(tables, 0, "a refused opening left tables behind");

    for stmt in cleanup.split("; ") {
        run(stmt.to_string()).await;
    }
    if let Store::Postgres(p) = admin {
        p.close().await;
    }
}

/// The writer's store never checkpoints inside a commit (a checkpoint there made that commit
/// and every move behind it late); a checkpoint from the readers' store copies the whole WAL
/// into the database file, and nothing is lost on the way.
#[tokio::test]
async fn the_writer_leaves_the_wal_to_the_readers_checkpoint() {
    let (dir, url) = sqlite_in("checkpoint");
    let readers = Store::open(&url).await.expect("open sqlite");
    let writer = Store::open_writer(&url).await.expect("open the writer");
    let wal = dir.join("relay.db-wal");
    // 80 MB, twice the readers' automatic threshold (10,000 pages): a WAL past 60 MB was never
    // started again from its beginning by a checkpoint.
    let entry = |i: i64| RawEntry {
        port: "/dev/ttyUSB0".into(),
        serial: Some("4242".into()),
        received_at_ms: i,
        bytes: vec![(i % 251) as u8; 4096],
    };
    for chunk in 0..200 {
        let batch: Vec<RawEntry> = (0..100).map(|i| entry(chunk * 100 + i)).collect();
        writer.log_raw(&batch).await.expect("log");
    }
    let before = std::fs::metadata(&wal).expect("the WAL").len();
    assert!(
        before > 60 << 20,
        "WAL of {before} bytes: the writer checkpointed"
    );
    let Store::Sqlite(pool) = &readers else {
        unreachable!("opened on SQLite")
    };
    readers.checkpoint().await.expect("checkpoint");
    // After a complete checkpoint the next write starts the WAL again from its beginning.
    let (busy, frames, copied): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(pool)
        .await
        .expect("checkpoint state");
    assert_eq!((busy, frames), (0, copied), "every frame copied");
    assert_eq!(
        readers.raw_log("/dev/ttyUSB0").await.expect("read").len(),
        20_000
    );
    drop((readers, writer));
    let _ = std::fs::remove_dir_all(&dir);
}
