//! A set-up start position (§2.6): its 33 bytes (the squares two a byte, then the move
//! number) and the header flags that go with it (side to move, castling rights, en passant
//! file), both ways. Reading mends what a real file may get wrong instead of refusing it:
//! castling rights whose king and rook are not in place, an en passant file no double step
//! explains.

use super::error::CbfError;
use super::layout::POSITION_LEN;
use super::movegen::step;
use shakmaty::{
    Bitboard, Board, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, File, FromSetup,
    Piece, Position, Rank, Role, Setup, Square,
};
use std::num::NonZeroU32;

/// Header byte 10's castling bits, with the rook's corner and the side each is for.
const CASTLING_BITS: [(u8, Color, CastlingSide, Square); 4] = [
    (4, Color::White, CastlingSide::QueenSide, Square::A1),
    (8, Color::White, CastlingSide::KingSide, Square::H1),
    (16, Color::Black, CastlingSide::QueenSide, Square::A8),
    (32, Color::Black, CastlingSide::KingSide, Square::H8),
];

/// Header bytes 10 and 11 of a record from the set-up start `start`: bit 0 "set up", bit 1
/// Black to move, the castling rights; the en passant file (1..8, 0 none), taken from
/// [`EnPassantMode::Always`] so that the reader's generator numbers alike.
pub(super) fn set_up_flags(start: &Chess) -> (u8, u8) {
    let mut flags1 = 1;
    for (bit, color, side, _) in CASTLING_BITS {
        if start.castles().has(color, side) {
            flags1 |= bit;
        }
    }
    if start.turn() == Color::Black {
        flags1 |= 2;
    }
    let flags2 = start
        .ep_square(EnPassantMode::Always)
        .map_or(0, |sq| u8::from(sq.file()) + 1);
    (flags1, flags2)
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
pub(super) fn encode_position(pos: &Chess) -> Result<[u8; POSITION_LEN], CbfError> {
    let mut out = [0u8; POSITION_LEN];
    for sq in Square::ALL {
        let i = usize::from(sq);
        if let Some(p) = pos.board().piece_at(sq) {
            let code = piece_code(p);
            out[i / 2] |= if i % 2 == 0 { code << 4 } else { code };
        }
    }
    out[32] = u8::try_from(pos.fullmoves().get() - 1).map_err(|_| CbfError::StartMoveNumber)?;
    Ok(out)
}

/// Reads the 33 bytes of a start position with the flags of header bytes 10 and 11.
pub(super) fn decode_position(bytes: &[u8], flags1: u8, flags2: u8) -> Result<Chess, CbfError> {
    let board = decode_board(bytes)?;
    let turn = if flags1 & 2 == 0 {
        Color::White
    } else {
        Color::Black
    };
    let castling_rights = castling_rights(&board, flags1);
    let ep_square = ep_square(&board, turn, flags2)?;
    let number = bytes.get(32).ok_or(CbfError::StartCut)?;
    let setup = Setup {
        board,
        turn,
        castling_rights,
        ep_square,
        fullmoves: NonZeroU32::MIN.saturating_add(u32::from(*number)),
        ..Setup::empty()
    };
    Chess::from_setup(setup, CastlingMode::Standard).map_err(|e| CbfError::IllegalStart {
        reason: e.to_string(),
    })
}

/// The pieces of the first 32 bytes, two squares a byte in the order a1, b1, …, h8.
fn decode_board(bytes: &[u8]) -> Result<Board, CbfError> {
    let mut board = Board::empty();
    for sq in Square::ALL {
        let i = usize::from(sq);
        let b = bytes.get(i / 2).ok_or(CbfError::StartCut)?;
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
            _ => return Err(CbfError::BadPieceCode { code, square: sq }),
        };
        board.set_piece_at(sq, role.of(color));
    }
    Ok(board)
}

/// The castling rights of header byte 10. Rights whose king and rook are not where the
/// standard game has them are dropped.
fn castling_rights(board: &Board, flags1: u8) -> Bitboard {
    let mut rights = Bitboard::EMPTY;
    for (bit, color, _, rook) in CASTLING_BITS {
        let king = Square::from_coords(File::E, rook.rank());
        if flags1 & bit != 0
            && board.piece_at(king) == Some(Role::King.of(color))
            && board.piece_at(rook) == Some(Role::Rook.of(color))
        {
            rights.add(rook);
        }
    }
    rights
}

/// The en passant square of header byte 11's file. One no double step can explain is
/// dropped.
fn ep_square(board: &Board, turn: Color, flags2: u8) -> Result<Option<Square>, CbfError> {
    let ep_file = flags2 & 15;
    let ep = match ep_file {
        0 => return Ok(None),
        1..=8 => Square::from_coords(
            File::new(u32::from(ep_file - 1)),
            turn.relative_rank(Rank::Sixth),
        ),
        _ => return Err(CbfError::BadEpFile(ep_file)),
    };
    let dir = if turn == Color::White { -1 } else { 1 };
    let pushed_to = step(ep, 0, dir);
    let pushed_from = step(ep, 0, -dir);
    let explained = board.piece_at(ep).is_none()
        && pushed_to.and_then(|s| board.piece_at(s)) == Some(Role::Pawn.of(!turn))
        && pushed_from.is_some_and(|s| board.piece_at(s).is_none());
    Ok(explained.then_some(ep))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    #[test]
    fn the_specs_start_position_example() {
        let pos: Chess = "kqrbn3/p7/8/8/8/8/P7/KQRBN3 w - - 0 55"
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("position");
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
}
