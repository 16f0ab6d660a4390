//! A board two games claim here (several halls, one event): a venue's game that comes for a
//! board another hall's game holds is kept whole in `mirror_clashes`, never written over the
//! other; a game its venue renumbered (an arbiter there swapped two boards) follows to its
//! new board when that board is free, and stays where it is, listed as a clash, while it is
//! not. Both kinds are listed together for the venue's answer and the console. Settling a
//! clash is an arbiter's, in `halls`.

use super::wire::PushConflict;
use std::collections::HashMap;

/// A venue renumbers its boards (an arbiter there swaps two, or moves one to a free number):
/// each game of round `$round` that follows its venue's number (`mirror_ids.follows`, ended
/// by an arbiter here placing it) and is not on it goes there, when the board is free or its
/// game moves away too (a swap, whichever order the venue's games came in). One whose board
/// another game keeps stays where it is, listed as a clash ([`clashes_in!`]) until that
/// board is free or an arbiter here places it ([`Store::settle_clash`]).
///
/// [`Store::settle_clash`]: crate::Store::settle_clash
macro_rules! follow_renumbers {
    ($tx:expr, $touched:expr, $round:expr) => {{
        let round: i64 = $round;
        const WANTED: &str = "SELECT g.id, m.remote_board, m.origin FROM games g JOIN mirror_ids m ON m.kind = 'game' AND m.local_id = g.id
             WHERE g.round_id = $1 AND m.follows = 1 AND m.remote_board IS NOT NULL AND m.remote_board <> g.board_no
             ORDER BY g.id";
        let mut wanted: Vec<(i64, i64, String)> = sqlx::query_as(WANTED).bind(round).fetch_all(&mut *$tx).await?;
        if !wanted.is_empty() {
            // The round's row lock, then a second read: another hall's batch may be moving
            // the same games (a pass moves every hall's of the round) on PostgreSQL.
            sqlx::query("UPDATE rounds SET seq = seq WHERE id = $1").bind(round).execute(&mut *$tx).await?;
            wanted = sqlx::query_as(WANTED).bind(round).fetch_all(&mut *$tx).await?;
        }
        if !wanted.is_empty() {
            let boards: Vec<(i64, i64, Option<String>)> = sqlx::query_as(
                "SELECT g.board_no, g.id, m.origin FROM games g LEFT JOIN mirror_ids m ON m.kind = 'game' AND m.local_id = g.id
                 WHERE g.round_id = $1")
                .bind(round).fetch_all(&mut *$tx).await?;
            let holder: std::collections::HashMap<i64, (i64, Option<String>)> = boards.into_iter().map(|(b, g, o)| (b, (g, o))).collect();
            let moves = $crate::push::clashes::renumber_plan(&wanted, &holder);
            // Each moving game through a number no board has ((round, board) is unique at
            // every step), then onto its own.
            for (game, _) in &moves {
                sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(-game).bind(game).execute(&mut *$tx).await?;
            }
            for (game, to) in &moves {
                sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(to).bind(game).execute(&mut *$tx).await?;
                let payload = serde_json::json!({"board_no": to}).to_string();
                $crate::batch::bump!($tx, $touched, *game, "game", &payload);
            }
        }
    }};
}
pub(super) use follow_renumbers;

/// Which of the `wanted` moves (game, board wanted, its venue) can be made together: those
/// whose board is free, or held by a game that moves too. Of several games wanting one board,
/// one of the holder's venue goes first (the holder's partner in a swap or turn), else the
/// first by id; the others wait. Rivals are dropped only once every move whose board is held
/// by a game staying is out, so a hall's own swap is not lost to another hall's waiting game.
pub(super) fn renumber_plan(
    wanted: &[(i64, i64, String)],
    holder: &HashMap<i64, (i64, Option<String>)>,
) -> Vec<(i64, i64)> {
    let mut moving: Vec<&(i64, i64, String)> = wanted.iter().collect();
    loop {
        let games: Vec<i64> = moving.iter().map(|m| m.0).collect();
        let before = moving.len();
        moving.retain(|m| holder.get(&m.1).is_none_or(|h| games.contains(&h.0)));
        if moving.len() != before {
            continue;
        }
        // One game per board.
        let mut chosen: Vec<&(i64, i64, String)> = Vec::new();
        for m in &moving {
            let Some(k) = chosen.iter().position(|c| c.1 == m.1) else {
                chosen.push(m);
                continue;
            };
            let partner = |c: &(i64, i64, String)| {
                holder.get(&c.1).and_then(|h| h.1.as_deref()) == Some(c.2.as_str())
            };
            if partner(m) && !partner(chosen[k]) {
                chosen[k] = m;
            }
        }
        if chosen.len() == moving.len() {
            return moving.iter().map(|m| (m.0, m.1)).collect();
        }
        moving = chosen;
    }
}

/// Why a venue's game is held back: another hall's game holds its board here.
pub(super) fn clash_message(board_no: u32, round: &str, holder: &str) -> String {
    format!(
        "board {board_no} of round {round}: the game of hall {holder} holds this board on the cloud relay; this hall's game is held back, not written over it, until an arbiter there places it on another board (or this hall gives it a free board number, --first-board)"
    )
}

/// A clash as the venue and console show it: the venue's game, the game holding the board
/// here (0: none any more), the board claimed.
pub(super) fn clash(
    game_id: i64,
    holder: Option<i64>,
    board: i64,
    message: String,
) -> PushConflict {
    PushConflict {
        game_id,
        cloud_game_id: holder.unwrap_or(0),
        board_no: u32::try_from(board).unwrap_or(0),
        message,
        clash: true,
    }
}

/// Every clash, or one venue's: (origin, the conflict as the venue and console show it, with
/// `cloud_game_id` the game holding the board). A clash whose game has a place here since
/// (a push that raced an arbiter's settling may leave its row behind) is not one.
macro_rules! clashes_in {
    ($ex:expr, $origin:expr) => {{
        let origin: Option<&str> = $origin;
        let rows: Vec<(String, i64, i64, String, Option<i64>)> = sqlx::query_as(
            "SELECT c.origin, c.remote_id, c.board_no, c.message,
               (SELECT g.id FROM games g WHERE g.round_id = c.round_id AND g.board_no = c.board_no)
             FROM mirror_clashes c
             WHERE NOT EXISTS (SELECT 1 FROM mirror_ids m WHERE m.origin = c.origin AND m.kind = 'game' AND m.remote_id = c.remote_id)
             ORDER BY c.round_id, c.board_no",
        )
        .fetch_all($ex)
        .await?;
        rows.into_iter()
            .filter(|r| origin.is_none_or(|o| o == r.0))
            .map(|(origin, game_id, board, message, holder)| (origin, $crate::push::clashes::clash(game_id, holder, board, message)))
            .chain($crate::push::clashes::renumbers_held!($ex, origin))
            .collect::<Vec<(String, $crate::push::wire::PushConflict)>>()
    }};
}
pub(super) use clashes_in;

/// The query behind [`renumbers_held!`] (`concat!` adds one venue's filter to it).
macro_rules! renumbers_held_sql {
    () => {
        "SELECT m.origin, m.remote_id, m.remote_board, g.board_no, r.number, h.id,
                 (SELECT s.name FROM mirror_ids hm JOIN mirror_sources s ON s.origin = hm.origin WHERE hm.kind = 'game' AND hm.local_id = h.id LIMIT 1)
               FROM mirror_ids m JOIN games g ON g.id = m.local_id JOIN rounds r ON r.id = g.round_id
               LEFT JOIN games h ON h.round_id = g.round_id AND h.board_no = m.remote_board
               WHERE m.kind = 'game' AND m.follows = 1 AND m.remote_board IS NOT NULL AND m.remote_board <> g.board_no"
    };
}
pub(super) use renumbers_held_sql;

/// The order of [`renumbers_held!`]'s list (a console compares lists as they come).
macro_rules! renumbers_held_order {
    () => {
        " ORDER BY g.round_id, m.remote_board, m.origin, m.remote_id"
    };
}
pub(super) use renumbers_held_order;

/// The games a venue renumbered that stay on their old board here, as clashes (see
/// [`follow_renumbers!`]): (origin, the conflict, `board_no` the venue's new number).
macro_rules! renumbers_held {
    ($ex:expr, $origin:expr) => {{
        let origin: Option<&str> = $origin;
        type Row = (String, i64, i64, i64, String, Option<i64>, Option<String>);
        let rows: Vec<Row> = match origin {
            Some(o) => sqlx::query_as(concat!(
                $crate::push::clashes::renumbers_held_sql!(),
                " AND m.origin = $1",
                $crate::push::clashes::renumbers_held_order!()
            )).bind(o).fetch_all($ex).await?,
            None => sqlx::query_as(concat!(
                $crate::push::clashes::renumbers_held_sql!(),
                $crate::push::clashes::renumbers_held_order!()
            )).fetch_all($ex).await?,
        };
        rows.into_iter().map(|(origin, game_id, want, now, round, holder, holder_name)| {
            let holder_text = match (holder, holder_name) {
                (None, _) => "no game (it moves with the hall's next request)".to_string(),
                (Some(_), Some(name)) => format!("the game of hall {name}"),
                (Some(_), None) => "a game of this relay's own".to_string(),
            };
            let message = format!(
                "board {want} of round {round}: this hall renumbered its game to it, but on the cloud relay {holder_text} holds it; the game stays on board {now} there until that board is free or an arbiter there places it"
            );
            (origin, $crate::push::clashes::clash(game_id, holder, want, message))
        }).collect::<Vec<(String, $crate::push::wire::PushConflict)>>()
    }};
}
pub(super) use renumbers_held;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_moves_what_can_move_together() {
        // Boards 1, 2, 3 hold hall A's games 10, 20, 30; board 4 is free; board 7 holds hall
        // B's game 70.
        let a = |g| (g, Some("a".to_string()));
        let holder: HashMap<i64, (i64, Option<String>)> = [
            (1, a(10)),
            (2, a(20)),
            (3, a(30)),
            (7, (70, Some("b".into()))),
        ]
        .into();
        let plan = |w: &[(i64, i64, &str)]| {
            let w: Vec<(i64, i64, String)> =
                w.iter().map(|&(g, to, o)| (g, to, o.into())).collect();
            renumber_plan(&w, &holder)
        };
        // A swap, a three-way turn, a move to a free board.
        assert_eq!(plan(&[(10, 2, "a"), (20, 1, "a")]), [(10, 2), (20, 1)]);
        assert_eq!(
            plan(&[(10, 2, "a"), (20, 3, "a"), (30, 1, "a")]),
            [(10, 2), (20, 3), (30, 1)]
        );
        assert_eq!(plan(&[(30, 4, "a")]), [(30, 4)]);
        // A chain onto a game that stays waits as a whole: 10 onto 20's board, 20 onto 30's.
        assert_eq!(plan(&[(10, 2, "a"), (20, 3, "a")]), []);
        // …and a chain ending on a free board moves as a whole.
        assert_eq!(
            plan(&[(10, 2, "a"), (20, 3, "a"), (30, 4, "a")]),
            [(10, 2), (20, 3), (30, 4)]
        );
        // Two games for one free board: the first goes, the other waits.
        assert_eq!(plan(&[(10, 4, "a"), (20, 4, "a")]), [(10, 4)]);
        // Hall B's game 5 waits for board 2 when hall A swaps 1 and 2: the swap is made (its
        // partner is of the holder's hall), and hall B's game still waits.
        assert_eq!(
            plan(&[(5, 2, "b"), (10, 2, "a"), (20, 1, "a")]),
            [(10, 2), (20, 1)]
        );
        // A game that stays (hall B's on 7) blocks whoever wants its board.
        assert_eq!(plan(&[(10, 7, "a")]), []);
    }
}
