//! Several halls, one event, as the cloud's store sees it: venues pushing tournaments with one
//! event key fill one tournament (rounds by number, each hall on its own boards); a board two
//! halls claim is held back as a clash, reported to that venue and in `mirror_sources`, until
//! it is placed on a free board; a venue that names its event after its first pushes moves
//! into the event and is asked to send everything again. Against SQLite, and the real
//! PostgreSQL when `RELAY_TEST_POSTGRES` is set.

mod pg;

use relay_store::{GameId, RoundId};
use relay_store::{PushBatch, PushReply, Store, StoreError};
use serde_json::{Value, json};

fn tournament(id: i64, key: Option<&str>, name: &str, delay: u32, rounds: &[(i64, &str)]) -> Value {
    json!({
        "id": id, "name": name, "site": null, "start_date": "2026-11-28", "end_date": null,
        "time_control": null, "delay_secs": delay, "event_key": key,
        "rounds": rounds.iter().map(|(rid, number)| json!({
            "id": rid, "tournament_id": id, "number": number, "date": "2026-11-28",
            "delay_secs": null, "final": false, "seq": 0, "auto": true,
        })).collect::<Vec<_>>(),
    })
}

fn game(id: i64, round: i64, board: u32, white: &str, moves: &[(&str, &str)]) -> Value {
    json!({
        "id": id, "round_id": round,
        "pairing": {"board_no": board,
            "white": {"name": white, "title": null, "rating": null, "fide_id": null, "federation": null},
            "black": {"name": format!("{white}'s opponent"), "title": null, "rating": null, "fide_id": null, "federation": null}},
        "result": "*", "termination": null, "status": "live", "start_fen": null, "chess960": false,
        "orientation": null, "result_at_ms": null, "edits": 0,
        "moves": moves.iter().enumerate().map(|(i, (uci, san))| json!({
            "ply": i + 1, "san": san, "uci": uci, "clk_ms": 5_400_000 - 1000 * i as u64, "emt_ms": 1000,
            "accepted_at_ms": 1000 * i as i64, "fen_after": "",
        })).collect::<Vec<_>>(),
    })
}

fn batch(origin: &str, n: i64, tournaments: Vec<Value>, games: Vec<Value>) -> PushBatch {
    serde_json::from_value(json!({
        "origin": origin, "name": origin, "batch": n, "tournaments": tournaments, "games": games,
    }))
    .expect("batch")
}

const E4: &[(&str, &str)] = &[("e2e4", "e4")];
const E4E5: &[(&str, &str)] = &[("e2e4", "e4"), ("e7e5", "e5")];

async fn push(store: &Store, b: &PushBatch) -> PushReply {
    store.apply_push(b).await.expect("applied").reply
}

/// (board, white, plies) of every game of the store's only round numbered `number`.
async fn boards(store: &Store, round: i64) -> Vec<(u32, String, usize)> {
    let mut out: Vec<_> = store
        .round_games(RoundId::from(round))
        .await
        .expect("games")
        .into_iter()
        .map(|g| {
            (
                g.pairing.board_no,
                g.pairing.white.name.unwrap_or_default(),
                g.moves.len(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The id here of the game on `board` of `round`.
async fn settled_id(store: &Store, round: i64, board: u32) -> i64 {
    store
        .round_games(RoundId::from(round))
        .await
        .expect("games")
        .into_iter()
        .find(|g| g.pairing.board_no == board)
        .expect("a game on the board")
        .id
        .get()
}

async fn halls(store: &Store) {
    // Hall A (boards 1-2) and hall B (boards 101-102) push one event.
    let a = |n, games| {
        batch(
            "hall-a",
            n,
            vec![tournament(
                7,
                Some("olympiad-2026"),
                "Olympiad",
                0,
                &[(70, "1")],
            )],
            games,
        )
    };
    let b = |n, games| {
        batch(
            "hall-b",
            n,
            vec![tournament(
                3,
                Some("olympiad-2026"),
                "Olympiad (hall B)",
                900,
                &[(30, "1")],
            )],
            games,
        )
    };
    let r = push(
        store,
        &a(
            1,
            vec![
                game(71, 70, 1, "Anand", E4),
                game(72, 70, 2, "Carlsen", &[]),
            ],
        ),
    )
    .await;
    assert!(r.conflicts.is_empty() && !r.resend, "{r:?}");
    let r = push(
        store,
        &b(
            1,
            vec![game(31, 30, 101, "Hou", E4E5), game(32, 30, 102, "Ju", E4)],
        ),
    )
    .await;
    assert!(r.conflicts.is_empty() && !r.resend, "{r:?}");
    let ts = store.tournaments().await.expect("tournaments");
    assert_eq!(ts.len(), 1, "one tournament for the event: {ts:?}");
    let t = &ts[0];
    assert_eq!(t.event_key.as_deref(), Some("olympiad-2026"));
    // The first hall named it; the second only raised the delay (never lowered by a hall).
    assert_eq!((t.name.as_str(), t.delay_secs), ("Olympiad", 900));
    assert_eq!(t.rounds.len(), 1);
    let round = t.rounds[0].id;
    assert_eq!(
        boards(store, round.get()).await,
        vec![
            (1, "Anand".into(), 1),
            (2, "Carlsen".into(), 0),
            (101, "Hou".into(), 2),
            (102, "Ju".into(), 1)
        ]
    );

    // Each hall's later moves go to its own boards only.
    push(store, &a(2, vec![game(71, 70, 1, "Anand", E4E5)])).await;
    push(store, &b(2, vec![game(32, 30, 102, "Ju", E4E5)])).await;
    assert_eq!(
        boards(store, round.get()).await,
        vec![
            (1, "Anand".into(), 2),
            (2, "Carlsen".into(), 0),
            (101, "Hou".into(), 2),
            (102, "Ju".into(), 2)
        ]
    );

    // Hall B places a game on board 1, which hall A's game holds: held back, not written.
    let r = push(store, &b(3, vec![game(33, 30, 1, "Yifan", E4)])).await;
    assert_eq!(r.conflicts.len(), 1, "{r:?}");
    let c = &r.conflicts[0];
    assert!(c.clash && c.game_id == 33 && c.board_no == 1, "{c:?}");
    assert!(c.message.contains("hall-a"), "{}", c.message);
    let anand = store
        .round_games(round)
        .await
        .expect("games")
        .into_iter()
        .find(|g| g.pairing.board_no == 1)
        .expect("board 1");
    assert_eq!(c.cloud_game_id, anand.id.get());
    assert_eq!(anand.pairing.white.name.as_deref(), Some("Anand"));
    assert_eq!(anand.moves.len(), 2, "hall A's game is untouched");
    // Both sides of the cloud see it: the venue's reply above, and the sources list here.
    let sources = store.mirror_sources().await.expect("sources");
    let hall_b = sources
        .iter()
        .find(|s| s.origin == "hall-b")
        .expect("hall B");
    assert_eq!(hall_b.conflicts, r.conflicts);
    assert_eq!(hall_b.link, "up");
    let hall_a = sources
        .iter()
        .find(|s| s.origin == "hall-a")
        .expect("hall A");
    assert!(hall_a.conflicts.is_empty());
    assert_eq!(hall_a.games.len(), 2);
    assert_eq!(
        hall_b.games.len(),
        2,
        "the held game is not hall B's here yet"
    );
    // Its next version is held too (newest kept), and still reported.
    let r = push(store, &b(4, vec![game(33, 30, 1, "Yifan", E4E5)])).await;
    assert_eq!(r.conflicts.len(), 1);

    // Settling: a taken board is refused, a free one takes the held game, which then
    // follows its venue there.
    match store.settle_clash("hall-b", 33, 2).await {
        Err(StoreError::Conflict(m)) => assert!(m.contains("board 2"), "{m}"),
        other => panic!("board 2 is taken: {other:?}"),
    }
    let settled = store
        .settle_clash("hall-b", 33, 103)
        .await
        .expect("settled");
    assert_eq!((settled.round_id, settled.board_no), (round.get(), 103));
    assert!(
        !settled.rounds.is_empty(),
        "the placed game's moves are changes of the round"
    );
    let r = push(
        store,
        &b(
            5,
            vec![game(
                33,
                30,
                1,
                "Yifan",
                &[("e2e4", "e4"), ("e7e5", "e5"), ("g1f3", "Nf3")],
            )],
        ),
    )
    .await;
    assert!(r.conflicts.is_empty(), "{r:?}");
    assert!(matches!(
        store.settle_clash("hall-b", 33, 104).await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(
        boards(store, round.get()).await,
        vec![
            (1, "Anand".into(), 2),
            (2, "Carlsen".into(), 0),
            (101, "Hou".into(), 2),
            (102, "Ju".into(), 2),
            (103, "Yifan".into(), 3)
        ]
    );

    // A hall renumbers its boards: the games move here too. A swap in one batch…
    push(
        store,
        &a(
            3,
            vec![
                game(71, 70, 2, "Anand", E4E5),
                game(72, 70, 1, "Carlsen", &[]),
            ],
        ),
    )
    .await;
    let mut expected = vec![
        (1, "Carlsen".into(), 0),
        (2, "Anand".into(), 2),
        (101, "Hou".into(), 2),
        (102, "Ju".into(), 2),
        (103, "Yifan".into(), 3),
    ];
    assert_eq!(boards(store, round.get()).await, expected);
    // …or in two: the first game waits (its board is the other's), reported as a clash, and
    // both move when the second comes.
    let r = push(store, &a(4, vec![game(71, 70, 1, "Anand", E4E5)])).await;
    assert_eq!(boards(store, round.get()).await, expected);
    assert!(
        r.conflicts
            .iter()
            .any(|c| c.clash && c.game_id == 71 && c.board_no == 1),
        "{r:?}"
    );
    let r = push(store, &a(5, vec![game(72, 70, 2, "Carlsen", &[])])).await;
    assert!(r.conflicts.is_empty(), "{r:?}");
    expected[0] = (1, "Anand".into(), 2);
    expected[1] = (2, "Carlsen".into(), 0);
    assert_eq!(boards(store, round.get()).await, expected);
    // Onto a board another hall's game holds: the game stays, both sides are told, and it
    // moves once that hall frees the board.
    let r = push(store, &a(6, vec![game(72, 70, 101, "Carlsen", &[])])).await;
    assert_eq!(r.conflicts.len(), 1, "{r:?}");
    let c = &r.conflicts[0];
    assert!(c.clash && c.game_id == 72 && c.board_no == 101, "{c:?}");
    assert!(
        c.message.contains("hall-b") && c.message.contains("stays on board 2"),
        "{}",
        c.message
    );
    let sources = store.mirror_sources().await.expect("sources");
    let hall_a = sources.iter().find(|s| s.origin == "hall-a").expect("A");
    assert_eq!(hall_a.conflicts, r.conflicts);
    assert_eq!(boards(store, round.get()).await, expected);
    push(store, &b(6, vec![game(31, 30, 104, "Hou", E4E5)])).await;
    let r = push(store, &a(7, vec![])).await;
    assert!(r.conflicts.is_empty(), "{r:?}");
    let mut expected = vec![
        (1, "Anand".into(), 2),
        (101, "Carlsen".into(), 0),
        (102, "Ju".into(), 2),
        (103, "Yifan".into(), 3),
        (104, "Hou".into(), 2),
    ];
    assert_eq!(boards(store, round.get()).await, expected);
    // An arbiter here places such a game on a free board; it stays there whatever number
    // its hall gives it.
    push(store, &a(8, vec![game(71, 70, 102, "Anand", E4E5)])).await;
    match store.settle_clash("hall-a", 71, 104).await {
        Err(StoreError::Conflict(m)) => assert!(m.contains("board 104"), "{m}"),
        other => panic!("board 104 is taken: {other:?}"),
    }
    let settled = store.settle_clash("hall-a", 71, 5).await.expect("placed");
    assert_eq!(settled.board_no, 5);
    let r = push(store, &a(9, vec![game(71, 70, 102, "Anand", E4E5)])).await;
    assert!(r.conflicts.is_empty(), "{r:?}");
    assert!(matches!(
        store.settle_clash("hall-a", 71, 6).await,
        Err(StoreError::NotFound { .. })
    ));
    expected[0] = (5, "Anand".into(), 2);
    expected.sort();
    assert_eq!(boards(store, round.get()).await, expected);
    // So does one an arbiter here renumbers.
    let carlsen = settled_id(store, round.get(), 101).await;
    store
        .renumber_board(GameId::from(carlsen), 6, "arbiter")
        .await
        .expect("renumbered");
    push(store, &a(10, vec![game(72, 70, 3, "Carlsen", E4)])).await;
    let now = boards(store, round.get()).await;
    assert!(now.contains(&(6, "Carlsen".into(), 1)), "{now:?}");
    // A board freed here by an arbiter (no game of that round comes from the waiting hall
    // after it): the waiting game moves with the hall's next request, a heartbeat.
    let r = push(store, &b(7, vec![game(32, 30, 103, "Ju", E4E5)])).await;
    assert!(
        r.conflicts
            .iter()
            .any(|c| c.game_id == 32 && c.board_no == 103),
        "{r:?}"
    );
    let yifan = settled_id(store, round.get(), 103).await;
    store
        .renumber_board(GameId::from(yifan), 8, "arbiter")
        .await
        .expect("renumbered");
    let r = push(store, &b(8, vec![])).await;
    assert!(r.conflicts.is_empty(), "{r:?}");
    let now = boards(store, round.get()).await;
    assert!(
        now.contains(&(103, "Ju".into(), 2)) && now.contains(&(8, "Yifan".into(), 3)),
        "{now:?}"
    );
    // Settled on the board it is on: it stays there, and the clash is gone.
    let r = push(store, &b(9, vec![game(31, 30, 5, "Hou", E4E5)])).await;
    assert!(r.conflicts.iter().any(|c| c.game_id == 31), "{r:?}");
    store.settle_clash("hall-b", 31, 104).await.expect("kept");
    let r = push(store, &b(10, vec![game(31, 30, 5, "Hou", E4E5)])).await;
    assert!(r.conflicts.is_empty(), "{r:?}");
    assert!(
        boards(store, round.get())
            .await
            .contains(&(104, "Hou".into(), 2))
    );

    // A hall that pushed without a key first has a tournament of its own here; once it names
    // the event, it moves in, and is asked to send everything again.
    let c = |n, key, games| {
        batch(
            "hall-c",
            n,
            vec![tournament(5, key, "Side hall", 0, &[(50, "1")])],
            games,
        )
    };
    let r = push(store, &c(1, None, vec![game(51, 50, 201, "Giri", E4)])).await;
    assert!(!r.resend);
    assert_eq!(store.tournaments().await.expect("tournaments").len(), 2);
    let r = push(store, &c(2, Some("olympiad-2026"), vec![])).await;
    assert!(r.resend, "{r:?}");
    // The answer was lost: the next batch is asked again, until one says it resent.
    let r = push(store, &c(3, Some("olympiad-2026"), vec![])).await;
    assert!(r.resend, "asked again: {r:?}");
    let mut again = c(
        4,
        Some("olympiad-2026"),
        vec![game(51, 50, 201, "Giri", E4E5)],
    );
    again.resent = true;
    let r = push(store, &again).await;
    assert!(!r.resend && r.conflicts.is_empty(), "{r:?}");
    let r = push(store, &c(5, Some("olympiad-2026"), vec![])).await;
    assert!(!r.resend, "{r:?}");
    assert!(
        boards(store, round.get())
            .await
            .contains(&(201, "Giri".into(), 2))
    );

    // A venue alone in its keyless tournament that takes a key names its tournament here.
    let d = |n, key| {
        batch(
            "hall-d",
            n,
            vec![tournament(9, key, "Blitz", 0, &[(90, "1")])],
            vec![game(91, 90, 1, "Nepo", E4)],
        )
    };
    push(store, &d(1, None)).await;
    let r = push(store, &d(2, Some("blitz-2026"))).await;
    assert!(!r.resend);
    let ts = store.tournaments().await.expect("tournaments");
    let blitz = ts.iter().find(|t| t.name == "Blitz").expect("blitz");
    assert_eq!(blitz.event_key.as_deref(), Some("blitz-2026"));

    // Two halls naming a new event at the same moment: both batches are applied, into one
    // tournament and one round (on PostgreSQL the second waits on the key, then takes it).
    // Twenty times: the race between two halls moving on together failed one CI run in five.
    for attempt in 0..20 {
        let key = format!("rapid-{attempt}");
        let e = batch(
            "hall-e",
            10 + attempt,
            vec![tournament(11, Some(&key), "Rapid", 0, &[(110, "1")])],
            vec![game(111, 110, 1, "So", E4)],
        );
        let f = batch(
            "hall-f",
            10 + attempt,
            vec![tournament(12, Some(&key), "Rapid", 0, &[(120, "1")])],
            vec![game(121, 120, 101, "Wei", E4)],
        );
        // (From the second attempt on, both halls move from the last event to the new one.)
        let (x, y) = tokio::join!(store.apply_push(&e), store.apply_push(&f));
        let (x, y) = (x.expect("hall E's batch"), y.expect("hall F's batch"));
        assert!(x.reply.conflicts.is_empty() && y.reply.conflicts.is_empty());
        let ts = store.tournaments().await.expect("tournaments");
        let t = ts
            .iter()
            .find(|t| t.event_key.as_deref() == Some(key.as_str()))
            .expect("the event");
        assert_eq!(
            ts.iter().filter(|t| t.name == "Rapid").count(),
            attempt as usize + 1,
            "{ts:?}"
        );
        assert_eq!(t.rounds.len(), 1, "{t:?}");
        let boards: Vec<u32> = boards(store, (t.rounds[0].id).get())
            .await
            .into_iter()
            .map(|b| b.0)
            .collect();
        assert_eq!(boards, [1, 101]);
    }

    // An event an arbiter here prepared (its key, a 10-minute delay): the first hall fills
    // it without lowering the delay or renaming it.
    let prepared = store
        .create_tournament(&relay_store::NewTournament {
            name: "Blitz final".into(),
            delay_secs: 600,
            ..Default::default()
        })
        .await
        .expect("tournament");
    let key = relay_store::TournamentPatch {
        event_key: Some(Some("final-2026".into())),
        ..Default::default()
    };
    store.update_tournament(prepared, &key).await.expect("key");
    let g = |n, fin: bool, games| {
        let mut t = tournament(13, Some("final-2026"), "Hall G", 0, &[(130, "1")]);
        t["rounds"][0]["final"] = json!(fin);
        batch("hall-g", n, vec![t], games)
    };
    let h = |n, fin: bool| {
        let mut t = tournament(14, Some("final-2026"), "Hall H", 0, &[(140, "1")]);
        t["rounds"][0]["final"] = json!(fin);
        batch(
            "hall-h",
            n,
            vec![t],
            vec![game(141, 140, 101, "Caruana", E4)],
        )
    };
    push(store, &g(1, false, vec![game(131, 130, 1, "Nakamura", E4)])).await;
    let t = store.tournament(prepared).await.expect("prepared");
    assert_eq!(
        (t.name.as_str(), t.delay_secs),
        ("Blitz final", 600),
        "{t:?}"
    );
    let final_round = t.rounds[0].id;
    // Its round is final here when every hall filling it says so, not when the first does.
    push(store, &h(1, false)).await;
    push(store, &g(2, true, vec![])).await;
    assert!(!store.round(final_round).await.expect("round").is_final);
    push(store, &h(2, true)).await;
    assert!(store.round(final_round).await.expect("round").is_final);
    // A hall's second game for a board its first game holds here (the first renumbered at
    // the hall) is a clash too, never written over the first.
    let r = push(
        store,
        &g(3, true, vec![game(132, 130, 1, "Firouzja", E4E5)]),
    )
    .await;
    assert!(
        r.conflicts.iter().any(|c| c.clash && c.game_id == 132),
        "{r:?}"
    );
    let nakamura = boards(store, final_round.get()).await;
    assert!(
        nakamura.contains(&(1, "Nakamura".into(), 1)),
        "{nakamura:?}"
    );

    // A venue is one venue to the cloud whatever URL it pushes to (https, a proxy).
    let first = store
        .upstream_origin("http://cloud.example")
        .await
        .expect("origin");
    let again = store
        .upstream_origin("https://cloud.example:443")
        .await
        .expect("origin");
    assert_eq!(first, again);

    // A key is unique here.
    let patch = relay_store::TournamentPatch {
        event_key: Some(Some("olympiad-2026".into())),
        ..Default::default()
    };
    assert!(matches!(
        store.update_tournament(blitz.id, &patch).await,
        Err(StoreError::Conflict(_))
    ));
}

#[tokio::test]
async fn halls_on_sqlite() {
    let dir = boards::testdata::temp_dir("store-halls");
    let store = Store::open(&format!("sqlite://{}/relay.db", dir.display()))
        .await
        .expect("open");
    halls(&store).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn halls_on_postgres() {
    let name = format!("relay_halls_{}", std::process::id());
    let Some((admin, store)) = pg::scratch_database(&name).await else {
        return;
    };
    halls(&store).await;
    pg::drop_database(&admin, &name, store).await;
}
