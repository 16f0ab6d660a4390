//! ChessBase's old game file (CBF) and its index (CBI), as described in
//! `../shared/specs/chessbase-cbf-format.txt` (the 1993 description by Horst Aurisch and
//! others). A record is a 14-byte coded header, the player and source texts (coded), one byte
//! a move (coded), the comments (plain) and, for a game that does not begin from the usual
//! position, 33 bytes of start position. A move is stored as its number in the list ChessBase's
//! move generator makes, so the generator's order *is* the format.
//!
//! ## What a record holds, and how each open question was settled
//!
//! The 1993 text leaves room, and relay's first writer (2025-2026) filled it by guessing. The
//! only outside program that still reads the format is Scidb's ChessBase-DOS codec (Gregor
//! Cramer, GPL-2.0-or-later, `src/db/cbf/`), written to read real ChessBase databases (its
//! comments cite games of public ChessBase archives it was checked on). No ChessBase file
//! could be found to test with here, so where the text is silent the reader written against
//! real files decides, and where the text speaks, the text and the reader were compared:
//!
//! - **Header byte 13** (§2.7, "magic", "checksum ?"). ChessBase's public games carry a check
//!   byte computed from the other header bytes, and Scidb refuses a record whose byte 13 is
//!   neither `GY·0x25 + byte5 + byte9` nor `byte3·0x1EC1·(byte8 + 1)·GY` (mod 256, on the
//!   plain header). Written: the first. Relay's first writer wrote 0, which is how a record
//!   from it is told apart (see "Reading" below).
//! - **Castling in the generator** (§2.4: "requires the king and the corresponding rook to be
//!   correctly placed, and the intervening squares to be free"). The text names no castling
//!   right and Scidb tests none: king on e1/e8, own rook in the corner, the squares between
//!   empty, and the castling is numbered whether or not it may still be played. Relay's first
//!   writer also asked for the right, so after a king or rook had moved and come back, every
//!   later move of that side numbered one lower than ChessBase's.
//! - **The pawn on the a-file** (not in the text). Scidb counts one extra number for a pawn
//!   of the side to move on a5 (White) or a4 (Black) when the last move was no double step,
//!   after that pawn's own moves: ChessBase's generator lists a capture "a5xh6 e.p." that
//!   wraps round the board edge. It is a number no move has. In the Tata Steel 2017
//!   broadcast 30 of 92 games reach such a position, and 17 of relay's first files of them
//!   failed in Scidb from this and the castling question above; a reader disagreeing with
//!   ChessBase here could not have read a third of real games, which is why the reader is
//!   taken to be right.
//! - **The e.p. carried over a castling** (§2.4's "illegal e.p."). After a double step
//!   answered by castling, ChessBase keeps the e.p. file for the side that made the double
//!   step: its pawns that could take "e.p." towards that file count one number each, whatever
//!   stands on the target square (an enemy piece there is counted a second time, after its
//!   ordinary capture), again for no move relay writes. Scidb does the same.
//! - **Promotions, e.p., the order of pieces and directions**: the text and Scidb agree with
//!   each other and with relay's first writer (below).
//! - **Texts.** ChessBase for DOS wrote the PC's code page; Scidb reads code page 850, and
//!   so do relay now (relay's first writer wrote Latin-1). The player text is "White-Black",
//!   split by readers at the *first* '-'; the source text is the event with the round in
//!   brackets, "Wijk aan Zee (3)", the form Scidb takes the round out of. There is no site.
//! - **Comments** (§2.5): the area starts with one 0xFF; each comment is four bytes of
//!   evaluations (0: none) and its text, and ends with 0xFF. Scidb reads the area one byte
//!   past the moves, which is that first 0xFF.
//!
//! ## The rules as written and read
//!
//! - Move generator (§2.4): the squares are visited file by file, a1..a8, b1..b8, …, h1..h8,
//!   and each piece of the side to move adds its moves. All directions are from White's side
//!   of the board for both colours, only pawns go towards their own promotion rank.
//!   King: the steps (file, rank) (−1,−1), (−1,0), (−1,+1), (0,−1), (0,+1), (+1,−1), (+1,0),
//!   (+1,+1), regardless of threats, then the short and the long castling as above (checks
//!   are not looked at). Queen: the bishop's runs, then the rook's. Rook: runs left, down,
//!   right, up. Bishop: runs left-down, right-down, right-up, left-up. A run stops before an
//!   own piece and on (taking) an enemy one. Knight: (−2,−1), (−2,+1), (+2,−1), (+2,+1),
//!   (−1,−2), (−1,+2), (+1,−2), (+1,+2). Pawn: the double step (from its start rank, both
//!   squares empty), the single step, the capture towards the a-file, the capture towards
//!   the h-file (each to the last rank as four moves: =Q, =R, =B, =N), then e.p. towards the
//!   a-file and towards the h-file, with the numbers for no move of the two items above in
//!   their places. The list is pseudo-legal (a move may leave the own king in check); a move
//!   is written as its number, from 1.
//! - A move byte is its number 1..=127, bit 7 set when the move has a comment. A game whose
//!   move would need a number above 127, or a commented move numbered 127 (that byte, 0xFF,
//!   starts a variation), cannot be written. Variations are never written (a [`Game`] has
//!   none); reading skips them ($FF … $80, nested), and their commented moves use up their
//!   comments.
//! - Coding: the header, texts and moves are XOR-coded exactly as the specification's C
//!   snippets say (writing runs them backwards: header byte 11 first, then the 14-byte key run).
//!   Multibyte integers are big-endian.
//! - Header: the year comes from the `Date` tag (1772..=2026, else 127, "no year": a game of
//!   2027 or later is written without its year; reading gives `YYYY.??.??` or `????.??.??`).
//!   Result: 0 = 0-1, 1 = ½-½, 2 = 1-0, 3 with variant 0 = `*` (reading any 3 gives `*`). Elo:
//!   `WhiteElo`/`BlackElo` rounded to the nearest multiple of 5 and kept when within
//!   1605..=2875 as (Elo − 1600)/5, else 0 ("none"). ECO (standard start only): "B90" is ECO1 =
//!   1·100 + 90 + 1, its bits spread as §2.2 says; ECO2 (the sub-code) is written 0 and ignored
//!   when read, and an ECO1 whose letter would be F is ignored (no such ECO code). Byte 12 is
//!   the number of full moves the game spans (a game of more than 255 cannot be written),
//!   byte 13 the check byte above; flags2 bit 6 is written 0 and ignored. Games marked deleted
//!   (flags1 bit 7) are skipped.
//! - Set-up start: flags1 bit 1 Black to move, bits 2..5 the castling rights (White O-O-O,
//!   White O-O, Black O-O-O, Black O-O), flags2 bits 0..3 the en passant file (1..8, 0 none;
//!   written from [`EnPassantMode::Always`] so that the reader's generator numbers alike).
//!   The 33 bytes hold two squares a byte in the order a1, b1, …, h1, a2, …, h8, the first of
//!   each pair in the high nibble, pieces K1 Q2 N3 B4 R5 P6 (Black + 8), and the full move
//!   number − 1 (a start beyond move 256 cannot be written). The half-move clock is not kept
//!   (read as 0). Reading drops castling rights whose king and rook are not in place and an en
//!   passant file no double step can explain, rather than refusing the game.
//! - Texts, each at most 63 bytes of code page 850. What a game cannot have written exactly
//!   is refused ([`encode_game`] says why; `relay convert` leaves such a game out, named):
//!   White's name holding a '-' (readers would split it there); a character of the names
//!   that code page 850 lacks, or one of "óúñÑªº", whose codes ChessBase shows as chess
//!   pieces in names; names over 63 bytes together. The event is the least of a game: a
//!   character the code page lacks is written '?' and an event too long is cut, keeping the
//!   round. The round is written when it is digits and dots ("3", "1.4"), else left out;
//!   `Site` and the other tags are not kept. Missing or "?" names and event are written empty and read back as "?".
//!   Reading sets the seven roster tags (`Site` "?"), `WhiteElo`/`BlackElo`/`ECO` when
//!   present, and the start position in [`Game::start`] (as the PGN reader does, not as tags).
//! - Comments: as above, '\n' written 0xFE ('\r' dropped); characters code page 850 lacks,
//!   0xFE and 0xFF, and 177..=182 (which ChessBase shows as piece symbols) are written '?'.
//!   Only the move's comment is written: CBF has no clocks, and a comment before the first
//!   move has no place (dropped). Reading splits the area at 0xFF; a piece whose first four
//!   bytes are all below 0x20 with the fourth 0 loses those four, another loses its leading
//!   bytes below 0x20 (evaluations; they are not kept); 0xFE reads as '\n' and 177..=182 as
//!   "K", "Q", "N", "B", "R" and "" (the pawn, as in SAN); an empty text is no comment.
//! - CBI: `games + 1`, then for game i (from 1) its offset + i + 1, then the file's length +
//!   games + 2, each a big-endian `u32`. Reading goes through the index when there is one
//!   (§2 says games should be reached only through it), else record after record.
//!
//! ## Reading
//!
//! A record whose byte 13 is one of the two check values is read by ChessBase's rules above.
//! One whose byte 13 is neither was written by relay before this change (or is a "private"
//! ChessBase game, which nobody can read): it is read by relay's first rules — the generator
//! without the numbers for no move and with castling only while the right is held, Latin-1
//! texts, the source text `Event|Site|Round`, the players split at " - " when there is one.
//! If a record does not read by the rules its byte 13 points to, the other rules are tried.

use crate::game::{Game, GameResult, RecordedMove, Tags};
use shakmaty::san::SanPlus;
use shakmaty::{
    Bitboard, Board, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, File, FromSetup,
    Move, Piece, Position, Rank, Role, Setup, Square, attacks,
};
use std::num::NonZeroU32;

/// Why a game cannot be written or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CbfError(pub String);

const HEADER_LEN: usize = 14;
/// The size fields of the texts are six bits wide.
const MAX_TEXT: usize = 63;
const POSITION_LEN: usize = 33;
/// In the move list: a variation starts (never a move: 127 with the comment bit).
const VARIANT_START: u8 = 0xff;
/// In the move list: a variation ends (never a move: there is no move 0).
const VARIANT_END: u8 = 0x80;
/// A move byte's comment bit.
const COMMENTED: u8 = 0x80;
/// In the comment area: a comment starts.
const COMMENT_START: u8 = 0xff;
/// In a comment: a line break.
const COMMENT_NEWLINE: u8 = 0xfe;
/// ChessBase's piece symbols in comments, king to pawn, and what they read as.
const PIECE_SYMBOLS: [(u8, &str); 6] = [
    (177, "K"),
    (178, "Q"),
    (179, "N"),
    (180, "B"),
    (181, "R"),
    (182, ""),
];

/// The king's steps (file, rank), in the generator's order (§2.4, the 3×3 diagram).
const KING_STEPS: [(i32, i32); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];
/// The rook's runs: left, down, right, up.
const ROOK_RUNS: [(i32, i32); 4] = [(-1, 0), (0, -1), (1, 0), (0, 1)];
/// The bishop's runs: left-down, right-down, right-up, left-up.
const BISHOP_RUNS: [(i32, i32); 4] = [(-1, -1), (1, -1), (1, 1), (-1, 1)];
/// The knight's jumps, numbered 1..8 in the 5×5 diagram.
const KNIGHT_JUMPS: [(i32, i32); 8] = [
    (-2, -1),
    (-2, 1),
    (2, -1),
    (2, 1),
    (-1, -2),
    (-1, 2),
    (1, -2),
    (1, 2),
];
const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// The square `df` files and `dr` ranks away, if on the board.
fn step(sq: Square, df: i32, dr: i32) -> Option<Square> {
    Some(Square::from_coords(
        sq.file().offset(df)?,
        sq.rank().offset(dr)?,
    ))
}

/// Whose rules a record follows (see the module notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// ChessBase's, as real files and Scidb's reader have them; what relay writes now.
    ChessBase,
    /// Relay's first writer's (byte 13 written 0): read so that its files are not lost.
    RelayFirst,
}

/// What ChessBase's generator remembers from the moves before: the file of a double step made
/// by the last move, or carried over a castling that answered it (then its "illegal e.p.").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EpMemory {
    file: Option<File>,
    carried: bool,
}

impl EpMemory {
    /// The memory after `mv` (a move of the position this memory belongs to).
    pub fn after(self, mv: Move) -> EpMemory {
        match mv {
            Move::Castle { .. } if self.file.is_some() => EpMemory {
                file: self.file,
                carried: true,
            },
            Move::Normal {
                role: Role::Pawn,
                from,
                to,
                ..
            } if from.rank().distance(to.rank()) == 2 => EpMemory {
                file: Some(from.file()),
                carried: false,
            },
            _ => EpMemory::default(),
        }
    }
}

/// The list ChessBase's move generator numbers from `pos`, in its order: a move's CBF number is
/// its index + 1. `None` is a number ChessBase counts for no move it can play (the a-file pawn
/// and the e.p. carried over a castling, [`Rules::ChessBase`] only). Pseudo-legal: king moves
/// regardless of threats, castling regardless of checks.
pub fn generator_moves(pos: &Chess, rules: Rules, ep: EpMemory) -> Vec<Option<Move>> {
    let board = pos.board();
    let us = pos.turn();
    let mut out = Vec::with_capacity(64);
    for file in File::ALL {
        for rank in Rank::ALL {
            let from = Square::from_coords(file, rank);
            let Some(piece) = board.piece_at(from) else {
                continue;
            };
            if piece.color != us {
                continue;
            }
            match piece.role {
                Role::King => {
                    for (df, dr) in KING_STEPS {
                        if let Some(to) = step(from, df, dr) {
                            push_if_free(board, us, Role::King, from, to, &mut out);
                        }
                    }
                    for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
                        if let Some(m) = castling(pos, rules, from, side) {
                            out.push(Some(m));
                        }
                    }
                }
                Role::Queen => {
                    for (df, dr) in BISHOP_RUNS.into_iter().chain(ROOK_RUNS) {
                        run(board, us, Role::Queen, from, df, dr, &mut out);
                    }
                }
                Role::Rook => {
                    for (df, dr) in ROOK_RUNS {
                        run(board, us, Role::Rook, from, df, dr, &mut out);
                    }
                }
                Role::Bishop => {
                    for (df, dr) in BISHOP_RUNS {
                        run(board, us, Role::Bishop, from, df, dr, &mut out);
                    }
                }
                Role::Knight => {
                    for (df, dr) in KNIGHT_JUMPS {
                        if let Some(to) = step(from, df, dr) {
                            push_if_free(board, us, Role::Knight, from, to, &mut out);
                        }
                    }
                }
                Role::Pawn => pawn_moves(pos, rules, ep, from, &mut out),
            }
        }
    }
    out
}

/// The CBF number of `mv` in `list` (its index + 1).
fn number_of(list: &[Option<Move>], mv: Move) -> Option<usize> {
    list.iter().position(|g| *g == Some(mv)).map(|i| i + 1)
}

/// A move to `to` unless an own piece stands there; returns whether `to` was empty.
fn push_if_free(
    board: &Board,
    us: Color,
    role: Role,
    from: Square,
    to: Square,
    out: &mut Vec<Option<Move>>,
) -> bool {
    match board.piece_at(to) {
        Some(p) if p.color == us => false,
        other => {
            out.push(Some(Move::Normal {
                role,
                from,
                capture: other.map(|p| p.role),
                to,
                promotion: None,
            }));
            other.is_none()
        }
    }
}

/// A sliding piece's run in one direction, up to an own piece or onto an enemy one.
fn run(
    board: &Board,
    us: Color,
    role: Role,
    from: Square,
    df: i32,
    dr: i32,
    out: &mut Vec<Option<Move>>,
) {
    let mut at = from;
    while let Some(to) = step(at, df, dr) {
        if !push_if_free(board, us, role, from, to, out) {
            break;
        }
        at = to;
    }
}

/// Castling to `side` as the generator tests it: king and rook where the standard game has
/// them and the squares between empty (relay's first rules: and the right still held). Checks
/// are not looked at.
fn castling(pos: &Chess, rules: Rules, king: Square, side: CastlingSide) -> Option<Move> {
    let us = pos.turn();
    let back = us.relative_rank(Rank::First);
    let corner = match side {
        CastlingSide::KingSide => File::H,
        CastlingSide::QueenSide => File::A,
    };
    let rook = Square::from_coords(corner, back);
    let right = match rules {
        Rules::ChessBase => true,
        Rules::RelayFirst => {
            pos.castles().has(us, side) && pos.castles().rook(us, side) == Some(rook)
        }
    };
    let placed = king == Square::from_coords(File::E, back)
        && right
        && pos.board().piece_at(rook) == Some(Role::Rook.of(us));
    let free = (attacks::between(king, rook) & pos.board().occupied()).is_empty();
    (placed && free).then_some(Move::Castle { king, rook })
}

fn pawn_moves(pos: &Chess, rules: Rules, ep: EpMemory, from: Square, out: &mut Vec<Option<Move>>) {
    let board = pos.board();
    let us = pos.turn();
    let dir = match us {
        Color::White => 1,
        Color::Black => -1,
    };
    let last = us.relative_rank(Rank::Eighth);
    // To the last rank as four moves, =Q, =R, =B, =N; else one.
    let push = |to: Square, capture: Option<Role>, out: &mut Vec<Option<Move>>| {
        let all = PROMOTIONS.map(Some);
        let promotions: &[Option<Role>] = if to.rank() == last { &all } else { &[None] };
        for &promotion in promotions {
            out.push(Some(Move::Normal {
                role: Role::Pawn,
                from,
                capture,
                to,
                promotion,
            }));
        }
    };
    let one = step(from, 0, dir).filter(|s| board.piece_at(*s).is_none());
    if let Some(one) = one {
        if from.rank() == us.relative_rank(Rank::Second)
            && let Some(two) = step(one, 0, dir).filter(|s| board.piece_at(*s).is_none())
        {
            push(two, None, out);
        }
        push(one, None, out);
    }
    for df in [-1, 1] {
        if let Some(to) = step(from, df, dir)
            && let Some(p) = board.piece_at(to).filter(|p| p.color != us)
        {
            push(to, Some(p.role), out);
        }
    }
    let real_ep = pos.ep_square(EnPassantMode::Always);
    let chessbase = rules == Rules::ChessBase;
    for df in [-1, 1] {
        // The wrapped "a5xh6 e.p.": counted where the a-pawn's capture to the right is tried.
        if chessbase
            && df == 1
            && from.file() == File::A
            && from.rank() == us.relative_rank(Rank::Fifth)
            && ep.file.is_none()
        {
            out.push(None);
        }
        let Some(to) = step(from, df, dir) else {
            continue;
        };
        if real_ep == Some(to) {
            out.push(Some(Move::EnPassant { from, to }));
        } else if chessbase
            && ep.carried
            && ep.file == Some(to.file())
            && to.rank() == us.relative_rank(Rank::Sixth)
        {
            // Whatever stands there: empty, an own piece, or an enemy one (then the capture
            // is counted twice, once here).
            out.push(None);
        }
    }
}

/// XORs the header with the key run of §2.1 (101, times 3 each byte, from byte 13 down).
fn header_keys(h: &mut [u8; HEADER_LEN]) {
    let mut k: u8 = 101;
    for b in h.iter_mut().rev() {
        *b ^= k;
        k = k.wrapping_mul(3);
    }
}

/// The extra key of header byte 11, from the plain text sizes.
fn flags2_key(h: &[u8; HEADER_LEN]) -> u8 {
    14u8.wrapping_add(h[4] & 63).wrapping_add(h[5] & 63)
}

/// The inverse of [`decode_header`]: byte 11 first (it needs the plain sizes), then the run.
fn encode_header(mut h: [u8; HEADER_LEN]) -> [u8; HEADER_LEN] {
    h[11] ^= flags2_key(&h);
    header_keys(&mut h);
    h
}

/// §2.1's decoding snippet.
fn decode_header(mut h: [u8; HEADER_LEN]) -> [u8; HEADER_LEN] {
    header_keys(&mut h);
    h[11] ^= flags2_key(&h);
    h
}

/// The two check values of header byte 13 that ChessBase's public games carry, from the
/// plain header (see the module notes).
fn check_bytes(h: &[u8; HEADER_LEN]) -> [u8; 2] {
    let gy = h[0];
    [
        gy.wrapping_mul(0x25).wrapping_add(h[5]).wrapping_add(h[9]),
        h[3].wrapping_mul(0xc1) // 0x1EC1 mod 256
            .wrapping_mul(h[8].wrapping_add(1))
            .wrapping_mul(gy),
    ]
}

/// §2.3: the player and source text together; the key starts at 3 × their length and is
/// multiplied by 3 each byte, from the last down. Its own inverse.
fn code_text(text: &mut [u8]) {
    let mut k = (3 * text.len()) as u8;
    for b in text.iter_mut().rev() {
        *b ^= k;
        k = k.wrapping_mul(3);
    }
}

/// §2.4: the move bytes, `s` being their count + 1 (the header's mlen); the key starts at
/// 49 × s and is multiplied by 7, from byte s − 2 down to byte 1 (byte 0 is left as it is, as
/// ChessBase does). Its own inverse.
fn code_moves(moves: &mut [u8]) {
    let s = moves.len() + 1;
    let mut k = (49 * s) as u8;
    for b in moves.iter_mut().skip(1).rev() {
        *b ^= k;
        k = k.wrapping_mul(7);
    }
}

/// A tag's value for writing: missing or "?" is empty.
fn tag<'g>(game: &'g Game, name: &str) -> &'g str {
    match game.tags.get(name).map(str::trim) {
        None | Some("?") => "",
        Some(v) => v,
    }
}

/// Code page 850, bytes 0x80..=0xFF (below them it is ASCII).
const CP850: [char; 128] = [
    'Ç', 'ü', 'é', 'â', 'ä', 'à', 'å', 'ç', 'ê', 'ë', 'è', 'ï', 'î', 'ì', 'Ä', 'Å', //
    'É', 'æ', 'Æ', 'ô', 'ö', 'ò', 'û', 'ù', 'ÿ', 'Ö', 'Ü', 'ø', '£', 'Ø', '×', 'ƒ', //
    'á', 'í', 'ó', 'ú', 'ñ', 'Ñ', 'ª', 'º', '¿', '®', '¬', '½', '¼', '¡', '«', '»', //
    '░', '▒', '▓', '│', '┤', 'Á', 'Â', 'À', '©', '╣', '║', '╗', '╝', '¢', '¥', '┐', //
    '└', '┴', '┬', '├', '─', '┼', 'ã', 'Ã', '╚', '╔', '╩', '╦', '╠', '═', '╬', '¤', //
    'ð', 'Ð', 'Ê', 'Ë', 'È', 'ı', 'Í', 'Î', 'Ï', '┘', '┌', '█', '▄', '¦', 'Ì', '▀', //
    'Ó', 'ß', 'Ô', 'Ò', 'õ', 'Õ', 'µ', 'þ', 'Þ', 'Ú', 'Û', 'Ù', 'ý', 'Ý', '¯', '´', //
    '\u{ad}', '±', '‗', '¾', '¶', '§', '÷', '¸', '°', '¨', '·', '¹', '³', '²', '■', '\u{a0}',
];

/// In names, the codes ChessBase shows as the pieces K, Q, N, B, R, P (code page 850's
/// "óúñÑªº"), and what they read as.
const NAME_PIECES: [(u8, char); 6] = [
    (0xa2, 'K'),
    (0xa3, 'Q'),
    (0xa4, 'N'),
    (0xa5, 'B'),
    (0xa6, 'R'),
    (0xa7, 'P'),
];

/// A character's code page 850 byte, if it has one.
fn cp850_byte(c: char) -> Option<u8> {
    if c.is_ascii() {
        return Some(c as u8);
    }
    // At most 127, so the sum is at most 255.
    CP850.iter().position(|x| *x == c).map(|i| 0x80 + i as u8)
}

fn cp850_char(b: u8) -> char {
    if b < 0x80 {
        char::from(b)
    } else {
        CP850[usize::from(b - 0x80)]
    }
}

/// A roster text (names, event, round) in code page 850, exactly, or why it cannot be.
fn roster_bytes(what: &str, text: &str) -> Result<Vec<u8>, CbfError> {
    text.chars()
        .map(|c| match cp850_byte(c) {
            Some(b) if NAME_PIECES.iter().any(|(p, _)| *p == b) => Err(CbfError(format!(
                "{what} {text:?} holds '{c}', which ChessBase shows as a chess piece"
            ))),
            Some(b) => Ok(b),
            None => Err(CbfError(format!(
                "{what} {text:?} holds '{c}', which ChessBase's code page (850) lacks"
            ))),
        })
        .collect()
}

/// A text and its name, refused when over the 63 bytes its size field holds.
fn fits(what: &str, bytes: Vec<u8>) -> Result<Vec<u8>, CbfError> {
    if bytes.len() > MAX_TEXT {
        Err(CbfError(format!(
            "the {what} text is {} bytes, over CBF's {MAX_TEXT}",
            bytes.len()
        )))
    } else {
        Ok(bytes)
    }
}

/// "White-Black", as ChessBase joins them; readers split at the first '-'.
fn player_text(game: &Game) -> Result<Vec<u8>, CbfError> {
    let (white, black) = (tag(game, "White"), tag(game, "Black"));
    if white.contains('-') {
        return Err(CbfError(format!(
            "White's name {white:?} holds a '-', where CBF readers split White from Black"
        )));
    }
    if white.is_empty() && black.is_empty() {
        return Ok(Vec::new());
    }
    let mut bytes = roster_bytes("White's name", white)?;
    bytes.push(b'-');
    bytes.extend(roster_bytes("Black's name", black)?);
    fits("player", bytes)
}

/// A round ChessBase's readers take out of the source text's brackets: digits, '.' and '/'.
fn is_round(round: &str) -> bool {
    round.starts_with(|c: char| c.is_ascii_digit())
        && round
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '/')
}

/// "Event (Round)", the round only when it is a number such as "3" or "1.4". The event is
/// the least of what a game is: a character the code page lacks is written '?', and an event
/// too long for the field is cut (the round kept).
fn source_text(game: &Game) -> Vec<u8> {
    let round = tag(game, "Round");
    let suffix = if is_round(round) && round.len() + 2 <= MAX_TEXT {
        format!("({round})")
    } else {
        String::new()
    };
    let mut bytes: Vec<u8> = tag(game, "Event")
        .chars()
        .map(|c| cp850_byte(c).unwrap_or(b'?'))
        .collect();
    if !suffix.is_empty() {
        bytes.truncate(MAX_TEXT - suffix.len() - 1);
        let cut = bytes.trim_ascii_end().len();
        bytes.truncate(cut);
        if !bytes.is_empty() {
            bytes.push(b' ');
        }
        bytes.extend(suffix.bytes());
    }
    bytes.truncate(MAX_TEXT);
    bytes
}

/// A comment's text as the comment area holds it (without the 0xFF and evaluations).
fn comment_bytes(text: &str) -> Vec<u8> {
    text.chars()
        .filter(|c| *c != '\r')
        .map(|c| match (c, cp850_byte(c)) {
            ('\n', _) => COMMENT_NEWLINE,
            (_, Some(b)) if b < COMMENT_NEWLINE && !PIECE_SYMBOLS.iter().any(|(s, _)| *s == b) => b,
            _ => b'?',
        })
        .collect()
}

fn year_byte(game: &Game) -> u8 {
    let date = tag(game, "Date");
    let year = date
        .get(..4)
        .filter(|y| y.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|y| y.parse::<i32>().ok());
    match year {
        // 1772..=2026 is −128..=126 as GY (127 means none); the cast keeps the two's
        // complement bits of the signed byte.
        Some(y) if (1772..=2026).contains(&y) => (y - 1900) as i8 as u8,
        _ => 127,
    }
}

fn elo_byte(game: &Game, name: &str) -> u8 {
    let Ok(elo) = tag(game, name).parse::<u32>() else {
        return 0;
    };
    let rounded = elo.saturating_add(2) / 5 * 5;
    if (1605..=2875).contains(&rounded) {
        // At most (2875 − 1600) / 5 = 255.
        ((rounded - 1600) / 5) as u8
    } else {
        0
    }
}

/// ECO1 of an `ECO` tag such as "B90": letter × 100 + number + 1 (§2.2); 0 when none.
fn eco1(game: &Game) -> u16 {
    let eco = tag(game, "ECO").as_bytes();
    match eco {
        [l @ b'A'..=b'E', d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', ..] => {
            u16::from(l - b'A') * 100 + u16::from(d1 - b'0') * 10 + u16::from(d2 - b'0') + 1
        }
        _ => 0,
    }
}

fn result_byte(r: GameResult) -> u8 {
    match r {
        GameResult::BlackWins => 0,
        GameResult::Draw => 1,
        GameResult::WhiteWins => 2,
        GameResult::Ongoing => 3,
    }
}

fn piece_code(p: Piece) -> u8 {
    let code = match p.role {
        Role::King => 1,
        Role::Queen => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::Rook => 5,
        Role::Pawn => 6,
    };
    match p.color {
        Color::White => code,
        Color::Black => code + 8,
    }
}

/// The start position's 33 bytes (§2.6).
fn encode_position(pos: &Chess) -> Result<[u8; POSITION_LEN], CbfError> {
    let mut out = [0u8; POSITION_LEN];
    for sq in Square::ALL {
        let i = usize::from(sq);
        if let Some(p) = pos.board().piece_at(sq) {
            let code = piece_code(p);
            out[i / 2] |= if i % 2 == 0 { code << 4 } else { code };
        }
    }
    out[32] = u8::try_from(pos.fullmoves().get() - 1)
        .map_err(|_| CbfError("the start position's move number is above 256".into()))?;
    Ok(out)
}

/// Reads the 33 bytes of a start position with the flags of header bytes 10 and 11.
fn decode_position(bytes: &[u8], flags1: u8, flags2: u8) -> Result<Chess, String> {
    let mut board = Board::empty();
    for sq in Square::ALL {
        let i = usize::from(sq);
        let b = bytes.get(i / 2).ok_or("the start position is cut short")?;
        let code = if i % 2 == 0 { b >> 4 } else { b & 15 };
        let color = if code & 8 == 0 {
            Color::White
        } else {
            Color::Black
        };
        let role = match code & 7 {
            0 if code == 0 => continue,
            1 => Role::King,
            2 => Role::Queen,
            3 => Role::Knight,
            4 => Role::Bishop,
            5 => Role::Rook,
            6 => Role::Pawn,
            _ => {
                return Err(format!(
                    "bad piece code {code} on {sq} in the start position"
                ));
            }
        };
        board.set_piece_at(sq, role.of(color));
    }
    let turn = if flags1 & 2 == 0 {
        Color::White
    } else {
        Color::Black
    };
    // Rights whose king and rook are not where the standard game has them are dropped.
    let mut castling_rights = Bitboard::EMPTY;
    for (bit, color, rook) in [
        (4, Color::White, Square::A1),
        (8, Color::White, Square::H1),
        (16, Color::Black, Square::A8),
        (32, Color::Black, Square::H8),
    ] {
        let king = Square::from_coords(File::E, rook.rank());
        if flags1 & bit != 0
            && board.piece_at(king) == Some(Role::King.of(color))
            && board.piece_at(rook) == Some(Role::Rook.of(color))
        {
            castling_rights.add(rook);
        }
    }
    let ep_file = flags2 & 15;
    let mut ep_square = match ep_file {
        0 => None,
        1..=8 => Some(Square::from_coords(
            File::new(u32::from(ep_file - 1)),
            turn.relative_rank(Rank::Sixth),
        )),
        _ => return Err(format!("bad en passant file {ep_file}")),
    };
    // An en passant square no double step can explain is dropped.
    if let Some(ep) = ep_square {
        let dir = if turn == Color::White { -1 } else { 1 };
        let pushed_to = step(ep, 0, dir);
        let pushed_from = step(ep, 0, -dir);
        let explained = board.piece_at(ep).is_none()
            && pushed_to.and_then(|s| board.piece_at(s)) == Some(Role::Pawn.of(!turn))
            && pushed_from.is_some_and(|s| board.piece_at(s).is_none());
        if !explained {
            ep_square = None;
        }
    }
    let number = bytes.get(32).ok_or("the start position is cut short")?;
    let setup = Setup {
        board,
        turn,
        castling_rights,
        ep_square,
        fullmoves: NonZeroU32::MIN.saturating_add(u32::from(*number)),
        ..Setup::empty()
    };
    Chess::from_setup(setup, CastlingMode::Standard)
        .map_err(|e| format!("the start position is not legal: {e}"))
}

/// The number of full moves a game of `plies` from a position with `turn` to move spans.
fn full_moves(turn: Color, plies: usize) -> usize {
    match (plies, turn) {
        (0, _) => 0,
        (n, Color::White) => n.div_ceil(2),
        (n, Color::Black) => n / 2 + 1,
    }
}

/// One game as a CBF record (header, player text, source text, moves, comments, optional
/// start position).
pub fn encode_game(game: &Game) -> Result<Vec<u8>, CbfError> {
    if game.castling_mode == CastlingMode::Chess960 {
        return Err(CbfError(
            "a Chess960 game cannot be written: CBF knows only the standard castling".into(),
        ));
    }
    let set_up = game.has_custom_start();

    let player = player_text(game)?;
    let source = source_text(game);

    let mut pos = game.start.clone();
    let mut ep = EpMemory::default();
    let mut moves = Vec::with_capacity(game.moves.len());
    // The area starts with one 0xFF; each comment ends with one.
    let mut comments = vec![COMMENT_START];
    for (i, m) in game.moves.iter().enumerate() {
        let ply = i + 1;
        if !pos.is_legal(m.mv) {
            return Err(CbfError(format!("ply {ply} ({}) is not legal", m.san)));
        }
        let number =
            number_of(&generator_moves(&pos, Rules::ChessBase, ep), m.mv).ok_or_else(|| {
                CbfError(format!(
                    "ply {ply} ({}) is not among the generator's moves",
                    m.san
                ))
            })?;
        let mut byte = u8::try_from(number)
            .ok()
            .filter(|n| *n <= 127)
            .ok_or_else(|| {
                CbfError(format!(
                    "ply {ply} ({}) is move number {number} of the generator; a CBF move byte holds at most 127",
                    m.san
                ))
            })?;
        if let Some(text) = m.comment.as_deref().filter(|t| !t.is_empty()) {
            byte |= COMMENTED;
            if byte == VARIANT_START {
                return Err(CbfError(format!(
                    "ply {ply} ({}) is move number 127 with a comment: its byte would be 0xFF, which starts a variation",
                    m.san
                )));
            }
            comments.extend_from_slice(&[0, 0, 0, 0]);
            comments.extend(comment_bytes(text));
            comments.push(COMMENT_START);
        }
        moves.push(byte);
        ep = ep.after(m.mv);
        pos.play_unchecked(m.mv);
    }
    if comments.len() == 1 {
        comments.clear();
    }

    let mlen = u16::try_from(moves.len() + 1)
        .map_err(|_| CbfError(format!("{} plies are too many for CBF", moves.len())))?;
    let clen = u16::try_from(comments.len()).map_err(|_| {
        CbfError(format!(
            "the comments take {} bytes, more than CBF's 65535",
            comments.len()
        ))
    })?;
    let full = full_moves(game.start.turn(), game.moves.len());
    let full = u8::try_from(full)
        .map_err(|_| CbfError(format!("{full} full moves are more than CBF's 255")))?;

    // Both at most 63 bytes (`fits`), so they fit the six bits.
    let (plen, slen) = (player.len() as u8, source.len() as u8);

    let mut h = [0u8; HEADER_LEN];
    h[0] = year_byte(game);
    h[1] = result_byte(game.result);
    h[2..4].copy_from_slice(&mlen.to_be_bytes());
    h[4] = plen;
    h[5] = slen;
    h[6..8].copy_from_slice(&clen.to_be_bytes());
    h[8] = elo_byte(game, "WhiteElo");
    h[9] = elo_byte(game, "BlackElo");
    let position = if set_up {
        let start = &game.start;
        let mut flags1 = 1;
        for (bit, color, side) in [
            (4, Color::White, CastlingSide::QueenSide),
            (8, Color::White, CastlingSide::KingSide),
            (16, Color::Black, CastlingSide::QueenSide),
            (32, Color::Black, CastlingSide::KingSide),
        ] {
            if start.castles().has(color, side) {
                flags1 |= bit;
            }
        }
        if start.turn() == Color::Black {
            flags1 |= 2;
        }
        h[10] = flags1;
        h[11] = start
            .ep_square(EnPassantMode::Always)
            .map_or(0, |sq| u8::from(sq.file()) + 1);
        Some(encode_position(start)?)
    } else {
        let eco = eco1(game);
        // ECO1 bits 0..4 in flags1 bits 1..5, bits 5/6 and 7/8 in the text sizes' top bits.
        h[10] = ((eco & 31) as u8) << 1;
        h[4] |= (((eco >> 5) & 3) as u8) << 6;
        h[5] |= (((eco >> 7) & 3) as u8) << 6;
        None
    };
    h[12] = full;
    h[13] = check_bytes(&h)[0];

    let mut text = [player, source].concat();
    code_text(&mut text);
    code_moves(&mut moves);

    let mut out =
        Vec::with_capacity(HEADER_LEN + text.len() + moves.len() + comments.len() + POSITION_LEN);
    out.extend_from_slice(&encode_header(h));
    out.extend_from_slice(&text);
    out.extend_from_slice(&moves);
    out.extend_from_slice(&comments);
    if let Some(p) = position {
        out.extend_from_slice(&p);
    }
    Ok(out)
}

/// Builds the CBI index for games written at the given byte offsets in the CBF file; `end`
/// is the CBF file's length. The words are 32 bits: a file near 4 GiB would wrap (CBF files
/// are far smaller; KnightStalker managed only about 4000 games a file).
pub fn index(offsets: &[u32], end: u32) -> Vec<u8> {
    let games = offsets.len() as u32;
    let mut out = Vec::with_capacity(4 * (offsets.len() + 2));
    out.extend_from_slice(&games.wrapping_add(1).to_be_bytes());
    for (i, offset) in (1u32..).zip(offsets) {
        out.extend_from_slice(&offset.wrapping_add(i + 1).to_be_bytes());
    }
    out.extend_from_slice(&end.wrapping_add(games).wrapping_add(2).to_be_bytes());
    out
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(
        bytes.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Reads the games of a CBF file, through its CBI index when given (the spec says games
/// should be reached through it), else one after another from the start (a record's length
/// follows from its header). Deleted games (flags1 bit 7) are skipped. Each item is a game or
/// an error naming the game number and the byte offset; a game that does not read is stepped
/// over, and iteration stops only where the next game cannot be found (a broken header read
/// without an index).
/// Games are numbered from 1 as they stand in the index or file, deleted ones counted.
pub fn games<'a>(
    cbf: &'a [u8],
    cbi: Option<&'a [u8]>,
) -> Result<impl Iterator<Item = Result<Game, CbfError>> + 'a, CbfError> {
    let offsets = match cbi {
        None => Offsets::Sequential { next: 0 },
        Some(cbi) => {
            let first = be_u32(cbi, 0)
                .ok_or_else(|| CbfError("the CBI index is shorter than its first word".into()))?;
            let count = first.checked_sub(1).ok_or_else(|| {
                CbfError("the CBI index's first word is 0 (it holds the games + 1)".into())
            })? as usize;
            // The count, one word a game and the end.
            let needed = count
                .checked_add(2)
                .and_then(|w| w.checked_mul(4))
                .filter(|n| *n <= cbi.len())
                .is_some();
            if !needed {
                return Err(CbfError(format!(
                    "the CBI index has {} bytes, too few for its {count} games",
                    cbi.len()
                )));
            }
            Offsets::Index { cbi, count }
        }
    };
    Ok(Games {
        cbf,
        offsets,
        n: 0,
        done: false,
    })
}

/// Where the next game is.
#[derive(Debug)]
enum Offsets<'a> {
    Index { cbi: &'a [u8], count: usize },
    Sequential { next: usize },
}

/// The games of a CBF file (see [`games`]).
#[derive(Debug)]
struct Games<'a> {
    cbf: &'a [u8],
    offsets: Offsets<'a>,
    /// Games numbered so far (deleted ones too).
    n: usize,
    done: bool,
}

impl Iterator for Games<'_> {
    type Item = Result<Game, CbfError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let n = self.n + 1;
            let at = match &self.offsets {
                Offsets::Index { cbi, count } => {
                    if n > *count {
                        self.done = true;
                        return None;
                    }
                    // In bounds: `games` checked the index holds `count` + 2 words.
                    let entry = be_u32(cbi, 4 * n).map(|e| e.checked_sub(n as u32 + 1));
                    match entry {
                        Some(Some(at)) => at as usize,
                        _ => {
                            self.done = true;
                            return Some(Err(CbfError(format!(
                                "game {n} (CBI byte {}): its index entry is below {}",
                                4 * n,
                                n + 1
                            ))));
                        }
                    }
                }
                Offsets::Sequential { next } => {
                    if *next >= self.cbf.len() {
                        self.done = true;
                        return None;
                    }
                    *next
                }
            };
            self.n = n;
            // A record whose length is known is stepped over even when it does not read, so
            // the games after it still come; without its length (a broken header) the file
            // cannot be followed further unless the index says where the next game is.
            let header = record_header(self.cbf, at);
            match &mut self.offsets {
                Offsets::Sequential { next } => match &header {
                    Ok((_, len)) => *next = at + len,
                    Err(_) => self.done = true,
                },
                Offsets::Index { .. } => {}
            }
            match header.and_then(|(h, len)| read_record(&self.cbf[at..at + len], &h)) {
                Ok(Some(game)) => return Some(Ok(game)),
                Ok(None) => {}
                Err(e) => {
                    return Some(Err(CbfError(format!("game {n} (from byte {at}): {e}"))));
                }
            }
        }
        None
    }
}

/// The plain header of the record at `at` and the record's length, if the file holds that
/// much.
fn record_header(cbf: &[u8], at: usize) -> Result<([u8; HEADER_LEN], usize), String> {
    if at >= cbf.len() {
        return Err(format!(
            "the offset is beyond the CBF file ({} bytes)",
            cbf.len()
        ));
    }
    let coded: [u8; HEADER_LEN] = cbf
        .get(at..at + HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or("the header is cut short")?;
    let h = decode_header(coded);
    let mlen = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if mlen == 0 {
        return Err("bad length: the move count (mlen) is 0, it is the moves + 1".into());
    }
    let set_up = h[10] & 1 != 0;
    let len = HEADER_LEN
        + usize::from(h[4] & 63)
        + usize::from(h[5] & 63)
        + (mlen - 1)
        + usize::from(u16::from_be_bytes([h[6], h[7]]))
        + if set_up { POSITION_LEN } else { 0 };
    if at + len > cbf.len() {
        return Err(format!(
            "bad length: the record's {len} bytes go beyond the end of the file ({} bytes)",
            cbf.len()
        ));
    }
    Ok((h, len))
}

/// The game of a `record` whose plain header is `h` ([`record_header`] measured the record),
/// unless it is marked deleted.
fn read_record(record: &[u8], h: &[u8; HEADER_LEN]) -> Result<Option<Game>, String> {
    let plen = usize::from(h[4] & 63);
    let slen = usize::from(h[5] & 63);
    let mlen = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let clen = usize::from(u16::from_be_bytes([h[6], h[7]]));
    let set_up = h[10] & 1 != 0;
    if h[10] & 0x80 != 0 {
        return Ok(None);
    }
    let mut rest = &record[HEADER_LEN..];
    // The parts add up to the record's length, so no split is out of bounds.
    let mut take = |n: usize| {
        let (part, tail) = rest.split_at(n);
        rest = tail;
        part
    };
    let mut text = take(plen + slen).to_vec();
    code_text(&mut text);
    let mut moves = take(mlen - 1).to_vec();
    code_moves(&mut moves);
    let comment_area = take(clen);
    let start = if set_up {
        decode_position(take(POSITION_LEN), h[10], h[11])?
    } else {
        Chess::default()
    };
    let (player, source) = text.split_at(plen);
    // The rules byte 13 points to first; the other if the record does not read by them.
    let first = if check_bytes(h).contains(&h[13]) {
        Rules::ChessBase
    } else {
        Rules::RelayFirst
    };
    let other = match first {
        Rules::ChessBase => Rules::RelayFirst,
        Rules::RelayFirst => Rules::ChessBase,
    };
    let game = decode_game(
        first,
        h,
        player,
        source,
        &moves,
        comment_area,
        start.clone(),
    )
    .or_else(|e| {
        decode_game(other, h, player, source, &moves, comment_area, start).map_err(|_| e)
    })?;
    Ok(Some(game))
}

fn latin1_text(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(*b)).collect()
}

/// The players, event, site and round a record's texts give, by `rules`.
fn roster(rules: Rules, player: &[u8], source: &[u8]) -> [String; 5] {
    match rules {
        Rules::RelayFirst => {
            let player = latin1_text(player);
            let (white, black) = match player.split_once(" - ") {
                Some(pair) => pair,
                None => player.split_once('-').unwrap_or((player.as_str(), "")),
            };
            let source = latin1_text(source);
            let mut parts = source.splitn(3, '|');
            let (event, site, round) = (parts.next(), parts.next(), parts.next());
            [
                white.into(),
                black.into(),
                event.unwrap_or("").into(),
                site.unwrap_or("").into(),
                round.unwrap_or("").into(),
            ]
        }
        Rules::ChessBase => {
            let name = |bytes: &[u8]| -> String {
                bytes
                    .iter()
                    .map(|b| match NAME_PIECES.iter().find(|(p, _)| p == b) {
                        Some((_, piece)) => *piece,
                        None => cp850_char(*b),
                    })
                    .collect()
            };
            let (white, black) = match player.iter().position(|b| *b == b'-') {
                Some(i) => (name(&player[..i]), name(&player[i + 1..])),
                None => (name(player), String::new()),
            };
            let source: String = source.iter().map(|b| cp850_char(*b)).collect();
            let source = source.trim();
            let (event, round) = match source
                .strip_suffix(')')
                .and_then(|s| s.rsplit_once('('))
                .filter(|(_, r)| is_round(r.trim()))
            {
                Some((event, round)) => (event.trim_end(), round.trim()),
                None => (source, ""),
            };
            [white, black, event.into(), String::new(), round.into()]
        }
    }
}

/// A text for a tag: empty reads as "?".
fn or_unknown(s: &str) -> String {
    let s = s.trim();
    if s.is_empty() { "?".into() } else { s.into() }
}

fn decode_game(
    rules: Rules,
    h: &[u8; HEADER_LEN],
    player: &[u8],
    source: &[u8],
    moves: &[u8],
    comment_area: &[u8],
    start: Chess,
) -> Result<Game, String> {
    let [white, black, event, site, round] = roster(rules, player, source);
    let result = match h[1] & 3 {
        0 => GameResult::BlackWins,
        1 => GameResult::Draw,
        2 => GameResult::WhiteWins,
        _ => GameResult::Ongoing,
    };
    let date = match h[0] as i8 {
        127 => "????.??.??".to_string(),
        gy => format!("{:04}.??.??", 1900 + i32::from(gy)),
    };

    let mut tags = Tags::default();
    tags.set("Event", or_unknown(&event));
    tags.set("Site", or_unknown(&site));
    tags.set("Date", date);
    tags.set("Round", or_unknown(&round));
    tags.set("White", or_unknown(&white));
    tags.set("Black", or_unknown(&black));
    tags.set("Result", result.to_string());
    for (name, k) in [("WhiteElo", h[8]), ("BlackElo", h[9])] {
        if k > 0 {
            tags.set(name, (1600 + 5 * u32::from(k)).to_string());
        }
    }
    if h[10] & 1 == 0 {
        let eco = u16::from((h[10] >> 1) & 31)
            | (u16::from(h[4] >> 6) << 5)
            | (u16::from(h[5] >> 6) << 7);
        if (1..=500).contains(&eco) {
            let letter = char::from(b'A' + ((eco - 1) / 100) as u8);
            tags.set("ECO", format!("{letter}{:02}", (eco - 1) % 100));
        }
    }

    // The main line's moves; `commented[k]` is the ply of the k-th commented move of the
    // whole list (None for one inside a variation, whose comment is skipped).
    let mut pos = start.clone();
    let mut ep = EpMemory::default();
    let mut recorded = Vec::new();
    let mut commented: Vec<Option<usize>> = Vec::new();
    let mut depth = 0usize;
    for (i, &b) in moves.iter().enumerate() {
        match b {
            VARIANT_START => depth += 1,
            VARIANT_END => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    format!("unbalanced variants: move byte {i} ends a variation none began")
                })?;
            }
            _ if depth > 0 => {
                if b & COMMENTED != 0 {
                    commented.push(None);
                }
            }
            _ => {
                let ply = recorded.len() + 1;
                let number = usize::from(b & !COMMENTED);
                let list = generator_moves(&pos, rules, ep);
                let slot = number
                    .checked_sub(1)
                    .and_then(|i| list.get(i))
                    .copied()
                    .ok_or_else(|| {
                        format!(
                            "move byte {i} (ply {ply}): move number {number} is not in the generator's list of {}",
                            list.len()
                        )
                    })?;
                let mv = slot.ok_or_else(|| {
                    format!(
                        "move byte {i} (ply {ply}): move number {number} is one ChessBase counts for no move"
                    )
                })?;
                if !pos.is_legal(mv) {
                    return Err(format!(
                        "move byte {i} (ply {ply}): move number {number} ({}) is not legal",
                        mv.to_uci(CastlingMode::Standard)
                    ));
                }
                if b & COMMENTED != 0 {
                    commented.push(Some(recorded.len()));
                }
                ep = ep.after(mv);
                recorded.push(RecordedMove {
                    mv,
                    san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                    clk: None,
                    emt: None,
                    comment: None,
                });
            }
        }
    }
    if depth > 0 {
        return Err(format!(
            "unbalanced variants: {depth} not ended at the end of the moves"
        ));
    }
    // Before the first 0xFF there is nothing (§2.5: the first comment begins with one).
    for (target, piece) in commented
        .into_iter()
        .zip(comment_area.split(|b| *b == COMMENT_START).skip(1))
    {
        let text = comment_text(rules, piece);
        if let Some(m) = target.and_then(|ply| recorded.get_mut(ply))
            && !text.is_empty()
        {
            m.comment = Some(text);
        }
    }

    Ok(Game {
        tags,
        start,
        castling_mode: CastlingMode::Standard,
        moves: recorded,
        result,
        intro: None,
    })
}

/// A comment's text from its piece of the comment area (after its 0xFF).
fn comment_text(rules: Rules, piece: &[u8]) -> String {
    let body = match piece {
        [a, b, c, 0, rest @ ..] if [a, b, c].iter().all(|x| **x < 0x20) => rest,
        _ => {
            let skip = piece.iter().take_while(|b| **b < 0x20).count();
            &piece[skip..]
        }
    };
    let mut text = String::with_capacity(body.len());
    for &b in body {
        if b == COMMENT_NEWLINE {
            text.push('\n');
        } else if let Some((_, s)) = PIECE_SYMBOLS.iter().find(|(sym, _)| *sym == b) {
            text.push_str(s);
        } else if rules == Rules::ChessBase {
            text.push(cp850_char(b));
        } else {
            text.push(char::from(b));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::san::San;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("position")
    }

    fn game_of(start: Chess, sans: &[&str], tags: &[(&str, &str)], result: GameResult) -> Game {
        let mut pos = start.clone();
        let moves = sans
            .iter()
            .map(|s| {
                let mv = s.parse::<San>().expect("san").to_move(&pos).expect("legal");
                RecordedMove {
                    mv,
                    san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                    clk: None,
                    emt: None,
                    comment: None,
                }
            })
            .collect();
        Game {
            tags: Tags(
                tags.iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect(),
            ),
            start,
            moves,
            result,
            ..Game::default()
        }
    }

    /// The CBF file and CBI index of some games.
    fn file_of(games: &[Game]) -> (Vec<u8>, Vec<u8>) {
        let mut cbf = Vec::new();
        let mut offsets = Vec::new();
        for g in games {
            offsets.push(cbf.len() as u32);
            cbf.extend(encode_game(g).expect("encode"));
        }
        let cbi = index(&offsets, cbf.len() as u32);
        (cbf, cbi)
    }

    fn read_all(cbf: &[u8], cbi: Option<&[u8]>) -> Vec<Game> {
        games(cbf, cbi)
            .expect("index")
            .collect::<Result<Vec<_>, _>>()
            .expect("read")
    }

    /// The project's one small generator, with the two draws these tests make.
    struct Rng(boards::rng::SplitMix64);

    impl Rng {
        fn new(seed: u64) -> Rng {
            Rng(boards::rng::SplitMix64(seed))
        }

        fn next(&mut self) -> u64 {
            self.0.next_u64()
        }

        fn below(&mut self, n: usize) -> usize {
            self.0.below(n as u64) as usize
        }
    }

    #[test]
    fn the_specs_index_example() {
        // Three games of 48, 39 and 35 bytes: at 0, 48 and 87, the file 122 bytes long.
        let cbi = index(&[0, 48, 87], 122);
        let words: Vec<u32> = cbi
            .chunks(4)
            .map(|w| u32::from_be_bytes(w.try_into().expect("four bytes")))
            .collect();
        assert_eq!(words, [4, 2, 51, 91, 127]);
    }

    #[test]
    fn the_specs_start_position_example() {
        let pos = position("kqrbn3/p7/8/8/8/8/P7/KQRBN3 w - - 0 55");
        let bytes = encode_position(&pos).expect("encode");
        let expected: [u8; 32] = [
            0x12, 0x54, 0x30, 0x00, 0x60, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0xE0, 0x00, 0x00, 0x00, 0x9A, 0xDC, 0xB0, 0x00,
        ];
        assert_eq!(bytes[..32], expected);
        assert_eq!(bytes[32], 54);
        let back = decode_position(&bytes, 1, 0).expect("decode");
        assert_eq!(back, pos);
        assert_eq!(back.fullmoves().get(), 55);
    }

    #[test]
    fn the_codings_undo_themselves() {
        let plain: [u8; 14] = [85, 2, 0, 4, 19, 6, 0, 0, 220, 0, 0, 0, 2, 0];
        let coded = encode_header(plain);
        assert_ne!(coded, plain);
        assert_eq!(decode_header(coded), plain);
        // Byte 11 depends on the plain sizes: a differing byte 11 shows through.
        let mut other = plain;
        other[11] = 5;
        assert_eq!(decode_header(encode_header(other)), other);

        let mut text = b"Kasparov,G-Karpov,AMoscow".to_vec();
        code_text(&mut text);
        assert_ne!(&text, b"Kasparov,G-Karpov,AMoscow");
        code_text(&mut text);
        assert_eq!(&text, b"Kasparov,G-Karpov,AMoscow");

        let plain_moves: Vec<u8> = (1..=100).collect();
        let mut moves = plain_moves.clone();
        code_moves(&mut moves);
        assert_eq!(moves[0], 1, "the first move is not coded");
        assert_ne!(moves, plain_moves);
        code_moves(&mut moves);
        assert_eq!(moves, plain_moves);
        // One move or none: nothing to code.
        let mut one = vec![7];
        code_moves(&mut one);
        assert_eq!(one, [7]);
        code_moves(&mut []);
    }

    #[test]
    fn a_record_built_by_hand() {
        // 1. e4 e5 2. Nf3, Kasparov,G against Karpov,A, Moscow 1985, 1-0.
        //
        // The generator numbers, from §2.4's order (squares a1..a8, b1..b8, …):
        // 1. e4 from the initial position: Ra1 has none (b1 and a2 are White's); Pa2: a4 (1),
        //    a3 (2); Nb1: its jumps in order (−2,±1) and (+2,−1) leave the board, (+2,+1) is
        //    d2 (own pawn), (−1,−2) leaves, (−1,+2) a3 (3), (+1,−2) leaves, (+1,+2) c3 (4);
        //    Pb2: b4 (5), b3 (6); Bc1 is shut in; Pc2: c4 (7), c3 (8); Qd1 shut in; Pd2: d4
        //    (9), d3 (10); Ke1 shut in, no castling (squares between taken); Pe2: e4 (11).
        // 1... e5: Black's pieces, again a-file first, rank 1 up: Pa7: a5 (1), a6 (2); Ra8
        //    none; Pb7: b5 (3), b6 (4); Nb8: (−2,±1) leave, (+2,−1) d7 own, (+2,+1) leaves,
        //    (−1,−2) a6 (5), (−1,+2) leaves, (+1,−2) c6 (6); Pc7: c5 (7), c6 (8); Bc8 shut
        //    in; Pd7: d5 (9), d6 (10); Qd8 shut in; Pe7: e5 (11).
        // 2. Nf3: Ra1 none; Pa2 2 moves (1, 2); Nb1 2 (3, 4); Pb2 2 (5, 6); Bc1 none; Pc2 2
        //    (7, 8); Qd1: bishop runs left-down and right-down leave the board, right-up goes
        //    e2, f3, g4, h5 (9..12), left-up meets c2; the rook runs meet c1, the edge, e1,
        //    d2; Pd2 2 (13, 14); Ke1: the steps in order reach only e2 (15), no castling;
        //    Pe4 (after e1, e2, e3): blocked by e5, nothing to take, no e.p.; Bf1: left-down
        //    and right-down leave, right-up meets g2, left-up e2, d3, c4, b5, a6 (16..20);
        //    Pf2 2 (21, 22); Ng1: (−2,−1) leaves, (−2,+1) e2 (23), (+2,±1) leave, (−1,−2)
        //    leaves, (−1,+2) f3 (24).
        let moves_plain: [u8; 3] = [11, 11, 24];

        // Header, plain (§2.1):
        let header_plain: [u8; 14] = [
            85, // 0: GY, 1985 − 1900
            2,  // 1: result 1-0
            0,  // 2: mlen high byte
            4,  // 3: mlen low byte: three moves + 1
            19, // 4: plen, "Kasparov,G-Karpov,A" (no ECO bits)
            6,  // 5: slen, "Moscow"
            0,  // 6: clen high byte
            0,  // 7: clen low byte: no comments
            0,  // 8: White's Elo: none
            0,  // 9: Black's Elo: none
            0,  // 10: flags1: usual start, no ECO
            0,  // 11: flags2: no ECO2
            2,  // 12: two full moves
            79, // 13: check byte, 85·0x25 + 6 + 0 = 3151 ≡ 79 (mod 256)
        ];
        // Coding: byte 11 first gets 14 + 19 + 6 = 39, then byte 13 down to 0 the keys 101,
        // 101·3 = 303 ≡ 47, 141, 423 ≡ 167, 501 ≡ 245, 735 ≡ 223, 669 ≡ 157, 471 ≡ 215,
        // 645 ≡ 133, 399 ≡ 143, 429 ≡ 173, 519 ≡ 7, 21, 63 (mod 256).
        let header_keys: [u8; 14] = [
            63, 21, 7, 173, 143, 133, 215, 157, 223, 245, 167, 141, 47, 101,
        ];
        let mut header = header_plain;
        header[11] ^= 39;
        for (b, k) in header.iter_mut().zip(header_keys) {
            *b ^= k;
        }

        // Texts (§2.3): 25 bytes, the key 3·25 = 75 on the last, then times 3 (mod 256)
        // towards the first.
        let text_plain = b"Kasparov,G-Karpov,AMoscow";
        let text_keys: [u8; 25] = [
            235, 249, 83, 113, 123, 41, 99, 33, 11, 89, 115, 209, 155, 137, 131, 129, 43, 185, 147,
            49, 187, 233, 163, 225, 75,
        ];
        let text: Vec<u8> = text_plain
            .iter()
            .zip(text_keys)
            .map(|(b, k)| b ^ k)
            .collect();

        // Moves (§2.4): s = mlen = 4; byte 2 gets 49·4 = 196, byte 1 gets 196·7 = 1372 ≡
        // 92, byte 0 stays.
        let moves = [moves_plain[0], moves_plain[1] ^ 92, moves_plain[2] ^ 196];

        let expected: Vec<u8> = [&header[..], &text, &moves].concat();
        assert_eq!(expected.len(), 42);

        let game = game_of(
            Chess::default(),
            &["e4", "e5", "Nf3"],
            &[
                ("Event", "Moscow"),
                ("Site", "?"),
                ("Date", "1985.??.??"),
                ("Round", "?"),
                ("White", "Kasparov,G"),
                ("Black", "Karpov,A"),
                ("Result", "1-0"),
            ],
            GameResult::WhiteWins,
        );
        assert_eq!(encode_game(&game).expect("encode"), expected);

        let read = read_all(&expected, None);
        assert_eq!(read.len(), 1);
        let g = &read[0];
        assert_eq!(g.tags, game.tags);
        assert_eq!(g.result, GameResult::WhiteWins);
        assert_eq!(
            g.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
            game.moves.iter().map(|m| m.mv).collect::<Vec<_>>()
        );
        assert_eq!(g.moves[2].san.to_string(), "Nf3");
        let cbi = index(&[0], 42);
        assert_eq!(read_all(&expected, Some(&cbi)).len(), 1);
    }

    #[test]
    fn the_generator_numbers_every_legal_move_once() {
        let start = Chess::default();
        let list = generator_moves(&start, Rules::ChessBase, EpMemory::default());
        assert_eq!(list.len(), 20);
        for m in start.legal_moves() {
            assert_eq!(list.iter().filter(|g| **g == Some(m)).count(), 1, "{m:?}");
        }
        let mut rng = Rng::new(7);
        for rules in [Rules::ChessBase, Rules::RelayFirst] {
            for _ in 0..20 {
                let mut pos = Chess::default();
                let mut ep = EpMemory::default();
                for _ in 0..200 {
                    let legal = pos.legal_moves();
                    let list = generator_moves(&pos, rules, ep);
                    for m in &legal {
                        assert_eq!(list.iter().filter(|g| **g == Some(*m)).count(), 1, "{m:?}");
                    }
                    // And nothing twice.
                    for (i, g) in list.iter().enumerate() {
                        assert!(g.is_none() || !list[i + 1..].contains(g), "{g:?} twice");
                    }
                    if legal.is_empty() {
                        break;
                    }
                    let mv = legal[rng.below(legal.len())];
                    ep = ep.after(mv);
                    pos.play_unchecked(mv);
                }
            }
        }
    }

    #[test]
    fn the_generator_is_pseudo_legal_and_ends_with_en_passant() {
        // The rook on f8 guards f1: O-O is not legal, yet ChessBase numbers it (short
        // before long); e5xd6 e.p. comes after the pawn's step.
        let pos = position("5rk1/8/8/3pP3/8/8/8/R3K2R w KQ d6 0 1");
        let ep = EpMemory {
            file: Some(File::D),
            carried: false,
        };
        let list: Vec<Move> = generator_moves(&pos, Rules::ChessBase, ep)
            .into_iter()
            .map(|m| m.expect("no number without a move here"))
            .collect();
        let castles: Vec<_> = list.iter().filter(|m| m.is_castle()).collect();
        assert_eq!(
            castles,
            [
                &Move::Castle {
                    king: Square::E1,
                    rook: Square::H1
                },
                &Move::Castle {
                    king: Square::E1,
                    rook: Square::A1
                }
            ]
        );
        assert!(!pos.is_legal(*castles[0]));
        assert!(pos.is_legal(*castles[1]));
        let e5: Vec<_> = list
            .iter()
            .filter(|m| m.from() == Some(Square::E5))
            .collect();
        assert_eq!(e5.len(), 2, "{e5:?}");
        assert_eq!(e5[0].to(), Square::E6);
        assert_eq!(
            e5[1],
            &Move::EnPassant {
                from: Square::E5,
                to: Square::D6
            }
        );
        // The king's steps come first in its list, then the castlings, straight after.
        let king: Vec<_> = list
            .iter()
            .filter(|m| m.from() == Some(Square::E1))
            .map(|m| m.to())
            .collect();
        assert_eq!(
            king,
            [
                Square::D1,
                Square::D2,
                Square::E2,
                Square::F1,
                Square::F2,
                Square::H1,
                Square::A1
            ]
        );
    }

    /// The numbers of `list` that hold no move.
    fn empty_numbers(list: &[Option<Move>]) -> Vec<usize> {
        (1..=list.len()).filter(|n| list[n - 1].is_none()).collect()
    }

    #[test]
    fn the_a_file_pawn_counts_a_number_for_no_move() {
        // White: Ka1, Pa5; Black: Kh8, Ph7. White's list: Ka1's steps (a2, b1, b2), the a5
        // pawn's step (a6), then ChessBase's number for no move (5).
        let pos = position("7k/7p/8/P7/8/8/8/K7 w - - 0 1");
        let list = generator_moves(&pos, Rules::ChessBase, EpMemory::default());
        assert_eq!(list.len(), 5);
        assert_eq!(empty_numbers(&list), [5]);
        // Not after a double step, and never in relay's first rules.
        let after_double = EpMemory {
            file: Some(File::H),
            carried: false,
        };
        assert!(empty_numbers(&generator_moves(&pos, Rules::ChessBase, after_double)).is_empty());
        assert_eq!(
            generator_moves(&pos, Rules::RelayFirst, EpMemory::default()).len(),
            4
        );
        // Black's pawn on a4 likewise; a game through it numbers Black's h-pawn one higher
        // than relay's first writer did, and reads back.
        let start = position("7k/7p/8/8/p7/8/8/K7 b - - 0 1");
        let game = game_of(start, &["h6", "Kb1", "h5"], &[], GameResult::Ongoing);
        let cbf = encode_game(&game).expect("encode");
        let g = &read_all(&cbf, None)[0];
        assert_eq!(
            g.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
            game.moves.iter().map(|m| m.mv).collect::<Vec<_>>()
        );
        let pos = position("7k/7p/8/8/p7/8/8/K7 b - - 0 1");
        let h6 = "h6"
            .parse::<San>()
            .expect("san")
            .to_move(&pos)
            .expect("legal");
        let cb = generator_moves(&pos, Rules::ChessBase, EpMemory::default());
        let first = generator_moves(&pos, Rules::RelayFirst, EpMemory::default());
        assert_eq!(number_of(&cb, h6), number_of(&first, h6).map(|n| n + 1));
    }

    #[test]
    fn castling_is_numbered_without_the_right() {
        // King and rooks at home, no castling rights: ChessBase still numbers both castlings.
        let pos = position("4k3/8/8/8/8/8/8/R3K2R w - - 0 1");
        let castles = |rules| {
            generator_moves(&pos, rules, EpMemory::default())
                .into_iter()
                .flatten()
                .filter(|m| m.is_castle())
                .count()
        };
        assert_eq!(castles(Rules::ChessBase), 2);
        assert_eq!(castles(Rules::RelayFirst), 0);
        // A game whose king went out and back writes and reads back.
        let game = game_of(
            Chess::default(),
            &[
                "e4", "e5", "Ke2", "Ke7", "Ke1", "Ke8", "Nf3", "Nf6", "Be2", "Be7", "Nc3",
            ],
            &[],
            GameResult::Ongoing,
        );
        let g = &read_all(&encode_game(&game).expect("encode"), None)[0];
        assert_eq!(g.moves.len(), 11);
        assert_eq!(g.moves[10].san.to_string(), "Nc3");
    }

    /// From `fen`, 1. d4 O-O then `third`: the generator's list before the third move, its
    /// number there, and the game as CBF reads it back.
    fn after_d4_castling(fen: &str, third: &str) -> (Vec<Option<Move>>, usize, Game) {
        let start = position(fen);
        let game = game_of(
            start.clone(),
            &["d4", "O-O", third],
            &[],
            GameResult::Ongoing,
        );
        let mut pos = start;
        let mut ep = EpMemory::default();
        for m in &game.moves[..2] {
            ep = ep.after(m.mv);
            pos.play_unchecked(m.mv);
        }
        assert_eq!(
            ep,
            EpMemory {
                file: Some(File::D),
                carried: true
            }
        );
        let list = generator_moves(&pos, Rules::ChessBase, ep);
        let number = number_of(&list, game.moves[2].mv).expect("the third move");
        let back = read_all(&encode_game(&game).expect("encode"), None).remove(0);
        assert_eq!(back.moves[2].san.to_string(), third);
        (list, number, back)
    }

    #[test]
    fn the_en_passant_carried_over_a_castling_counts_a_number_for_no_move() {
        // 1. d4 O-O: ChessBase keeps White's e.p. file d, so the e5 pawn counts a number for
        // "exd6 e.p." (d6 empty) after its own step to e6.
        let (list, e6, _) = after_d4_castling("4k2r/8/8/3pP3/8/8/3P4/4K3 w k - 0 1", "e6");
        assert_eq!(empty_numbers(&list), [e6 + 1]);
        // A black knight on d6: the ordinary capture exd6, then the carried e.p. counts again
        // (Scidb found on random games: 8,000 of them read alike after this).
        let (list, takes, _) = after_d4_castling("4k2r/8/3n4/3pP3/8/8/3P4/4K3 w k - 0 1", "exd6");
        assert_eq!(empty_numbers(&list), [takes + 1]);
    }

    #[test]
    fn random_games_round_trip() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut games_in = Vec::new();
        let mut refused = 0;
        for n in 0..200 {
            let mut pos = Chess::default();
            let mut moves = Vec::new();
            for ply in 0..rng.below(201) {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[rng.below(legal.len())];
                let comment = match rng.below(8) {
                    0 => Some(format!("note {ply}\nsecond line")),
                    1 => Some(format!("ply {ply}")),
                    _ => None,
                };
                moves.push(RecordedMove {
                    mv,
                    san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                    clk: None,
                    emt: None,
                    comment,
                });
            }
            let year = 1772 + (n * 37) % 255;
            let result = [
                GameResult::WhiteWins,
                GameResult::BlackWins,
                GameResult::Draw,
                GameResult::Ongoing,
            ][rng.below(4)];
            let black = if n % 3 == 0 {
                format!("Smith-Jones {n}")
            } else {
                format!("Black {n}")
            };
            let game = Game {
                tags: Tags(vec![
                    ("Event".into(), format!("Event {n}")),
                    ("Date".into(), format!("{year}.05.01")),
                    ("White".into(), format!("White,{n}")),
                    ("Black".into(), black),
                    ("WhiteElo".into(), "2712".into()),
                    ("Result".into(), result.to_string()),
                ]),
                moves,
                result,
                ..Game::default()
            };
            match encode_game(&game) {
                Ok(_) => games_in.push(game),
                // Many promoted queens can give more than 127 moves.
                Err(e) => {
                    assert!(e.0.contains("127"), "{e}");
                    refused += 1;
                }
            }
        }
        assert!(refused < 10, "{refused} refused");
        let (cbf, cbi) = file_of(&games_in);
        for cbi in [Some(cbi.as_slice()), None] {
            let read = read_all(&cbf, cbi);
            assert_eq!(read.len(), games_in.len());
            for (a, b) in games_in.iter().zip(&read) {
                assert_eq!(a.result, b.result);
                // Elo to the nearest multiple of 5.
                assert_eq!(b.tags.get("WhiteElo"), Some("2710"));
                for name in ["White", "Black", "Event", "Result"] {
                    assert_eq!(a.tags.get(name), b.tags.get(name), "{name}");
                }
                let year = &a.tags.get("Date").expect("date")[..4];
                assert_eq!(b.tags.get("Date"), Some(format!("{year}.??.??").as_str()));
                assert_eq!(b.tags.get("Site"), Some("?"));
                assert_eq!(a.moves.len(), b.moves.len());
                for (x, y) in a.moves.iter().zip(&b.moves) {
                    assert_eq!((x.mv, &x.san, &x.comment), (y.mv, &y.san, &y.comment));
                }
            }
        }
    }

    #[test]
    fn set_up_starts_round_trip() {
        // White to move with an e.p. square no pawn can use; Black may still castle short,
        // White long; then Black to move from move 40.
        for fen in [
            "r3k2r/ppp2ppp/2n2n2/2qpp3/4P3/2N2N2/PPPPQPPP/R3K2R w Qk d6 0 12",
            "4k2r/8/8/8/4Pp2/8/8/R3K3 b Qk e3 0 40",
        ] {
            let start = position(fen);
            let mut pos = start.clone();
            let mut sans = Vec::new();
            let mut rng = Rng::new(3);
            for _ in 0..12 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[rng.below(legal.len())];
                sans.push(San::from_move(&pos, mv).to_string());
                pos.play_unchecked(mv);
            }
            let sans: Vec<&str> = sans.iter().map(String::as_str).collect();
            let mut game = game_of(start.clone(), &sans, &[("ECO", "B90")], GameResult::Draw);
            game.moves[0].comment = Some("from here".into());
            let (cbf, cbi) = file_of(std::slice::from_ref(&game));
            let read = read_all(&cbf, Some(&cbi));
            let g = &read[0];
            assert_eq!(g.start, start, "{fen}");
            assert_eq!(
                g.start.ep_square(EnPassantMode::Always),
                start.ep_square(EnPassantMode::Always)
            );
            assert_eq!(g.start.fullmoves(), start.fullmoves());
            assert_eq!(g.moves.len(), game.moves.len());
            for (x, y) in game.moves.iter().zip(&g.moves) {
                assert_eq!((x.mv, &x.comment), (y.mv, &y.comment));
            }
            // No ECO with a set-up start (its bits hold the set-up flags).
            assert_eq!(g.tags.get("ECO"), None);
        }
    }

    #[test]
    fn eco_elo_and_texts() {
        let game = game_of(
            Chess::default(),
            &["d4"],
            &[
                ("Event", "Ch URS"),
                ("Site", "Moscow"),
                ("Round", "3.1"),
                ("White", "Müller"),
                ("Black", "Smith-Jones"),
                ("ECO", "E99"),
                ("WhiteElo", "2878"),
                ("BlackElo", "1603"),
            ],
            GameResult::Ongoing,
        );
        let cbf = encode_game(&game).expect("encode");
        // The texts as ChessBase has them: code page 850 (ü is 0x81), "Event (Round)".
        let h = decode_header(cbf[..14].try_into().expect("14"));
        let mut text = cbf[14..14 + usize::from(h[4] & 63) + usize::from(h[5] & 63)].to_vec();
        code_text(&mut text);
        assert_eq!(text, b"M\x81ller-Smith-JonesCh URS (3.1)");
        assert!(check_bytes(&h).contains(&h[13]));
        let g = &read_all(&cbf, None)[0];
        assert_eq!(g.tags.get("ECO"), Some("E99"));
        assert_eq!(g.tags.get("WhiteElo"), None);
        assert_eq!(g.tags.get("BlackElo"), Some("1605"));
        assert_eq!(g.tags.get("Event"), Some("Ch URS"));
        assert_eq!(g.tags.get("Site"), Some("?"));
        assert_eq!(g.tags.get("Round"), Some("3.1"));
        assert_eq!(g.tags.get("White"), Some("Müller"));
        assert_eq!(g.tags.get("Black"), Some("Smith-Jones"));
        assert_eq!(g.tags.get("Date"), Some("????.??.??"));
        assert_eq!(g.tags.get("Result"), Some("*"));
        assert_eq!(g.result, GameResult::Ongoing);
        // A round that is no number is left out.
        let mut other = game.clone();
        other.tags.set("Round", "Final");
        let g = &read_all(&encode_game(&other).expect("encode"), None)[0];
        assert_eq!(
            (g.tags.get("Event"), g.tags.get("Round")),
            (Some("Ch URS"), Some("?"))
        );
    }

    #[test]
    fn what_the_texts_cannot_hold_is_refused_with_the_reason() {
        for (name, value, says) in [
            ("White", "Vachier-Lagrave, Maxime", "holds a '-'"),
            ("Black", "Иванов", "code page (850) lacks"),
            ("White", "Núñez", "as a chess piece"),
            ("Black", &"y".repeat(62), "over CBF's 63"),
        ] {
            let mut game = game_of(
                Chess::default(),
                &["e4"],
                &[("White", "A"), ("Black", "B")],
                GameResult::Draw,
            );
            game.tags.set(name, value);
            let e = encode_game(&game).expect_err(value);
            assert!(e.0.contains(says), "{value}: {e}");
        }
        // 1. e4 with `tags`, written and read back.
        let back = |tags: &[(&str, &str)]| {
            let game = game_of(Chess::default(), &["e4"], tags, GameResult::Draw);
            read_all(&encode_game(&game).expect("encode"), None).remove(0)
        };
        // An event too long is cut, the round kept; one the code page lacks is written '?'.
        let long = format!("{} – Köln", "x".repeat(70));
        let g = back(&[("Event", &long), ("Round", "12.3")]);
        assert_eq!(g.tags.get("Event"), Some("x".repeat(56).as_str()));
        assert_eq!(g.tags.get("Round"), Some("12.3"));
        let g = back(&[("Event", "Turnier – Köln")]);
        assert_eq!(g.tags.get("Event"), Some("Turnier ? Köln"));
        // A year CBF cannot hold is left out, the game written.
        let g = back(&[("Date", "2027.01.20")]);
        assert_eq!(g.tags.get("Date"), Some("????.??.??"));
    }

    #[test]
    fn comment_text_is_code_page_850_with_chessbase_specials() {
        // '\r' dropped, '\n' as 0xFE; '▒' (177, ChessBase's king), '■' (0xFE), the no-break
        // space (0xFF) and '€' (not in the code page) as '?'; 'é' kept as 0x82.
        assert_eq!(
            comment_bytes("a▒b\r\n■\u{a0}€é"),
            [b'a', b'?', b'b', 0xFE, b'?', b'?', b'?', 0x82]
        );
        assert_eq!(
            comment_text(Rules::ChessBase, &[0, 0, 0, 0, b'a', b'?', 0xFE, 0x82]),
            "a?\né"
        );
        // Relay's first files are Latin-1.
        assert_eq!(comment_text(Rules::RelayFirst, &[0, 0, 0, 0, 0xE9]), "é");
        // No evaluations at all, or only leading control bytes.
        assert_eq!(comment_text(Rules::ChessBase, b"plain"), "plain");
        assert_eq!(comment_text(Rules::ChessBase, &[0x12, b'x']), "x");
        assert_eq!(comment_text(Rules::ChessBase, &[]), "");
    }

    #[test]
    fn comments_as_chessbase_writes_them() {
        let game = game_of(Chess::default(), &["e4", "e5"], &[], GameResult::Ongoing);
        let mut cbf = encode_game(&game).expect("encode");
        // Mark both moves commented by hand: plain move bytes 11 (byte 0, not coded) and 11
        // (byte 1, coded with 49·3 = 147).
        assert_eq!(cbf[14], 11);
        assert_eq!(cbf[15], 11 ^ 147);
        cbf[14] = 11 | COMMENTED;
        cbf[15] = (11 | COMMENTED) ^ 147;
        // Two comments: a move evaluation, NULL and text with piece symbols; the four zero
        // bytes, a line break and a pawn symbol.
        let area = [
            &[COMMENT_START, 1, 0][..],
            b"Best ",
            &[179],
            b"f3",
            &[COMMENT_START, 0, 0, 0, 0, b'a', COMMENT_NEWLINE, 182],
            b"e5",
        ]
        .concat();
        let mut h = decode_header(cbf[..14].try_into().expect("14"));
        h[6..8].copy_from_slice(&(area.len() as u16).to_be_bytes());
        cbf[..14].copy_from_slice(&encode_header(h));
        cbf.extend(area);
        let g = &read_all(&cbf, None)[0];
        assert_eq!(g.moves[0].comment.as_deref(), Some("Best Nf3"));
        assert_eq!(g.moves[1].comment.as_deref(), Some("a\ne5"));
    }

    #[test]
    fn variations_are_skipped() {
        let game = game_of(
            Chess::default(),
            &["e4", "e5", "Nf3"],
            &[],
            GameResult::Ongoing,
        );
        // Plain moves 11, [a variation (c5), commented, holding another (with d5)], 11, 24.
        let plain: Vec<u8> = vec![
            11,
            0xff,
            7 | COMMENTED,
            0xff,
            9,
            0x80,
            0x80,
            11 | COMMENTED,
            24,
        ];
        let comments = [
            &[COMMENT_START, 0, 0, 0, 0][..],
            b"the Sicilian",
            &[COMMENT_START, 0, 0, 0, 0],
            b"open",
        ]
        .concat();
        let mut moves = plain.clone();
        code_moves(&mut moves);
        let cbf = encode_game(&game).expect("encode");
        let mut h = decode_header(cbf[..14].try_into().expect("14"));
        h[2..4].copy_from_slice(&(plain.len() as u16 + 1).to_be_bytes());
        h[6..8].copy_from_slice(&(comments.len() as u16).to_be_bytes());
        let text_end = 14 + usize::from(h[4] & 63) + usize::from(h[5] & 63);
        let record = [&encode_header(h)[..], &cbf[14..text_end], &moves, &comments].concat();
        let g = &read_all(&record, None)[0];
        assert_eq!(g.moves.len(), 3);
        assert_eq!(g.moves[1].san.to_string(), "e5");
        assert_eq!(g.moves[0].comment, None);
        assert_eq!(g.moves[1].comment.as_deref(), Some("open"));

        // An end with no start, and a start with no end.
        for bad in [vec![11, 0x80, 11], vec![11, 0xff, 7]] {
            let mut moves = bad.clone();
            code_moves(&mut moves);
            let mut h = decode_header(cbf[..14].try_into().expect("14"));
            h[2..4].copy_from_slice(&(bad.len() as u16 + 1).to_be_bytes());
            let record = [&encode_header(h)[..], &cbf[14..text_end], &moves].concat();
            let e = games(&record, None)
                .expect("no index")
                .next()
                .expect("an item")
                .expect_err("unbalanced");
            assert!(e.0.starts_with("game 1 (from byte 0): unbalanced"), "{e}");
        }
    }

    #[test]
    fn chess960_is_refused() {
        let game = Game {
            castling_mode: CastlingMode::Chess960,
            ..Game::default()
        };
        let e = encode_game(&game).expect_err("960");
        assert!(e.0.contains("Chess960"), "{e}");
    }

    #[test]
    fn moves_beyond_127_are_refused() {
        // The position with 218 legal moves for White.
        let start = position("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1");
        let list: Vec<Move> = generator_moves(&start, Rules::ChessBase, EpMemory::default())
            .into_iter()
            .flatten()
            .collect();
        assert!(list.len() >= 218);
        let late = *list
            .iter()
            .rev()
            .find(|m| start.is_legal(**m))
            .expect("a legal move");
        let mut game = Game {
            start: start.clone(),
            ..Game::default()
        };
        game.push(late, None, None);
        let e = encode_game(&game).expect_err("too far down the list");
        assert!(e.0.starts_with("ply 1 "), "{e}");

        // Number 127 is fine without a comment, refused with one (it would be 0xFF).
        let m127 = list[126];
        assert!(start.is_legal(m127));
        let mut game = Game {
            start,
            ..Game::default()
        };
        game.push(m127, None, None);
        let cbf = encode_game(&game).expect("127 fits");
        assert_eq!(read_all(&cbf, None)[0].moves[0].mv, m127);
        game.moves[0].comment = Some("!".into());
        let e = encode_game(&game).expect_err("0xFF");
        assert!(e.0.contains("0xFF"), "{e}");
    }

    #[test]
    fn deleted_games_are_skipped_and_errors_name_the_game() {
        let a = game_of(
            Chess::default(),
            &["e4"],
            &[("White", "A")],
            GameResult::Draw,
        );
        let b = game_of(
            Chess::default(),
            &["d4"],
            &[("White", "B")],
            GameResult::Draw,
        );
        let (mut cbf, cbi) = file_of(&[a.clone(), b.clone(), a]);
        let first = encode_game(&game_of(
            Chess::default(),
            &["e4"],
            &[("White", "A")],
            GameResult::Draw,
        ))
        .expect("encode")
        .len();
        // Delete game 1.
        let mut h = decode_header(cbf[..14].try_into().expect("14"));
        h[10] |= 0x80;
        cbf[..14].copy_from_slice(&encode_header(h));
        for cbi in [Some(cbi.as_slice()), None] {
            let read = read_all(&cbf, cbi);
            let whites: Vec<_> = read.iter().map(|g| g.tags.get("White")).collect();
            assert_eq!(whites, [Some("B"), Some("A")]);
        }
        // Game 2's only move byte (not coded) to a number beyond the list.
        cbf[first + 14 + usize::from(h[4] & 63) + usize::from(h[5] & 63)] = 100;
        // It is named, and game 3 still comes after it, with the index or without.
        for cbi in [Some(cbi.as_slice()), None] {
            let items: Vec<_> = games(&cbf, cbi).expect("index").collect();
            assert_eq!(items.len(), 2, "steps over the game that does not read");
            let e = items[0].as_ref().expect_err("bad move");
            assert!(
                e.0.starts_with(&format!(
                    "game 2 (from byte {first}): move byte 0 (ply 1): move number 100"
                )),
                "{e}"
            );
            let g = items[1].as_ref().expect("game 3");
            assert_eq!(g.tags.get("White"), Some("A"));
        }
        // An index pointing past the file.
        let cbi = index(&[0, 10_000], cbf.len() as u32);
        let items: Vec<_> = games(&cbf, Some(&cbi)).expect("index").collect();
        let e = items[0].as_ref().expect_err("beyond");
        assert!(
            e.0.starts_with("game 2 (from byte 10000): the offset is beyond"),
            "{e}"
        );
        assert!(games(&cbf, Some(&[0u8, 0, 0, 9][..])).is_err());
        assert!(games(&cbf, Some(&[0u8, 0][..])).is_err());
        assert!(games(&cbf, Some(&[0u8, 0, 0, 0][..])).is_err());
    }

    #[test]
    fn garbled_files_give_errors_not_panics() {
        let mut rng = Rng::new(12345);
        let mut gs = Vec::new();
        for i in 0..6 {
            let start = if i == 5 {
                position("r3k2r/ppp2ppp/2n2n2/2qpp3/4P3/2N2N2/PPPPQPPP/R3K2R w Qk d6 0 12")
            } else {
                Chess::default()
            };
            let mut pos = start.clone();
            let mut game = Game {
                start,
                tags: Tags(vec![
                    ("White".into(), "W x".into()),
                    ("Black".into(), "B-x".into()),
                ]),
                ..Game::default()
            };
            for _ in 0..40 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[rng.below(legal.len())];
                pos.play_unchecked(mv);
                game.push(mv, None, None);
                if rng.below(4) == 0
                    && let Some(m) = game.moves.last_mut()
                {
                    m.comment = Some("c".into());
                }
            }
            gs.push(game);
        }
        let (cbf, cbi) = file_of(&gs);
        let drain = |cbf: &[u8], cbi: Option<&[u8]>| {
            if let Ok(it) = games(cbf, cbi) {
                for item in it {
                    if let Err(e) = item {
                        assert!(e.0.starts_with("game "), "{e}");
                    }
                }
            }
        };
        for _ in 0..1500 {
            let mut f = cbf.clone();
            let mut x = cbi.clone();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(f.len());
                f[i] = rng.next() as u8;
            }
            if rng.below(4) == 0 {
                let i = rng.below(x.len());
                x[i] = rng.next() as u8;
            }
            if rng.below(3) == 0 {
                f.truncate(rng.below(f.len() + 1));
            }
            drain(&f, Some(&x));
            drain(&f, None);
        }
        for _ in 0..300 {
            let len = rng.below(400);
            let junk: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let junk_index: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
            drain(&junk, None);
            drain(&junk, Some(&junk_index));
        }
    }
}
