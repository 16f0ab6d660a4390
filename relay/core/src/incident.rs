//! The arbiter's record: what a board shows that is not a move of the game but that the FIDE
//! Laws of Chess (art. 7.5) ask an arbiter to act on — a completed illegal move, or a clock
//! pressed without a move — and the clock corrections made afterwards.
//!
//! A pure function of the game's position and the board as read at a lever press: one
//! displacement of a piece of the side to move (a capture included) that no legal move
//! explains is an illegal move; the board unchanged is a press without a move. Anything else
//! (two pieces moved, a piece missing, the opponent's piece moved) says nothing about a
//! completed illegal move, and the recorder keeps reporting the board as out of sync, as for
//! any board it cannot explain.

use serde::{Deserialize, Serialize};
use shakmaty::{Bitboard, Board, CastlingSide, Chess, Color, Piece, Position, Rank, Role, Square};

/// What kind of illegal move a player completed by pressing the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IllegalKind {
    /// A piece moved as it cannot move (a rook diagonally, a pawn backwards, a piece jumping
    /// over another).
    MoveNotAllowed,
    /// A move the piece could make, but the player's own king is left or put in check.
    KingInCheck,
    /// King and rook moved as for castling when castling is not allowed (the king has moved,
    /// or passes through or lands on an attacked square, or stands in check).
    IllegalCastling,
    /// A pawn moved to the last rank and left there, not replaced by a piece (art. 7.5.2).
    PawnNotPromoted,
    /// The clock pressed without a move (art. 7.5.4: penalised as an illegal move).
    PressWithoutMove,
}

/// The arbiter's answer to an illegal move on the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ruling {
    /// Not an illegal move after all: it stays on the record, marked, and is not counted.
    Dismissed,
    /// The result the Laws prescribe was given.
    Result,
}

impl Ruling {
    /// The name the JSON and the store use.
    pub fn as_str(self) -> &'static str {
        match self {
            Ruling::Dismissed => "dismissed",
            Ruling::Result => "result",
        }
    }

    pub fn from_name(name: &str) -> Option<Ruling> {
        [Ruling::Dismissed, Ruling::Result]
            .into_iter()
            .find(|r| r.as_str() == name)
    }
}

impl std::fmt::Display for Ruling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl IllegalKind {
    /// The name the JSON and the PGN comment use.
    pub fn name(self) -> &'static str {
        match self {
            IllegalKind::MoveNotAllowed => "move_not_allowed",
            IllegalKind::KingInCheck => "king_in_check",
            IllegalKind::IllegalCastling => "illegal_castling",
            IllegalKind::PawnNotPromoted => "pawn_not_promoted",
            IllegalKind::PressWithoutMove => "press_without_move",
        }
    }

    /// How an arbiter says it.
    pub fn describe(self) -> &'static str {
        match self {
            IllegalKind::MoveNotAllowed => "a piece moved as it cannot move",
            IllegalKind::KingInCheck => "own king left or put in check",
            IllegalKind::IllegalCastling => "castling not allowed",
            IllegalKind::PawnNotPromoted => "pawn on the last rank not replaced",
            IllegalKind::PressWithoutMove => "clock pressed without a move",
        }
    }

    pub fn from_name(name: &str) -> Option<IllegalKind> {
        [
            IllegalKind::MoveNotAllowed,
            IllegalKind::KingInCheck,
            IllegalKind::IllegalCastling,
            IllegalKind::PawnNotPromoted,
            IllegalKind::PressWithoutMove,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// The arbiter's PGN comment for an illegal move: who, which of theirs in the game, what
/// the board showed and whether it was ruled on.
pub fn illegal_note(
    white: bool,
    count: u32,
    kind: IllegalKind,
    uci: Option<&str>,
    ruling: Option<Ruling>,
) -> String {
    let who = if white { "White" } else { "Black" };
    let nth = match count {
        1 => "first".to_string(),
        2 => "second".to_string(),
        3 => "third".to_string(),
        n => format!("{n}th"),
    };
    let seen = uci.map(|u| format!(" {u},")).unwrap_or_default();
    let pressed = if kind == IllegalKind::PressWithoutMove {
        ""
    } else {
        ", clock pressed"
    };
    let ruled = match ruling {
        Some(Ruling::Result) => "; the arbiter gave the result the Laws prescribe",
        Some(Ruling::Dismissed) => "; dismissed by the arbiter",
        None => "",
    };
    format!(
        "Illegal move by {who} ({nth} in this game):{seen} {}{pressed}{ruled}.",
        kind.describe()
    )
}

/// The arbiter's PGN comment for a clock correction: whose clock, by how much.
pub fn adjustment_note(white: bool, delta_ms: i64) -> String {
    let who = if white { "White" } else { "Black" };
    let sign = if delta_ms < 0 { '-' } else { '+' };
    let t = crate::clock_time::ClockTime(delta_ms.unsigned_abs());
    format!("Clock corrected: {who} {sign}{t}.")
}

/// Puts `note` into `game` where the move `ply` (from 1) is about to be played: after the
/// move before it, or before the first move.
pub fn annotate(game: &mut crate::game::Game, ply: u32, note: &str) {
    let before = (ply as usize).saturating_sub(1).min(game.moves.len());
    let slot = match before.checked_sub(1) {
        Some(i) => &mut game.moves[i].comment,
        None => &mut game.intro,
    };
    *slot = Some(match slot.take() {
        Some(c) => format!("{c} {note}"),
        None => note.to_string(),
    });
}

/// A piece displaced on the board, as seen: from where to where, which piece, and which piece
/// of the opponent's stood on the target (a capture).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Displacement {
    pub from: Square,
    pub to: Square,
    pub piece: Piece,
    pub captured: Option<Piece>,
}

impl Displacement {
    /// The move as seen, in UCI squares (`e1g1` for a castling king).
    pub fn uci(&self) -> String {
        format!("{}{}", self.from, self.to)
    }
}

/// What the board at a lever press shows against the game's position `pos` (whose side to
/// move pressed): `None` when it shows a legal move or something one displacement does not
/// explain.
pub fn judge_press(pos: &Chess, board: &Board) -> Option<(IllegalKind, Option<Displacement>)> {
    if pos.board() == board {
        return Some((IllegalKind::PressWithoutMove, None));
    }
    // A legal move (or a position it leads to) is a move, however the board got there.
    let legal = pos.legal_moves().into_iter().any(|m| {
        let mut p = pos.clone();
        p.play_unchecked(m);
        p.board() == board
    });
    if legal {
        return None;
    }
    let mover = pos.turn();
    let before = pos.board();
    let changed: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|&sq| before.piece_at(sq) != board.piece_at(sq))
        .collect();
    match changed.as_slice() {
        [a, b] => {
            let d = displacement(before, board, mover, *a, *b)
                .or_else(|| displacement(before, board, mover, *b, *a))?;
            Some((classify(pos, &d), Some(d)))
        }
        [_, _, _, _] => castling(pos, board).map(|d| (IllegalKind::IllegalCastling, Some(d))),
        _ => None,
    }
}

/// `from` lost one of the mover's pieces and `to` holds that piece now, having been empty or
/// held a piece of the opponent's other than the king.
fn displacement(
    before: &Board,
    after: &Board,
    mover: Color,
    from: Square,
    to: Square,
) -> Option<Displacement> {
    let piece = before.piece_at(from).filter(|p| p.color == mover)?;
    if after.piece_at(from).is_some() || after.piece_at(to) != Some(piece) {
        return None;
    }
    let captured = before.piece_at(to);
    if captured.is_some_and(|c| c.color == mover || c.role == Role::King) {
        return None;
    }
    Some(Displacement {
        from,
        to,
        piece,
        captured,
    })
}

/// Whether `piece` could go from `from` to `to` on `board` by its own rules, whatever
/// happens to its king (castling, en passant and promotion aside); `capture`: an opponent's
/// piece stands on `to`. The emulator plays its illegal moves by the same rule.
pub fn follows_piece_rules(
    board: &Board,
    from: Square,
    to: Square,
    piece: Piece,
    capture: bool,
) -> bool {
    let occupied = board.occupied();
    match piece.role {
        Role::Pawn => {
            let forward = if piece.color == Color::White { 8 } else { -8 };
            let one = from.offset(forward);
            let two = one.and_then(|s| s.offset(forward));
            let start = from.rank() == piece.color.fold_wb(Rank::Second, Rank::Seventh);
            if capture {
                shakmaty::attacks::pawn_attacks(piece.color, from).contains(to)
            } else {
                Some(to) == one
                    || (start && Some(to) == two && one.is_some_and(|s| !occupied.contains(s)))
            }
        }
        _ => shakmaty::attacks::attacks(from, piece, occupied).contains(to),
    }
}

/// Why the displacement `d` is not a legal move.
fn classify(pos: &Chess, d: &Displacement) -> IllegalKind {
    let pseudo = follows_piece_rules(pos.board(), d.from, d.to, d.piece, d.captured.is_some());
    let last_rank = d.piece.color.fold_wb(Rank::Eighth, Rank::First);
    if pseudo && d.piece.role == Role::Pawn && d.to.rank() == last_rank {
        // The move is right but the pawn was left on the last rank.
        return IllegalKind::PawnNotPromoted;
    }
    if pseudo {
        IllegalKind::KingInCheck
    } else {
        IllegalKind::MoveNotAllowed
    }
}

/// King and rook moved from their squares to where castling puts them (standard chess), and
/// nothing else: castling that the position does not allow. The king's move is the one seen.
fn castling(pos: &Chess, board: &Board) -> Option<Displacement> {
    let color = pos.turn();
    let before = pos.board();
    let back = color.fold_wb(Rank::First, Rank::Eighth);
    let king_from = Square::from_coords(shakmaty::File::E, back);
    let king = Piece {
        color,
        role: Role::King,
    };
    let rook = Piece {
        color,
        role: Role::Rook,
    };
    if before.piece_at(king_from) != Some(king) || board.piece_at(king_from).is_some() {
        return None;
    }
    for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
        let rook_from = Square::from_coords(
            if side == CastlingSide::KingSide {
                shakmaty::File::H
            } else {
                shakmaty::File::A
            },
            back,
        );
        let (king_to, rook_to) = (side.king_to(color), side.rook_to(color));
        let mut expected = before.clone();
        expected.discard_piece_at(king_from);
        expected.discard_piece_at(rook_from);
        if before.piece_at(rook_from) != Some(rook)
            || !(before.occupied() & Bitboard::from(king_to)).is_empty()
            || !(before.occupied() & Bitboard::from(rook_to)).is_empty()
        {
            continue;
        }
        expected.set_piece_at(king_to, king);
        expected.set_piece_at(rook_to, rook);
        if expected == *board {
            return Some(Displacement {
                from: king_from,
                to: king_to,
                piece: king,
                captured: None,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("legal")
    }

    /// The board after lifting the piece on `from` and setting it on `to`.
    fn displaced(p: &Chess, from: Square, to: Square) -> Board {
        let mut b = p.board().clone();
        let piece = b.remove_piece_at(from).expect("a piece");
        b.set_piece_at(to, piece);
        b
    }

    #[test]
    fn a_rook_moved_diagonally_is_a_move_not_allowed() {
        let p = pos("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
        let b = displaced(&p, Square::A1, Square::B2);
        let (kind, d) = judge_press(&p, &b).expect("illegal");
        assert_eq!(kind, IllegalKind::MoveNotAllowed);
        assert_eq!(d.expect("seen").uci(), "a1b2");
    }

    #[test]
    fn a_pinned_piece_moved_is_king_in_check_and_a_capture_is_seen() {
        // The knight on e2 is pinned by the rook on e8; it takes the pawn on d4.
        let p = pos("4r1k1/8/8/8/3p4/8/4N3/4K3 w - - 0 1");
        let b = displaced(&p, Square::E2, Square::D4);
        let (kind, d) = judge_press(&p, &b).expect("illegal");
        assert_eq!(kind, IllegalKind::KingInCheck);
        let d = d.expect("seen");
        assert_eq!(d.captured.map(|c| c.role), Some(Role::Pawn));
        // The king walking into check is the same kind.
        let b = displaced(&p, Square::E1, Square::F1);
        assert!(judge_press(&p, &b).is_none(), "Kf1 is legal");
        let p = pos("4r1k1/8/8/8/8/8/8/3K4 w - - 0 1");
        let b = displaced(&p, Square::D1, Square::E1);
        assert_eq!(
            judge_press(&p, &b).map(|(k, _)| k),
            Some(IllegalKind::KingInCheck)
        );
    }

    #[test]
    fn a_legal_move_the_unchanged_board_and_other_boards() {
        let p = Chess::default();
        assert!(judge_press(&p, &displaced(&p, Square::E2, Square::E4)).is_none());
        assert_eq!(
            judge_press(&p, p.board()).map(|(k, _)| k),
            Some(IllegalKind::PressWithoutMove)
        );
        // The opponent's piece moved, a piece missing, two pieces moved: not for the record.
        assert!(judge_press(&p, &displaced(&p, Square::E7, Square::E5)).is_none());
        let mut missing = p.board().clone();
        missing.discard_piece_at(Square::B1);
        assert!(judge_press(&p, &missing).is_none());
        let mut two = displaced(&p, Square::B1, Square::C3);
        let n = two.remove_piece_at(Square::G1).expect("knight");
        two.set_piece_at(Square::G4, n);
        assert!(judge_press(&p, &two).is_none());
        // A pawn three squares forward.
        assert_eq!(
            judge_press(&p, &displaced(&p, Square::E2, Square::E5)).map(|(k, _)| k),
            Some(IllegalKind::MoveNotAllowed)
        );
    }

    #[test]
    fn castling_through_check_and_a_pawn_left_on_the_last_rank() {
        // The f1 square is attacked by the bishop on c4.
        let p = pos("4k3/8/8/8/2b5/8/8/4K2R w K - 0 1");
        let mut b = p.board().clone();
        b.discard_piece_at(Square::E1);
        b.discard_piece_at(Square::H1);
        b.set_piece_at(Square::G1, Color::White.king());
        b.set_piece_at(Square::F1, Color::White.rook());
        let (kind, d) = judge_press(&p, &b).expect("illegal");
        assert_eq!(kind, IllegalKind::IllegalCastling);
        assert_eq!(d.expect("seen").uci(), "e1g1");
        let p = pos("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        let b = displaced(&p, Square::A7, Square::A8);
        assert_eq!(
            judge_press(&p, &b).map(|(k, _)| k),
            Some(IllegalKind::PawnNotPromoted)
        );
    }
}
