//! What an import of PGN reports when a game cannot be read, with enough of the game and of
//! the file to find it.

use std::fmt;

/// What went wrong with one game of a PGN file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportErrorKind {
    /// A move that is not legal (or not a move: a null move, a typo) in the position reached.
    #[error("{move_number}{dots} {san}: {reason}", dots = if *white { "." } else { "..." })]
    IllegalMove {
        /// 1-based index of the move in the game (half-moves).
        ply: usize,
        /// The fullmove number, and whether it was White's move: `23... Nxe5` is 23, false.
        move_number: u32,
        white: bool,
        /// The move as the file wrote it.
        san: String,
        reason: &'static str,
    },
    #[error("bad FEN {fen:?}: {reason}")]
    BadFen { fen: String, reason: String },
    #[error("variant {0:?} is not chess; only standard chess and Chess960 are supported")]
    UnsupportedVariant(String),
    /// The text could not be read as PGN at all (an unterminated comment or tag).
    #[error("{0}")]
    Syntax(String),
    #[error("no game found")]
    NoGame,
}

/// A game of a PGN file that could not be imported, with enough context to find it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnImportError {
    /// 1-based number of the game in the file.
    pub game: usize,
    pub white: Option<String>,
    pub black: Option<String>,
    /// 1-based line of the file where the problem is.
    pub line: usize,
    pub kind: ImportErrorKind,
}

impl fmt::Display for PgnImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "game {}", self.game)?;
        if self.white.is_some() || self.black.is_some() {
            let name = |n: &Option<String>| n.clone().unwrap_or_else(|| "?".to_string());
            write!(f, " ({} - {})", name(&self.white), name(&self.black))?;
        }
        write!(f, ", line {}: {}", self.line, self.kind)
    }
}

impl std::error::Error for PgnImportError {}
