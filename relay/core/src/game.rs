//! A game as the relay records it: tags, the start position, the moves with their clocks, and
//! the result. PGN, EPD and the live views are all written from this.

use crate::clock_time::ClockTime;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};
use std::fmt;
use std::str::FromStr;

/// A game's result as PGN writes it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
    /// Still going, or unknown.
    #[default]
    #[serde(rename = "*")]
    Ongoing,
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Ongoing => "*",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid result {0:?} (expected 1-0, 0-1, 1/2-1/2 or *)")]
pub struct BadResult(pub String);

impl FromStr for GameResult {
    type Err = BadResult;

    fn from_str(s: &str) -> Result<GameResult, BadResult> {
        match s.trim() {
            "1-0" => Ok(GameResult::WhiteWins),
            "0-1" => Ok(GameResult::BlackWins),
            "1/2-1/2" | "½-½" => Ok(GameResult::Draw),
            "*" => Ok(GameResult::Ongoing),
            other => Err(BadResult(other.to_string())),
        }
    }
}

/// One move of a recorded game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub mv: Move,
    /// SAN with check/mate suffix, in the position before the move.
    pub san: SanPlus,
    /// Time left on the mover's clock after the lever press (increment included).
    pub clk: Option<ClockTime>,
    /// Time the move took.
    pub emt: Option<ClockTime>,
    /// A comment written after the move (without the clock commands).
    pub comment: Option<String>,
}

impl RecordedMove {
    pub fn uci(&self, mode: CastlingMode) -> UciMove {
        self.mv.to_uci(mode)
    }
}

/// An ordered list of PGN tag pairs (names unique).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tags(pub Vec<(String, String)>);

impl Tags {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets a tag, keeping its place if it exists.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value,
            None => self.0.push((name.to_string(), value)),
        }
    }

    pub fn remove(&mut self, name: &str) {
        self.0.retain(|(n, _)| n != name);
    }
}

/// A game: tags, start position, moves, result.
#[derive(Clone, Debug)]
pub struct Game {
    pub tags: Tags,
    /// The start position; the standard one unless the game began elsewhere (Chess960, a
    /// position set up by the arbiter).
    pub start: Chess,
    pub castling_mode: CastlingMode,
    pub moves: Vec<RecordedMove>,
    pub result: GameResult,
    /// A comment before the first move.
    pub intro: Option<String>,
}

impl Default for Game {
    fn default() -> Self {
        Game {
            tags: Tags::default(),
            start: Chess::default(),
            castling_mode: CastlingMode::Standard,
            moves: Vec::new(),
            result: GameResult::Ongoing,
            intro: None,
        }
    }
}

impl Game {
    /// True when the game does not start from the standard position.
    pub fn has_custom_start(&self) -> bool {
        self.start != Chess::default() || self.castling_mode == CastlingMode::Chess960
    }

    pub fn start_fen(&self) -> Fen {
        Fen::from_position(&self.start, EnPassantMode::Legal)
    }

    /// How an error names the game: `White - Black (round R)`.
    pub fn label(&self) -> String {
        let tag = |name| self.tags.get(name).unwrap_or("?");
        format!(
            "{} - {} (round {})",
            tag("White"),
            tag("Black"),
            tag("Round")
        )
    }

    /// The position after all moves.
    pub fn position(&self) -> Chess {
        self.position_at(self.moves.len())
    }

    /// The position after `plies` moves (clamped to the game's length).
    pub fn position_at(&self, plies: usize) -> Chess {
        let mut pos = self.start.clone();
        for m in self.moves.iter().take(plies) {
            pos.play_unchecked(m.mv);
        }
        pos
    }

    /// Appends a legal move, computing its SAN.
    pub fn push(&mut self, mv: Move, clk: Option<ClockTime>, emt: Option<ClockTime>) {
        let pos = self.position();
        let san = SanPlus::from_move(pos, mv);
        self.moves.push(RecordedMove {
            mv,
            san,
            clk,
            emt,
            comment: None,
        });
    }
}

/// Plays moves written in UCI (as the store keeps them) from `start`, each checked legal: the
/// moves as far as they go and, when one does not read or is not legal there, its index. The
/// one place stored moves become positions (export, corrections, the cloud's check of pushed
/// games, a desk resumed after a restart).
pub fn play_uci<'a>(
    start: &Chess,
    ucis: impl IntoIterator<Item = &'a str>,
) -> (Vec<Move>, Option<usize>) {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for (i, text) in ucis.into_iter().enumerate() {
        let Some(mv) = text
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            return (moves, Some(i));
        };
        pos.play_unchecked(mv);
        moves.push(mv);
    }
    (moves, None)
}

/// The number (0–959, Scharnagl's numbering) of the Chess960 start position a FEN shows, when it
/// shows one other than the standard position (number 518): what spectators of a Chess960
/// game are told, the draw being part of the event.
pub fn chess960_number(fen: &str) -> Option<u16> {
    let setup = fen.parse::<Fen>().ok()?.into_setup();
    if setup.board == shakmaty::Board::new() {
        return None;
    }
    (0..960u32)
        .find(|&n| shakmaty::Board::chess960(n) == setup.board)
        .and_then(|n| u16::try_from(n).ok())
}

/// Whether the position `fen` has no legal move (mate or stalemate: nothing for an engine to
/// think about), or does not read.
pub fn no_moves(fen: &str) -> bool {
    let Ok(setup) = fen.parse::<Fen>().map(Fen::into_setup) else {
        return true;
    };
    position_of(setup).is_none_or(|p| p.legal_moves().is_empty())
}

/// A set-up position as a game, read with standard castling or else Chess960's.
fn position_of(setup: shakmaty::Setup) -> Option<Chess> {
    setup
        .clone()
        .position::<Chess>(CastlingMode::Standard)
        .ok()
        .or_else(|| setup.position::<Chess>(CastlingMode::Chess960).ok())
}

/// An engine's line, UCI moves from the position `fen`, as SAN, as far as its moves read and
/// are legal there (a worker's answer is not trusted further than that).
pub fn line_san(fen: &str, ucis: &[String]) -> Vec<String> {
    let Ok(setup) = fen.parse::<Fen>().map(Fen::into_setup) else {
        return Vec::new();
    };
    let Some(mut pos) = position_of(setup) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for text in ucis {
        let Some(mv) = text
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            break;
        };
        out.push(SanPlus::from_move_and_play_unchecked(&mut pos, mv).to_string());
    }
    out
}

#[cfg(test)]
mod play_uci_tests {
    use super::*;

    #[test]
    fn stored_moves_replay_up_to_the_first_bad_one() {
        let start = Chess::default();
        let (moves, bad) = play_uci(&start, ["e2e4", "e7e5", "e1e3", "g1f3"]);
        assert_eq!(moves.len(), 2);
        assert_eq!(bad, Some(2));
        let (moves, bad) = play_uci(&start, ["e2e4", "e7e5", "g1f3"]);
        assert_eq!((moves.len(), bad), (3, None));
        assert_eq!(play_uci(&start, ["zz"]).1, Some(0));
    }

    #[test]
    fn chess960_numbers_and_engine_lines() {
        assert_eq!(
            chess960_number("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            None
        );
        // Number 0 is BBQNNRKR (Scharnagl's table).
        assert_eq!(
            chess960_number("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"),
            Some(0)
        );
        assert_eq!(chess960_number("8/8/8/8/8/8/8/K6k w - - 0 1"), None);
        let line: Vec<String> = ["e2e4", "e7e5", "d1h5", "e8e7", "h5f7"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(line_san(start, &line[..3]), ["e4", "e5", "Qh5"]);
        // After ...e5 the e7 square is free for the king; Qxf7 is then check.
        assert_eq!(line_san(start, &line), ["e4", "e5", "Qh5", "Ke7", "Qxf7+"]);
        assert!(no_moves(
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
        ));
        assert!(!no_moves(start));
        // An illegal move ends the line.
        assert_eq!(line_san(start, &["e2e5".to_string()]), Vec::<String>::new());
    }
}
