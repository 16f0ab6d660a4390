//! ChessBase's move generator (§2.4). A move is stored as its number in the list this
//! generator makes, so its order *is* the format: the squares file by file, each piece's
//! directions in the order the specification draws them, castling as ChessBase tests it, and
//! the numbers ChessBase counts for no move (the module notes of [`super`] say why each is
//! so). The list is pseudo-legal; the caller keeps to legal moves.

use shakmaty::{
    Board, CastlingSide, Chess, Color, EnPassantMode, File, Move, Position, Rank, Role, Square,
    attacks,
};

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
pub(super) fn step(sq: Square, df: i32, dr: i32) -> Option<Square> {
    Some(Square::from_coords(
        sq.file().offset(df)?,
        sq.rank().offset(dr)?,
    ))
}

/// Whose rules a record follows (see the module notes of [`super`]); the generator and the
/// reading of texts differ by them.
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
    /// The file of the double step.
    pub(super) file: Option<File>,
    /// Whether a castling answered it.
    pub(super) carried: bool,
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
pub(super) fn number_of(list: &[Option<Move>], mv: Move) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cbf::encode_game;
    use crate::cbf::tests::{Rng, game_of, position, read_all};
    use crate::game::{Game, GameResult};
    use shakmaty::san::San;

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
}
