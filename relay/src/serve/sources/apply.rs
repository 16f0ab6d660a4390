//! A source's PGN, read, matched to the round's boards, and what differs handed to the hall
//! as edits (which the writer stores and announces). The rules:
//!
//! - a game goes to the board its `[Board "N"]` names, else the `b` of `[Round "r.b"]`, else
//!   the board whose pairing has both its players (names compared without case, spaces and
//!   punctuation); only boards in the source's range;
//! - moves the source has beyond the round's game are added, with its `[%clk]`; a result the
//!   round's game lacks is set (for an arbiter to confirm);
//! - a game an e-board plays is never changed: a source that disagrees with it is a clash;
//! - a game the source filled itself follows the source's corrections (a takeback, a move
//!   put right); one filled otherwise (typed, edited by an arbiter) is kept, and the
//!   difference is a clash.

use super::registry::Polling;
use crate::serve::id::GameId;
use crate::serve::jobs::{EditAction, GameEdit};
use crate::serve::views::{GameStatus, stored_result};
use relay_core::game::{Game, GameResult};
use relay_store::{PgnSource, StoredGame, StoredMove, now_ms};
use shakmaty::EnPassantMode;
use shakmaty::fen::Fen;
use std::collections::HashSet;
use std::time::Duration;

/// The games a source has filled: it may correct them.
#[derive(Debug, Default)]
pub struct Fed(HashSet<GameId>);

/// What a poll's PGN did.
#[derive(Debug, Default)]
pub struct Report {
    pub games: usize,
    pub matched: usize,
    pub moves: u64,
    pub clashes: Vec<String>,
    pub unmatched: Vec<String>,
    pub error: Option<String>,
    /// Every change was handed over and stored (else the next poll reads the PGN whole).
    pub complete: bool,
}

/// The boards of a source's range ("" for any; "1-20", "4,6,9-12").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardRange(Vec<(u32, u32)>);

impl BoardRange {
    pub fn parse(text: &str) -> Result<BoardRange, String> {
        let mut parts = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let n = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=9999).contains(n))
                    .ok_or_else(|| format!("{part:?} is no board or range of boards (1-9999)"))
            };
            let (a, b) = (n(a)?, n(b)?);
            if a > b {
                return Err(format!("{part:?} runs backwards"));
            }
            parts.push((a, b));
        }
        Ok(BoardRange(parts))
    }

    pub fn has(&self, board: u32) -> bool {
        self.0.is_empty() || self.0.iter().any(|(a, b)| (*a..=*b).contains(&board))
    }
}

/// A name as compared: letters and digits only, in lower case.
fn plain(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The board of the round `game` is for, if any.
fn board_of(game: &Game, round: &[StoredGame]) -> Option<u32> {
    if let Some(n) = game.tags.get("Board").and_then(|b| b.trim().parse().ok()) {
        return Some(n);
    }
    if let Some(n) = game
        .tags
        .get("Round")
        .and_then(|r| r.trim().rsplit_once('.'))
        .and_then(|(_, b)| b.parse().ok())
    {
        return Some(n);
    }
    let (white, black) = (
        plain(game.tags.get("White").unwrap_or("")),
        plain(game.tags.get("Black").unwrap_or("")),
    );
    if white.is_empty() || black.is_empty() {
        return None;
    }
    round
        .iter()
        .find(|g| {
            let name = |p: &Option<String>| plain(p.as_deref().unwrap_or(""));
            name(&g.pairing.white.name) == white && name(&g.pairing.black.name) == black
        })
        .map(|g| g.pairing.board_no)
}

/// Hands the hall one change of a game and waits until it is stored.
async fn edit(
    p: &Polling,
    game_id: GameId,
    action: EditAction,
    moves: Vec<StoredMove>,
) -> Result<(), String> {
    let Some(rx) = GameEdit::send(&p.hall, game_id, action, moves, None) else {
        return Err("the service is stopping".into());
    };
    match tokio::time::timeout(Duration::from_secs(15), rx).await {
        Ok(Ok(Ok(_))) => Ok(()),
        Ok(Ok(Err(e))) => Err(format!("{e:?}")),
        Ok(Err(_)) => Err("the service is stopping".into()),
        Err(_) => Err("the database did not answer within 15 s".into()),
    }
}

/// Reads `text` and hands the round what differs (see the module's rules).
pub async fn apply(p: &Polling, source: &PgnSource, text: &str, fed: &mut Fed) -> Report {
    let mut report = Report {
        complete: true,
        ..Report::default()
    };
    let round = match p.store.round_games(source.round_id).await {
        Ok(g) => g,
        Err(e) => {
            report.error = Some(format!("the round's games could not be read: {e}"));
            report.complete = false;
            return report;
        }
    };
    let range = BoardRange::parse(&source.boards).unwrap_or(BoardRange(Vec::new()));
    let mut taken: HashSet<u32> = HashSet::new();
    for (i, read) in relay_core::pgn::read_games(text).into_iter().enumerate() {
        report.games += 1;
        let game = match read {
            Ok(g) => g,
            Err(e) => {
                report.unmatched.push(format!("game {}: {e}", i + 1));
                continue;
            }
        };
        let who = format!(
            "{} – {}",
            game.tags.get("White").unwrap_or("?"),
            game.tags.get("Black").unwrap_or("?")
        );
        let Some(board) = board_of(&game, &round).filter(|b| range.has(*b)) else {
            report.unmatched.push(who);
            continue;
        };
        let Some(stored) = round.iter().find(|g| g.pairing.board_no == board) else {
            report
                .unmatched
                .push(format!("{who} (board {board}: no game of the round there)"));
            continue;
        };
        if !taken.insert(board) {
            report.clashes.push(format!(
                "board {board}: the source has two games for it ({who}); the first was taken"
            ));
            continue;
        }
        report.matched += 1;
        match follow(p, stored, &game, fed).await {
            Ok((moves, clash)) => {
                report.moves += moves;
                if let Some(c) = clash {
                    report.clashes.push(format!("board {board}: {c}"));
                }
            }
            Err(e) => {
                report.complete = false;
                report.error = Some(format!("board {board}: {e}"));
            }
        }
    }
    report
}

/// Brings the round's game `stored` to the source's `game` where the rules allow: the moves
/// added, and a clash in words where the round's game was kept.
async fn follow(
    p: &Polling,
    stored: &StoredGame,
    game: &Game,
    fed: &mut Fed,
) -> Result<(u64, Option<String>), String> {
    let id = stored.id;
    let theirs = relay_store::stored_moves(game, now_ms());
    let start = Fen::from_position(&game.start, EnPassantMode::Legal).to_string();
    let ours_start = stored
        .start_position()
        .map(|p| Fen::from_position(&p, EnPassantMode::Legal).to_string());
    if ours_start.as_deref() != Some(start.as_str()) {
        return Ok((
            0,
            Some("the source's game starts from another position; the round's is kept".into()),
        ));
    }
    let common = stored
        .moves
        .iter()
        .zip(&theirs)
        .take_while(|(a, b)| a.uci == b.uci)
        .count();
    let eboard = p.boards.eboard_on(id);
    let mut added = 0;
    if stored.moves.len() > common {
        // The round's game has moves the source has not (or others).
        let differ = match (stored.moves.get(common), theirs.get(common)) {
            (Some(a), Some(b)) => format!(
                "ply {}: {} here, {} in the source",
                common + 1,
                a.san,
                b.san
            ),
            (Some(a), None) => {
                format!("the round's game goes on ({} at ply {})", a.san, common + 1)
            }
            _ => String::new(),
        };
        match eboard {
            Some(serial) => {
                return Ok((
                    0,
                    Some(format!(
                        "e-board {serial}'s game and the source differ ({differ}); the e-board's game is kept"
                    )),
                ));
            }
            None if fed.0.contains(&id) => {
                edit(
                    p,
                    id,
                    EditAction::Replace {
                        what: format!("corrected by its PGN source ({differ})"),
                    },
                    theirs.clone(),
                )
                .await?;
                added += (theirs.len() - common) as u64;
            }
            None => {
                return Ok((
                    0,
                    Some(format!(
                        "the round's game and the source differ ({differ}); the round's game is kept"
                    )),
                ));
            }
        }
    } else if theirs.len() > common {
        if eboard.is_some() {
            // The e-board will play them; the source is ahead of it, which is no clash.
            return Ok((0, None));
        }
        for m in &theirs[common..] {
            edit(p, id, EditAction::Typed, vec![m.clone()]).await?;
            added += 1;
        }
        fed.0.insert(id);
    }
    if game.result != GameResult::Ongoing
        && stored_result(&stored.result) == GameResult::Ongoing
        && eboard.is_none()
    {
        edit(
            p,
            id,
            EditAction::Result {
                result: game.result,
                termination: game.tags.get("Termination").map(str::to_string),
                status: GameStatus::Finished,
            },
            theirs,
        )
        .await?;
    }
    Ok((added, None))
}
