//! What the targets' tests share: a store of its own with a round of paired boards.

use relay_store::{GameId, RoundId};
use relay_store::{Pairing, Store, StoredMove, now_ms};

/// A store in a directory of its own (`name`), with a round of `boards` paired boards:
/// the store, the round and its games.
pub async fn store_with_round(name: &str, boards: u32) -> (Store, i64, Vec<i64>) {
    let dir = boards::testdata::temp_dir(name);
    let store = Store::open(&format!("sqlite:{}", dir.join("relay.db").display()))
        .await
        .expect("store");
    let round = store
        .create_auto_round("Open", "2026-11-24")
        .await
        .expect("round");
    let games = pair(&store, round.id, boards).await;
    (store, round.id.get(), games)
}

/// A move stored in `game` (no clock, no position): its change number.
pub async fn play(store: &Store, game: GameId, ply: u32, san: &str, uci: &str) -> i64 {
    let m = StoredMove {
        ply,
        san: san.into(),
        uci: uci.into(),
        clk_ms: None,
        emt_ms: None,
        accepted_at_ms: now_ms(),
        fen_after: String::new(),
    };
    store.record_move(game, &m).await.expect("move").get()
}

/// Boards 1 to `boards` of `round` paired (with nobody named): their games.
pub async fn pair(store: &Store, round: RoundId, boards: u32) -> Vec<i64> {
    let pairings: Vec<Pairing> = (1..=boards)
        .map(|b| Pairing {
            board_no: b,
            ..Default::default()
        })
        .collect();
    store
        .set_pairings(round, &pairings)
        .await
        .expect("pairings")
        .into_iter()
        .map(|(g, _)| g.get())
        .collect()
}
