//! How a move becomes what hands do at the board: the lifts and placements of each kind of
//! move (captures in either order, en passant, castling king or rook first, Chess960's
//! castling onto the rook's square, a promoting pawn set down before its new piece), with the
//! untidy habits of real players at a chosen chance (a fidget, a slide through the squares
//! between, a move taken back and made again before the press), and the gaps between them.

use super::model::Action;
use boards::rng::SplitMix64;
use shakmaty::{Board, CastlingSide, Chess, Move, Piece, Position, Role, Square, attacks};

/// `n` gaps between a move's actions, each of `lo` to `hi` ms (the handling time).
pub(super) fn draw_gaps(rng: &mut SplitMix64, n: usize, lo: u64, hi: u64) -> Vec<u64> {
    (0..n).map(|_| rng.range(lo, hi)).collect()
}

/// The physical actions of one move, with noise of each kind at chance `p`.
pub(super) fn plan_move(
    rng: &mut SplitMix64,
    pos: &Chess,
    after: &Board,
    mv: Move,
    p: f64,
) -> Vec<Action> {
    let mut out = Vec::new();
    let color = pos.turn();
    let board = pos.board();
    let fidget = rng.chance(p);
    let slide = rng.chance(p);
    let retake = rng.chance(p);
    if fidget {
        // Adjust one of one's own pieces first. Not the king: lifting a king and putting it
        // back is the DGT driver's "move now" gesture (dgt-protocol.md §12.3).
        let own: Vec<Square> = (board.by_color(color) & !board.kings())
            .into_iter()
            .collect();
        if !own.is_empty() {
            let sq = own[rng.below(own.len() as u64) as usize];
            if let Some(piece) = board.piece_at(sq) {
                out.push(Action::Lift(sq));
                out.push(Action::Place(sq, piece));
            }
        }
    }
    core_actions(pos, mv, slide, &mut |n| rng.below(n), &mut out);
    if retake {
        // Take the move back (pieces back where they were, captured piece restored), then
        // play it again — before pressing the clock.
        undo_actions(board, after, &mut out);
        core_actions(pos, mv, false, &mut |n| rng.below(n), &mut out);
    }
    out
}

/// Lifts and placements that play `mv`. `pick(n)` chooses one of `n` ways (0 = the shortest).
pub(super) fn core_actions(
    pos: &Chess,
    mv: Move,
    slide: bool,
    pick: &mut dyn FnMut(u64) -> u64,
    out: &mut Vec<Action>,
) {
    let color = pos.turn();
    match mv {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            let moving = Piece { color, role };
            let landed = Piece {
                color,
                role: promotion.unwrap_or(role),
            };
            let path = if slide && matches!(role, Role::Bishop | Role::Rook | Role::Queen) {
                squares_between(from, to)
            } else {
                Vec::new()
            };
            // A promoting pawn may be set down on the last rank before the new piece.
            let pawn_first = promotion.is_some() && pick(2) == 1;
            let carry = |out: &mut Vec<Action>| {
                out.push(Action::Lift(from));
                for &sq in &path {
                    out.push(Action::Place(sq, moving));
                    out.push(Action::Lift(sq));
                }
            };
            let land = |out: &mut Vec<Action>| {
                if pawn_first {
                    out.push(Action::Place(to, moving));
                    out.push(Action::Lift(to));
                }
                out.push(Action::Place(to, landed));
            };
            if capture.is_some() {
                match pick(4) {
                    // In one motion: the square never reads empty.
                    0 => {
                        carry(out);
                        land(out);
                    }
                    // Captured piece off first.
                    1 => {
                        out.push(Action::Lift(to));
                        carry(out);
                        land(out);
                    }
                    // Own piece in hand first; meanwhile the board shows the captured piece
                    // still on the target.
                    2 => {
                        carry(out);
                        out.push(Action::Lift(to));
                        land(out);
                    }
                    // Set down on the target before the captured piece is pulled away.
                    _ => {
                        carry(out);
                        land(out);
                        out.push(Action::Lift(to));
                        out.push(Action::Place(to, landed));
                    }
                }
            } else {
                carry(out);
                land(out);
            }
        }
        Move::EnPassant { from, to } => {
            let pawn = Piece {
                color,
                role: Role::Pawn,
            };
            let taken = Square::from_coords(to.file(), from.rank());
            let seq = match pick(3) {
                0 => [
                    Action::Lift(taken),
                    Action::Lift(from),
                    Action::Place(to, pawn),
                ],
                1 => [
                    Action::Lift(from),
                    Action::Lift(taken),
                    Action::Place(to, pawn),
                ],
                _ => [
                    Action::Lift(from),
                    Action::Place(to, pawn),
                    Action::Lift(taken),
                ],
            };
            out.extend(seq);
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            let k = (
                king,
                side.king_to(color),
                Piece {
                    color,
                    role: Role::King,
                },
            );
            let r = (
                rook,
                side.rook_to(color),
                Piece {
                    color,
                    role: Role::Rook,
                },
            );
            // King first (what real captures show) or rook first (the board passes through
            // the position after a plain rook move).
            let (first, second) = if pick(2) == 0 { (k, r) } else { (r, k) };
            let transfers: Vec<(Square, Square, Piece)> = [first, second]
                .into_iter()
                .filter(|(src, dst, _)| src != dst)
                .collect();
            match transfers.as_slice() {
                [] => {}
                [(src, dst, piece)] => {
                    out.push(Action::Lift(*src));
                    out.push(Action::Place(*dst, *piece));
                }
                [(src1, dst1, p1), (src2, dst2, p2), ..] => {
                    out.push(Action::Lift(*src1));
                    if dst1 == src2 {
                        // Chess960: the first piece's target holds the other one.
                        out.push(Action::Lift(*src2));
                        out.push(Action::Place(*dst1, *p1));
                    } else {
                        out.push(Action::Place(*dst1, *p1));
                        out.push(Action::Lift(*src2));
                    }
                    out.push(Action::Place(*dst2, *p2));
                }
            }
        }
        Move::Put { role, to } => out.push(Action::Place(to, Piece { color, role })),
    }
}

/// From the board after a move back to the board before it: lift what is new, set down what
/// is missing.
fn undo_actions(before: &Board, after: &Board, out: &mut Vec<Action>) {
    for sq in Square::ALL {
        if after.piece_at(sq).is_some() && after.piece_at(sq) != before.piece_at(sq) {
            out.push(Action::Lift(sq));
        }
    }
    for sq in Square::ALL {
        if let Some(piece) = before.piece_at(sq)
            && after.piece_at(sq) != Some(piece)
        {
            out.push(Action::Place(sq, piece));
        }
    }
}

/// The squares strictly between two aligned squares, nearest to `from` first.
fn squares_between(from: Square, to: Square) -> Vec<Square> {
    let mut v: Vec<Square> = attacks::between(from, to).into_iter().collect();
    v.sort_by_key(|sq| sq.distance(from));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::model::{NoiseConfig, ScriptOptions};
    use crate::player::testing::{ITALIAN, moves_of, one_game, replay};
    use crate::player::write::script;
    use shakmaty::Color;

    #[test]
    fn castling_rook_first_happens_and_passes_a_legal_rook_move() {
        let game = one_game(ITALIAN);
        let before = {
            let mut p = game.start.clone();
            for m in &game.moves[..6] {
                p.play_unchecked(m.mv);
            }
            p
        };
        let (mut rook_first, mut king_first) = (0, 0);
        for seed in 0..40 {
            let s = script(&game, seed, &ScriptOptions::new(NoiseConfig::clean()));
            replay(&game, &s, &NoiseConfig::clean());
            let castle = &moves_of(&s)[6];
            assert_eq!(castle.len(), 4);
            if castle[0] == Action::Lift(Square::H1) {
                rook_first += 1;
                let rook = Piece {
                    color: Color::White,
                    role: Role::Rook,
                };
                assert_eq!(castle[1], Action::Place(Square::F1, rook));
                // After the rook alone, the board is that of the legal move Rf1.
                let rf1 = Move::Normal {
                    role: Role::Rook,
                    from: Square::H1,
                    capture: None,
                    to: Square::F1,
                    promotion: None,
                };
                assert!(before.is_legal(rf1));
                let mut b = before.board().clone();
                b.discard_piece_at(Square::H1);
                b.set_piece_at(Square::F1, rook);
                let mut p = before.clone();
                p.play_unchecked(rf1);
                assert_eq!(&b, p.board());
            } else {
                assert_eq!(castle[0], Action::Lift(Square::E1));
                king_first += 1;
            }
        }
        assert!(
            rook_first > 0 && king_first > 0,
            "{rook_first} / {king_first}"
        );
    }

    #[test]
    fn en_passant_in_all_orders() {
        let game = one_game("[Event \"x\"]\n\n1. e4 a6 2. e5 d5 3. exd6 *");
        assert!(game.moves[4].mv.is_en_passant());
        let mut orders = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let s = script(&game, seed, &ScriptOptions::new(NoiseConfig::clean()));
            replay(&game, &s, &NoiseConfig::clean());
            let ep = &moves_of(&s)[4];
            assert_eq!(ep.len(), 3);
            assert!(ep.contains(&Action::Lift(Square::D5)));
            orders.insert(ep.iter().position(|a| *a == Action::Lift(Square::D5)));
        }
        assert_eq!(orders.len(), 3);
    }

    #[test]
    fn under_promotion_places_the_chosen_piece() {
        let game = one_game(
            "[SetUp \"1\"]\n[FEN \"1r5k/P7/8/8/8/8/8/K7 w - - 0 1\"]\n\n1. axb8=N Kg7 2. Nd7 *",
        );
        let knight = Piece {
            color: Color::White,
            role: Role::Knight,
        };
        let pawn = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let (mut with_pawn, mut direct) = (0, 0);
        for seed in 0..40 {
            let s = script(&game, seed, &ScriptOptions::new(NoiseConfig::clean()));
            replay(&game, &s, &NoiseConfig::clean());
            let promo = &moves_of(&s)[0];
            assert_eq!(promo.last(), Some(&Action::Place(Square::B8, knight)));
            assert!(
                !promo
                    .iter()
                    .any(|a| matches!(a, Action::Place(_, p) if p.role == Role::Queen))
            );
            if promo.contains(&Action::Place(Square::B8, pawn)) {
                with_pawn += 1;
            } else {
                direct += 1;
            }
        }
        assert!(with_pawn > 0 && direct > 0);
    }

    #[test]
    fn chess960_castling_onto_the_rook_square() {
        // The king's target square g8 holds the castling rook.
        let game = one_game(
            "[Variant \"fischerandom\"]\n[SetUp \"1\"]\n\
             [FEN \"nbbrknrq/pppppppp/8/8/8/8/PPPPPPPP/NBBRKNRQ w KQkq - 0 1\"]\n\
             [TimeControl \"10+1\"]\n\n\
             1. d4 d5 2. c3 Nb6 3. e4 dxe4 4. Bxe4 g6 5. g4 c6 6. Qf3 Ne6 7. Nb3 Qf6 \
             8. Qxf6 exf6 9. h4 O-O *",
        );
        let noisy = NoiseConfig {
            probability: 0.5,
            ..NoiseConfig::default()
        };
        for seed in 0..20 {
            let s = script(&game, seed, &ScriptOptions::new(noisy));
            replay(&game, &s, &noisy);
        }
    }

    #[test]
    fn noise_kinds_appear_and_short_thinks_drop_them() {
        // Bc4 after a minute's thought.
        let game = one_game(
            "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n1. e4 {[%clk 0:05:02]} e5 2. Nf3 \
             {[%clk 0:05:04]} Nc6 3. Bc4 {[%clk 0:04:07]} *",
        );
        let noisy = NoiseConfig {
            probability: 1.0,
            ..NoiseConfig::default()
        };
        let s = script(&game, 5, &ScriptOptions::new(noisy));
        assert!(s.moves[4].clock_honoured);
        replay(&game, &s, &noisy);
        let bc4 = &moves_of(&s)[4];
        // Fidget (2) + slide f1-e2-d3-c4 (1 + 2×2 + 1) + take back (2) + replay (2).
        assert_eq!(bc4.len(), 2 + 6 + 2 + 2, "{bc4:?}");
        // A one-second blitz move has no room for that much handling (and a hand needs at
        // least the shortest gap per action, so a record faster than that is not honoured).
        let blitz = one_game(
            "[Event \"x\"]\n[TimeControl \"180+0\"]\n\n1. e4 {[%clk 0:02:59]} e5 {[%clk 0:02:59]} *",
        );
        let s = script(&blitz, 5, &ScriptOptions::new(noisy));
        replay(&blitz, &s, &noisy);
        assert!(s.moves.iter().all(|m| m.clock_honoured));
        assert_eq!(moves_of(&s)[0].len(), 2);
    }
}
