//! Several halls, one event: venue relays whose tournaments carry the same event key fill one
//! tournament here (`Store::apply_push` matches the tournament by key and the rounds by
//! number). Each hall's games go on their own board numbers; a game that comes for a board
//! another hall's game holds is a clash: kept whole in `mirror_clashes`, reported to the
//! venue and on this relay's `/health` and console, never written over the other game, until
//! an arbiter here places it on a free board ([`Store::settle_clash`]) or the venue sends it
//! with a free board number. (What `apply_push` itself needs of this, the clash's message
//! and the clashes' listing, lives in `clashes`, below both.)

use super::game::{apply_game, game_in};
use super::ids::map_id;
use crate::batch::{Touched, bump, notify};
use crate::error::{Result, StoreError};
use crate::model::StoredGame;
use crate::pool::{Store, now_ms, on_pool};
use schemars::JsonSchema;
use serde::Serialize;

/// What an event key may be: what people type and URLs carry without escaping.
pub fn check_event_key(key: &str) -> std::result::Result<(), String> {
    if key.is_empty() || key.len() > 64 {
        return Err(format!(
            "an event key is 1 to 64 characters, not {}",
            key.len()
        ));
    }
    if let Some(c) = key
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "an event key is made of letters, digits, '-', '_' and '.'; {c:?} is none of them"
        ));
    }
    Ok(())
}

/// The event key a tournament read from a pairing program's file gets: its name and start
/// date, in key letters (every hall importing the same file gets the same key).
pub fn event_key_from(name: &str, start_date: Option<&str>) -> Option<String> {
    let mut key = String::new();
    for part in [Some(name), start_date].into_iter().flatten() {
        if !key.is_empty() {
            key.push('-');
        }
        let mut dash = false;
        for c in part.trim().chars() {
            if c.is_ascii_alphanumeric() {
                key.push(c.to_ascii_lowercase());
                dash = false;
            } else if !dash && !key.is_empty() && !key.ends_with('-') {
                key.push('-');
                dash = true;
            }
        }
        while key.ends_with('-') {
            key.pop();
        }
    }
    key.truncate(64);
    while key.ends_with('-') {
        key.pop();
    }
    (!key.is_empty()).then_some(key)
}

/// A clash settled: where the game went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Settled {
    /// The game made for it here.
    pub game_id: i64,
    pub round_id: i64,
    pub board_no: u32,
    /// Rounds changed, each with its newest change number.
    #[serde(skip)]
    pub rounds: Vec<(i64, i64)>,
}

impl Store {
    /// An arbiter here settles a clash: the venue's game `remote` from `origin` goes on
    /// board `board_no` of its round, which must be free, and follows the venue's moves and
    /// results there from now on (the venue keeps its own number for it; a renumbering there
    /// no longer moves it here). A clash is a game that came for a board another game holds,
    /// or one its venue renumbered onto such a board.
    pub async fn settle_clash(&self, origin: &str, remote: i64, board_no: u32) -> Result<Settled> {
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut touched = Touched::default();
            // The clash first, as a write: a push of the same game that settled it (on a free
            // board) or is settling it waits for this or is seen to have done it.
            let row: Option<(i64, String)> = sqlx::query_as(
                "DELETE FROM mirror_clashes WHERE origin = $1 AND remote_id = $2 RETURNING round_id, held")
                .bind(origin).bind(remote).fetch_optional(&mut *tx).await?;
            let Some((round, held)) = row else {
                // Or a game its venue renumbered onto a board another game keeps here: it goes
                // where the arbiter says (its board now, to keep it there), and stops following
                // the venue's number.
                let moved: Option<(i64, i64, i64)> = sqlx::query_as(
                    "SELECT g.id, g.round_id, g.board_no FROM mirror_ids m JOIN games g ON g.id = m.local_id
                     WHERE m.origin = $1 AND m.kind = 'game' AND m.remote_id = $2 AND m.follows = 1
                       AND m.remote_board IS NOT NULL AND m.remote_board <> g.board_no")
                    .bind(origin).bind(remote).fetch_optional(&mut *tx).await?;
                let Some((id, round, from)) = moved else {
                    return Err(StoreError::NotFound { what: "clash of venue game", id: format!("{origin}/{remote}") });
                };
                let to = i64::from(board_no);
                if to != from {
                    let taken: Option<(i64,)> = sqlx::query_as("SELECT id FROM games WHERE round_id = $1 AND board_no = $2")
                        .bind(round).bind(to).fetch_optional(&mut *tx).await?;
                    if taken.is_some() {
                        return Err(StoreError::Conflict(format!("board {board_no} of this round has a game already; choose a free board")));
                    }
                    sqlx::query("UPDATE games SET board_no = $1 WHERE id = $2").bind(to).bind(id).execute(&mut *tx).await?;
                    let payload = serde_json::json!({"board_no": to}).to_string();
                    bump!(tx, touched, id, "game", &payload);
                }
                sqlx::query("UPDATE mirror_ids SET follows = 0 WHERE origin = $1 AND kind = 'game' AND remote_id = $2")
                    .bind(origin).bind(remote).execute(&mut *tx).await?;
                let detail = serde_json::json!({"origin": origin, "venue_game": remote, "board_no": board_no, "from": from}).to_string();
                sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                    .bind(now_ms()).bind("arbiter").bind("settle-clash").bind(id).bind(&detail)
                    .execute(&mut *tx).await?;
                notify!(self, tx, touched);
                tx.commit().await?;
                return Ok(Settled { game_id: id, round_id: round, board_no, rounds: touched.rounds().collect() });
            };
            let mapped: Option<(i64,)> = sqlx::query_as("SELECT local_id FROM mirror_ids WHERE origin = $1 AND kind = 'game' AND remote_id = $2")
                .bind(origin).bind(remote).fetch_optional(&mut *tx).await?;
            if mapped.is_some() {
                return Err(StoreError::NotFound { what: "clash of venue game (its hall has placed it since)", id: format!("{origin}/{remote}") });
            }
            let mut new: StoredGame = serde_json::from_str(&held)
                .map_err(|e| StoreError::Conflict(format!("the venue's version of the game does not read: {e}")))?;
            let venue_board = i64::from(new.pairing.board_no);
            new.pairing.board_no = board_no;
            let made: Option<(i64,)> = sqlx::query_as("INSERT INTO games (round_id, board_no) VALUES ($1, $2) ON CONFLICT (round_id, board_no) DO NOTHING RETURNING id")
                .bind(round).bind(i64::from(board_no)).fetch_optional(&mut *tx).await?;
            let Some((id,)) = made else {
                return Err(StoreError::Conflict(format!("board {board_no} of this round has a game already; choose a free board")));
            };
            map_id!(tx, origin, "game", remote, id);
            let old = game_in!(tx, id);
            apply_game!(tx, touched, id, &old, &new);
            // Placed by the arbiter, off the venue's number: it no longer follows that number.
            sqlx::query("UPDATE mirror_ids SET local_edits = (SELECT edits FROM games WHERE id = $1), remote_board = $4, follows = 0
                         WHERE origin = $2 AND kind = 'game' AND remote_id = $3")
                .bind(id).bind(origin).bind(remote).bind(venue_board).execute(&mut *tx).await?;
            let detail = serde_json::json!({"origin": origin, "venue_game": remote, "board_no": board_no}).to_string();
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                .bind(now_ms()).bind("arbiter").bind("settle-clash").bind(id).bind(&detail)
                .execute(&mut *tx).await?;
            notify!(self, tx, touched);
            tx.commit().await?;
            Ok(Settled { game_id: id, round_id: round, board_no, rounds: touched.rounds().collect() })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_keys_are_checked_and_made_from_a_name_and_date() {
        assert!(check_event_key("olympiad-2026.open_A").is_ok());
        assert!(check_event_key("").is_err());
        assert!(check_event_key("two words").is_err());
        assert!(check_event_key(&"x".repeat(65)).is_err());
        assert_eq!(
            event_key_from("  45th Chess Olympiad (Open) ", Some("2026/09/10")).as_deref(),
            Some("45th-chess-olympiad-open-2026-09-10")
        );
        assert_eq!(event_key_from("", None), None);
        assert_eq!(event_key_from("---", Some("")), None);
        let long = event_key_from(&"ab ".repeat(40), Some("2026")).unwrap_or_default();
        assert!(long.len() <= 64 && !long.ends_with('-'));
        assert!(check_event_key(&long).is_ok());
    }
}
