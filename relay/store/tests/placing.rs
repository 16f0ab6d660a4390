//! E-boards placed many at once (`free_board_nos`, `assign_many`, `start_games`, `games`), as
//! the writer places a hall's e-boards at its start, end where placing them one by one puts
//! them: the same board numbers (paired boards first, an arbiter's assignment kept, then past
//! the highest), the same games, the same starts. Against SQLite, and the real PostgreSQL
//! when `RELAY_TEST_POSTGRES` is set.

mod pg;

use relay_store::{GameId, GameStart, NewTournament, Pairing, Player, RoundId, Store};

/// A round with paired boards 2, 3 and 7 and e-board "S2" assigned to board 3 by an arbiter.
async fn round_with_pairings(store: &Store) -> RoundId {
    let t = store
        .create_tournament(&NewTournament {
            name: "Placing".into(),
            ..Default::default()
        })
        .await
        .expect("tournament");
    let r = store.create_round(t, "1", None).await.expect("round");
    let player = |name: &str| Player {
        name: Some(name.into()),
        ..Default::default()
    };
    let pairings: Vec<Pairing> = [2, 3, 7]
        .into_iter()
        .map(|b| Pairing {
            board_no: b,
            white: player(&format!("White {b}")),
            black: player(&format!("Black {b}")),
        })
        .collect();
    store.set_pairings(r, &pairings).await.expect("pairings");
    store
        .assign(r, 3, "S2", None)
        .await
        .expect("arbiter's seat");
    r
}

const SERIALS: [&str; 6] = ["S1", "S2", "S3", "S4", "S5", "S6"];

/// (board number, serial) of every seat, and (board, white, start) of every game.
async fn picture(
    store: &Store,
    r: RoundId,
) -> (
    Vec<(u32, String)>,
    Vec<(u32, Option<String>, Option<String>, Option<String>)>,
) {
    let seats = store.assignments(r).await.expect("assignments");
    let games = store
        .round_games(r)
        .await
        .expect("games")
        .into_iter()
        .map(|g| {
            (
                g.pairing.board_no,
                g.pairing.white.name,
                g.start_fen,
                g.orientation,
            )
        })
        .collect();
    (seats, games)
}

async fn one_by_one(store: &Store, r: RoundId) -> Vec<GameId> {
    let mut ids = Vec::new();
    for serial in SERIALS {
        let seated = store.assignments(r).await.expect("assignments");
        let board = match seated.iter().find(|(_, s)| s == serial) {
            Some((b, _)) => *b,
            None => store.free_board_no(r, 5).await.expect("free"),
        };
        let (game, _) = store
            .assign(r, board, serial, Some("/dev/x"))
            .await
            .expect("assign");
        store
            .start_game(game, None, false, Some("white-bottom"))
            .await
            .expect("start");
        ids.push(game);
    }
    ids
}

async fn together(store: &Store, r: RoundId) -> Vec<GameId> {
    let seated = store.assignments(r).await.expect("assignments");
    let unassigned = SERIALS
        .iter()
        .filter(|s| !seated.iter().any(|(_, x)| x == *s))
        .count();
    let mut free = store
        .free_board_nos(r, 5, unassigned)
        .await
        .expect("free")
        .into_iter();
    let seats: Vec<(u32, String, Option<String>)> = SERIALS
        .iter()
        .map(|serial| {
            let board = match seated.iter().find(|(_, s)| s == serial) {
                Some((b, _)) => *b,
                None => free.next().expect("enough free numbers"),
            };
            (board, serial.to_string(), Some("/dev/x".to_string()))
        })
        .collect();
    let placed = store.assign_many(r, &seats).await.expect("assign many");
    let starts: Vec<GameStart> = placed
        .iter()
        .map(|(game, _)| GameStart {
            game: *game,
            start_fen: None,
            chess960: false,
            orientation: Some("white-bottom".into()),
        })
        .collect();
    let seqs = store.start_games(&starts).await.expect("start games");
    assert_eq!(seqs.len(), placed.len());
    let mut all: Vec<_> = placed.iter().map(|(_, s)| *s).chain(seqs).collect();
    let sorted = {
        let mut s = all.clone();
        s.sort();
        s.dedup();
        s
    };
    all.sort();
    assert_eq!(all, sorted, "every change has a number of its own");
    placed.into_iter().map(|(g, _)| g).collect()
}

async fn placed_alike(a: &Store, b: &Store) {
    let ra = round_with_pairings(a).await;
    let rb = round_with_pairings(b).await;
    let ids_a = one_by_one(a, ra).await;
    let ids_b = together(b, rb).await;
    let pa = picture(a, ra).await;
    let pb = picture(b, rb).await;
    assert_eq!(pa, pb, "placed together as one by one");
    // Paired boards 2 and 7 first, S2 stays on its board 3, then past the highest (7).
    let boards: Vec<(u32, String)> = pb.0.clone();
    assert_eq!(
        boards,
        vec![
            (2, "S1".to_string()),
            (3, "S2".to_string()),
            (7, "S3".to_string()),
            (8, "S4".to_string()),
            (9, "S5".to_string()),
            (10, "S6".to_string()),
        ]
    );
    // Many games read at once are the games read one by one, in the order asked; an id
    // that is not there is left out.
    let mut asked = ids_b.clone();
    asked.reverse();
    asked.insert(2, GameId::from(999_999));
    let many = b.games(&asked).await.expect("games");
    assert_eq!(many.len(), ids_b.len());
    for (g, id) in many
        .iter()
        .zip(asked.iter().filter(|id| id.get() != 999_999))
    {
        assert_eq!(g.id, *id);
        assert_eq!(*g, b.game(*id).await.expect("game"));
    }
    assert_eq!(ids_a.len(), ids_b.len());
}

#[tokio::test]
async fn placing_together_on_sqlite_is_placing_one_by_one() {
    let dir = boards::testdata::temp_dir("placing");
    let a = Store::open(&format!("sqlite://{}/a.db", dir.display()))
        .await
        .expect("a");
    let b = Store::open(&format!("sqlite://{}/b.db", dir.display()))
        .await
        .expect("b");
    placed_alike(&a, &b).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn placing_together_on_postgres_is_placing_one_by_one() {
    let id = std::process::id();
    let Some((admin_a, a)) = pg::scratch_database(&format!("relay_place_a_{id}")).await else {
        return;
    };
    let Some((admin_b, b)) = pg::scratch_database(&format!("relay_place_b_{id}")).await else {
        return;
    };
    placed_alike(&a, &b).await;
    pg::drop_database(&admin_a, &format!("relay_place_a_{id}"), a).await;
    pg::drop_database(&admin_b, &format!("relay_place_b_{id}"), b).await;
}
