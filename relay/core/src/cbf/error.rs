//! Every refusal of the CBF module in one enum: what a game holds that a record cannot (when
//! writing), what is wrong with an index, and what is wrong with a record (when reading). A
//! record's own fault is wrapped in [`CbfError::Game`], which says which game and where, so a
//! caller shows one line that finds the game in the file.

use super::layout::MAX_TEXT;
use shakmaty::Square;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;

/// Why a game cannot be written or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CbfError {
    // Writing: what a record cannot hold.
    #[error("a Chess960 game cannot be written: CBF knows only the standard castling")]
    Chess960,
    /// A character whose code page 850 byte ChessBase shows as a piece ("óúñÑªº").
    #[error("{what} {text:?} holds '{c}', which ChessBase shows as a chess piece")]
    PieceInName {
        what: &'static str,
        text: String,
        c: char,
    },
    #[error("{what} {text:?} holds '{c}', which ChessBase's code page (850) lacks")]
    NotInCodePage {
        what: &'static str,
        text: String,
        c: char,
    },
    /// The player text over what its six-bit size field holds.
    #[error("the {what} text is {len} bytes, over CBF's {MAX_TEXT}")]
    TextTooLong { what: &'static str, len: usize },
    #[error("ply {ply} ({san}) is not legal")]
    IllegalMove { ply: usize, san: SanPlus },
    #[error("ply {ply} ({san}) is not among the generator's moves")]
    NotGenerated { ply: usize, san: SanPlus },
    #[error(
        "ply {ply} ({san}) is move number {number} of the generator; a CBF move byte holds at most 127"
    )]
    NumberTooHigh {
        ply: usize,
        san: SanPlus,
        number: usize,
    },
    #[error(
        "ply {ply} ({san}) is move number 127 with a comment: its byte would be 0xFF, which starts a variation"
    )]
    CommentedMove127 { ply: usize, san: SanPlus },
    #[error("{plies} plies are too many for CBF")]
    TooManyPlies { plies: usize },
    #[error("the comments take {len} bytes, more than CBF's 65535")]
    CommentsTooLong { len: usize },
    #[error("{full} full moves are more than CBF's 255")]
    TooManyFullMoves { full: usize },
    #[error("the start position's move number is above 256")]
    StartMoveNumber,

    // The CBI index.
    #[error("the CBI index is shorter than its first word")]
    IndexCut,
    #[error("the CBI index's first word is 0 (it holds the games + 1)")]
    IndexCountZero,
    #[error("the CBI index has {len} bytes, too few for its {games} games")]
    IndexTooShort { len: usize, games: usize },
    /// Game `game`'s word is below `game + 1`, which every word adds to the offset.
    #[error("game {game} (CBI byte {at}): its index entry is below {min}", at = 4 * game, min = game + 1)]
    IndexEntryTooLow { game: usize },

    // Reading: a record that does not read, and why.
    /// The game numbered `game` (from 1, deleted ones counted), at byte `offset` of the file.
    #[error("game {game} (from byte {offset}): {reason}")]
    Game {
        game: usize,
        offset: usize,
        reason: Box<CbfError>,
    },
    #[error("the offset is beyond the CBF file ({file} bytes)")]
    OffsetBeyondFile { file: usize },
    #[error("the header is cut short")]
    HeaderCut,
    #[error("bad length: the move count (mlen) is 0, it is the moves + 1")]
    ZeroMoveCount,
    #[error("bad length: the record's {len} bytes go beyond the end of the file ({file} bytes)")]
    RecordBeyondFile { len: usize, file: usize },
    #[error("the start position is cut short")]
    StartCut,
    #[error("bad piece code {code} on {square} in the start position")]
    BadPieceCode { code: u8, square: Square },
    #[error("bad en passant file {0}")]
    BadEpFile(u8),
    /// shakmaty's reason, as it words it.
    #[error("the start position is not legal: {reason}")]
    IllegalStart { reason: String },
    #[error("unbalanced variants: move byte {at} ends a variation none began")]
    VariationNotBegun { at: usize },
    #[error("unbalanced variants: {open} not ended at the end of the moves")]
    VariationNotEnded { open: usize },
    /// `at` counts the move list's bytes from 0, variations included; `ply` the main line's moves.
    #[error(
        "move byte {at} (ply {ply}): move number {number} is not in the generator's list of {listed}"
    )]
    NumberNotListed {
        at: usize,
        ply: usize,
        number: usize,
        listed: usize,
    },
    #[error("move byte {at} (ply {ply}): move number {number} is one ChessBase counts for no move")]
    NumberForNoMove {
        at: usize,
        ply: usize,
        number: usize,
    },
    #[error("move byte {at} (ply {ply}): move number {number} ({uci}) is not legal")]
    NumberNotLegal {
        at: usize,
        ply: usize,
        number: usize,
        uci: UciMove,
    },
}
