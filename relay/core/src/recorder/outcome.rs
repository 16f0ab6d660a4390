//! What the recorder says and how it is set: its settings, the [`Outcome`]s one input yields,
//! and the names those use (why a result is proposed, how a game ended, which drawing
//! condition holds, a colour as the JSON writes it). These are the recorder's public face:
//! the service stores and sends them, so they sit below every file that makes them.

use crate::clock_time::ClockTime;
use crate::game::GameResult;
use crate::incident::IllegalKind;
use boards::protocol::Orientation;
use serde::{Deserialize, Serialize};
use shakmaty::Color;

/// Settings of a recorder.
#[derive(Clone, Debug)]
pub struct RecorderConfig {
    /// How long the board must be still before it is read as a position. USB boards scan in
    /// about 250 ms; Bluetooth boards take twice as long.
    pub settle_ms: u64,
    /// The longest run of moves missed while a board was offline that is filled in.
    pub max_bridge: usize,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        RecorderConfig {
            settle_ms: 300,
            max_bridge: 3,
        }
    }
}

/// Why a result is proposed (an arbiter confirms it; it is never a move).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProposalReason {
    KingsInCentre,
    MagicPiece,
    TimeForfeit,
}

/// Why the game ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameEnd {
    Checkmate,
    Stalemate,
}

/// A drawing condition the rules recognise; flagged for the arbiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawCondition {
    InsufficientMaterial,
    ThreefoldRepetition,
    FivefoldRepetition,
    FiftyMoves,
    SeventyFiveMoves,
}

/// What one input changed. A board is mid-move most of the time, so most inputs yield nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// A game started from the position on the board.
    NewGame {
        orientation: Orientation,
        chess960: bool,
        fen: String,
    },
    /// A move was played (`ply` counts from 1).
    Move {
        ply: usize,
        san: String,
        uci: String,
    },
    /// The move at `ply` was replaced by another.
    Correction {
        ply: usize,
        san: String,
        replaced: String,
    },
    /// Moves after `ply` were taken back.
    Takeback { ply: usize },
    /// The board shows a position the game cannot explain; the game waits.
    OutOfSync {
        board_fen: String,
        game_fen: String,
        candidates: usize,
    },
    /// The board agrees with the game again.
    InSync,
    /// The clock time after the move at `ply` is known.
    MoveClock {
        ply: usize,
        clk: ClockTime,
        emt: Option<ClockTime>,
    },
    /// The running clock: both times and who is running.
    Clock {
        white: ClockTime,
        black: ClockTime,
        running: Option<ColorName>,
    },
    /// A result the board suggests; an arbiter confirms.
    ResultProposed {
        result: GameResult,
        reason: ProposalReason,
    },
    /// The rules ended the game.
    GameOver { result: GameResult, end: GameEnd },
    /// A drawing condition now holds.
    Draw { condition: DrawCondition },
    /// A player completed an illegal move (or pressed the clock without a move) in place of
    /// the move at `ply`: the board at the press showed `uci` (from and to squares as seen,
    /// `None` for a press without a move). The game's moves are untouched; the game waits
    /// for the position to be restored, as for any board it cannot explain.
    IllegalMove {
        ply: usize,
        color: ColorName,
        kind: IllegalKind,
        uci: Option<String>,
        /// The piece moved and the one it landed on, as FEN letters.
        piece: Option<char>,
        captured: Option<char>,
        clock_pressed: bool,
    },
    /// The game just begun was joined in its middle (recording began while it was under
    /// way): `color` was to move in its start position, as the running clock said.
    JoinedLate { color: ColorName },
    /// A clock time changed by more than the clock itself explains (time given by an
    /// arbiter, a clock set right), before the move at `ply`.
    ClockAdjustment {
        ply: usize,
        color: ColorName,
        delta_ms: i64,
    },
}

/// A colour as the JSON and the PGN Clock tag name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorName {
    White,
    Black,
}

impl ColorName {
    /// The other side.
    pub fn other(self) -> ColorName {
        match self {
            ColorName::White => ColorName::Black,
            ColorName::Black => ColorName::White,
        }
    }

    /// The side to move after `ply` plies from a position with `start_fen` (a FEN whose second
    /// field says who moves first; anything else: White).
    pub fn after_plies(start_fen: &str, plies: u32) -> ColorName {
        let first = if start_fen.split_whitespace().nth(1) == Some("b") {
            ColorName::Black
        } else {
            ColorName::White
        };
        if plies.is_multiple_of(2) {
            first
        } else {
            first.other()
        }
    }
}

impl From<Color> for ColorName {
    fn from(c: Color) -> Self {
        if c == Color::White {
            ColorName::White
        } else {
            ColorName::Black
        }
    }
}
