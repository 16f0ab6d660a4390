//! Squares and piece codes as the board numbers them (dgt-protocol.md §6).
//!
//! The board numbers its 64 squares row by row from a8 (index 0) to h1 (index 63) when the
//! connector is on the left of the near-side player. It never rotates this numbering itself, so a
//! board turned around reports White's pieces on indices 0–15; [`Orientation`] maps between the
//! board's index and the real square.

use serde::Serialize;
use shakmaty::{Board, Color, File, Piece, Rank, Role, Square};
use std::fmt;

/// A square index as the board sends it: 0 = a8 … 63 = h1 in the board's own orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct DgtSquare(u8);

impl DgtSquare {
    /// `None` for values outside 0..=63.
    pub fn new(index: u8) -> Option<DgtSquare> {
        (index < 64).then_some(DgtSquare(index))
    }

    /// All 64 squares in index order.
    pub fn all() -> impl Iterator<Item = DgtSquare> {
        (0u8..64).map(DgtSquare)
    }

    pub fn index(self) -> u8 {
        self.0
    }

    /// The real square this index means when the board lies in `orientation`.
    pub fn to_square(self, orientation: Orientation) -> Square {
        let i = match orientation {
            Orientation::Normal => self.0,
            Orientation::Rotated => 63 - self.0,
        };
        let file = File::new(u32::from(i % 8));
        let rank = Rank::new(7 - u32::from(i / 8));
        Square::from_coords(file, rank)
    }

    /// The index the board uses for a real square when it lies in `orientation`.
    pub fn from_square(square: Square, orientation: Orientation) -> DgtSquare {
        let normal = (7 - u8::from(square.rank())) * 8 + u8::from(square.file());
        match orientation {
            Orientation::Normal => DgtSquare(normal),
            Orientation::Rotated => DgtSquare(63 - normal),
        }
    }
}

impl fmt::Display for DgtSquare {
    /// Shows the square's name in the normal orientation (`e2` for index 52).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_square(Orientation::Normal))
    }
}

/// How the board lies relative to the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Orientation {
    /// White sits at the connector side: index 0 is a8.
    #[default]
    Normal,
    /// The board is turned around: index 0 is h1.
    Rotated,
}

/// One square's content as the board reports it (dgt-protocol.md §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceCode {
    Empty,
    /// A real chess piece.
    Piece(Piece),
    /// The result "magic pieces" (codes 0x0D–0x0F), placed on the board to propose a result.
    Magic(MagicPiece),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MagicPiece {
    /// 0x0D, PIECE1.
    Draw,
    /// 0x0E, PIECE2.
    WhiteWins,
    /// 0x0F, PIECE3.
    BlackWins,
}

const ROLE_ORDER: [Role; 6] = [
    Role::Pawn,
    Role::Rook,
    Role::Knight,
    Role::Bishop,
    Role::King,
    Role::Queen,
];

impl PieceCode {
    /// Decodes a piece byte; only the low four bits carry the piece (the meaning of the upper
    /// bits is undocumented, §9.1), so every byte decodes to something.
    pub fn from_byte(byte: u8) -> PieceCode {
        match byte & 0x0F {
            0 => PieceCode::Empty,
            code @ 1..=12 => {
                let color = if code <= 6 {
                    Color::White
                } else {
                    Color::Black
                };
                let role = ROLE_ORDER[usize::from((code - 1) % 6)];
                PieceCode::Piece(Piece { color, role })
            }
            0x0D => PieceCode::Magic(MagicPiece::Draw),
            0x0E => PieceCode::Magic(MagicPiece::WhiteWins),
            _ => PieceCode::Magic(MagicPiece::BlackWins),
        }
    }

    pub fn to_byte(self) -> u8 {
        match self {
            PieceCode::Empty => 0,
            PieceCode::Piece(piece) => {
                let base = if piece.color == Color::White { 1 } else { 7 };
                // ROLE_ORDER holds all six roles, so the position always exists.
                let offset = ROLE_ORDER
                    .iter()
                    .position(|r| *r == piece.role)
                    .unwrap_or(0);
                base + offset as u8
            }
            PieceCode::Magic(MagicPiece::Draw) => 0x0D,
            PieceCode::Magic(MagicPiece::WhiteWins) => 0x0E,
            PieceCode::Magic(MagicPiece::BlackWins) => 0x0F,
        }
    }

    pub fn piece(self) -> Option<Piece> {
        match self {
            PieceCode::Piece(p) => Some(p),
            _ => None,
        }
    }

    /// One character: FEN letter for pieces, `.` for empty, `=`/`+`/`-` for the magic pieces.
    pub fn to_char(self) -> char {
        match self {
            PieceCode::Empty => '.',
            PieceCode::Piece(p) => p.char(),
            PieceCode::Magic(MagicPiece::Draw) => '=',
            PieceCode::Magic(MagicPiece::WhiteWins) => '+',
            PieceCode::Magic(MagicPiece::BlackWins) => '-',
        }
    }
}

impl Serialize for PieceCode {
    /// As its one-character form (see [`PieceCode::to_char`]).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_char(self.to_char())
    }
}

impl Serialize for Placement {
    /// As 64 characters in the board's index order (see [`PieceCode::to_char`]).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.iter().map(|p| p.to_char()).collect::<String>())
    }
}

/// The 64 squares as one board reports them, in the board's own index order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement(pub [PieceCode; 64]);

impl fmt::Debug for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Placement({})", self.board_fen(Orientation::Normal))
    }
}

impl Default for Placement {
    fn default() -> Self {
        Placement([PieceCode::Empty; 64])
    }
}

impl Placement {
    pub fn from_bytes(bytes: &[u8; 64]) -> Placement {
        Placement(bytes.map(PieceCode::from_byte))
    }

    pub fn to_bytes(&self) -> [u8; 64] {
        self.0.map(PieceCode::to_byte)
    }

    pub fn get(&self, square: DgtSquare) -> PieceCode {
        self.0[usize::from(square.index())]
    }

    pub fn set(&mut self, square: DgtSquare, piece: PieceCode) {
        self.0[usize::from(square.index())] = piece;
    }

    /// The chess pieces on the board (magic pieces left out) in real squares.
    pub fn to_board(&self, orientation: Orientation) -> Board {
        let mut board = Board::empty();
        for (i, code) in self.0.iter().enumerate() {
            if let PieceCode::Piece(piece) = code {
                board.set_piece_at(DgtSquare(i as u8).to_square(orientation), *piece);
            }
        }
        board
    }

    /// The placement the board reports for `board` lying in `orientation`.
    pub fn from_board(board: &Board, orientation: Orientation) -> Placement {
        let mut placement = Placement::default();
        for (sq, piece) in board.iter() {
            placement.set(
                DgtSquare::from_square(sq, orientation),
                PieceCode::Piece(piece),
            );
        }
        placement
    }

    /// The magic pieces present, with their real squares.
    pub fn magic_pieces(&self) -> Vec<(DgtSquare, MagicPiece)> {
        (0u8..64)
            .filter_map(|i| match self.0[usize::from(i)] {
                PieceCode::Magic(m) => Some((DgtSquare(i), m)),
                _ => None,
            })
            .collect()
    }

    /// FEN piece placement of the chess pieces (magic pieces are left out).
    pub fn board_fen(&self, orientation: Orientation) -> String {
        self.to_board(orientation).board_fen().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_maps_to_squares_both_ways() {
        let check = |i: u8, o: Orientation, name: &str| {
            let sq = DgtSquare::new(i).expect("valid index").to_square(o);
            assert_eq!(sq.to_string(), name);
            assert_eq!(DgtSquare::from_square(sq, o).index(), i);
        };
        check(0, Orientation::Normal, "a8");
        check(7, Orientation::Normal, "h8");
        check(52, Orientation::Normal, "e2");
        check(63, Orientation::Normal, "h1");
        check(0, Orientation::Rotated, "h1");
        check(52, Orientation::Rotated, "d7");
        assert!(DgtSquare::new(64).is_none());
    }

    #[test]
    fn piece_codes_round_trip() {
        for b in 0u8..16 {
            assert_eq!(PieceCode::from_byte(b).to_byte(), b);
        }
        assert_eq!(PieceCode::from_byte(0x05).to_char(), 'K');
        assert_eq!(PieceCode::from_byte(0x06).to_char(), 'Q');
        assert_eq!(PieceCode::from_byte(0x0C).to_char(), 'q');
        assert_eq!(
            PieceCode::from_byte(0x0E),
            PieceCode::Magic(MagicPiece::WhiteWins)
        );
    }

    #[test]
    fn start_position_dump_reads_as_fen() {
        let mut bytes = [0u8; 64];
        bytes[..8].copy_from_slice(&[8, 9, 10, 12, 11, 10, 9, 8]);
        bytes[8..16].fill(7);
        bytes[48..56].fill(1);
        bytes[56..].copy_from_slice(&[2, 3, 4, 6, 5, 4, 3, 2]);
        let p = Placement::from_bytes(&bytes);
        assert_eq!(
            p.board_fen(Orientation::Normal),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
        assert_eq!(
            p.board_fen(Orientation::Rotated),
            "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"
        );
        assert_eq!(
            Placement::from_board(&Board::default(), Orientation::Normal),
            p
        );
    }
}
