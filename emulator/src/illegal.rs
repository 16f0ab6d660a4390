//! Illegal moves as they happen at a real board (FIDE Laws art. 7.5): at a chosen ply the
//! mover displaces one of their own pieces where no legal move takes it (or moves nothing) and
//! presses the clock; a few seconds later the arbiter stops the clock, puts the position back,
//! gives the opponent extra time, takes the false press's increment (and move count) back off
//! the offender's clock and starts it again; then the game's real move is played. The game's
//! moves never change.
//!
//! This module says what an incident is and which displacements a position offers; the
//! player ([`crate::player::script`], asked by [`crate::player::ScriptOptions::illegal`])
//! schedules them in the script, where its simulated clock stays in step with the board's.

use boards::rng::SplitMix64;
use shakmaty::{Board, Chess, Color, Piece, Position, Rank, Role, Square};
use std::fmt;
use std::str::FromStr;

/// What kind of illegal move to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IllegalKind {
    /// A piece moved as it cannot move, to an empty square.
    Move,
    /// A piece moved as it cannot move onto an opponent's piece (not the king), taking it.
    Capture,
    /// A move the piece could make by its own rules (no castling, en passant or promotion),
    /// but the own king is left or put in check.
    KingInCheck,
    /// The clock pressed with nothing moved.
    PressWithoutMove,
}

impl IllegalKind {
    /// The name written in logs: `move`, `capture`, `king_in_check`, `press_without_move`.
    pub fn name(self) -> &'static str {
        match self {
            IllegalKind::Move => "move",
            IllegalKind::Capture => "capture",
            IllegalKind::KingInCheck => "king_in_check",
            IllegalKind::PressWithoutMove => "press_without_move",
        }
    }
}

impl fmt::Display for IllegalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads the [`IllegalKind::name`]s and the short forms of `--illegal`: `check`, `press`.
impl FromStr for IllegalKind {
    type Err = String;

    fn from_str(s: &str) -> Result<IllegalKind, String> {
        Ok(match s {
            "move" => IllegalKind::Move,
            "capture" => IllegalKind::Capture,
            "check" | "king_in_check" => IllegalKind::KingInCheck,
            "press" | "press_without_move" => IllegalKind::PressWithoutMove,
            _ => {
                return Err(format!(
                    "{s:?} is not a kind: move, capture, check or press"
                ));
            }
        })
    }
}

/// An illegal move to play in place of the game's move `ply` (from 1), by the side to move
/// before that ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedIllegal {
    pub ply: usize,
    pub kind: IllegalKind,
}

/// `31:press`, or a bare ply for [`IllegalKind::Move`].
impl FromStr for PlannedIllegal {
    type Err = String;

    fn from_str(item: &str) -> Result<PlannedIllegal, String> {
        let (ply, kind) = item.split_once(':').unwrap_or((item, "move"));
        let ply: usize = ply
            .trim()
            .parse()
            .ok()
            .filter(|p| *p >= 1)
            .ok_or_else(|| format!("{item:?}: a ply is a whole number from 1"))?;
        let kind = kind.trim().parse().map_err(|e| format!("{item:?}: {e}"))?;
        Ok(PlannedIllegal { ply, kind })
    }
}

impl fmt::Display for PlannedIllegal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.ply, self.kind)
    }
}

/// Reads `12,31:press,40:check`: plies, each with a kind (default `move`).
pub fn parse_plan(spec: &str) -> Result<Vec<PlannedIllegal>, String> {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect()
}

/// An illegal move as the script plays it: the truth a recorder is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedIllegal {
    /// The ply of the game's move it was made in place of (from 1).
    pub ply: usize,
    pub color: Color,
    /// The kind played: the one asked for when the position has one, else another
    /// displacement (a plain move, a capture, the king in check, in that order of
    /// preference; a press without a move only when the mover has no illegal displacement).
    pub kind: IllegalKind,
    /// The piece displaced and where to (both `None` for a press without a move).
    pub from: Option<Square>,
    pub to: Option<Square>,
    /// An opponent's piece stood on `to` and was taken off.
    pub capture: bool,
    /// The offender's lever press (script time).
    pub press_ms: u64,
}

impl ScriptedIllegal {
    /// The squares as UCI writes them, `g1g4`; `None` for a press without a move.
    pub fn uci(&self) -> Option<String> {
        Some(format!("{}{}", self.from?, self.to?))
    }
}

/// A clock time the arbiter changed after an illegal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedAdjustment {
    /// The ply of the illegal move.
    pub ply: usize,
    /// Whose clock.
    pub color: Color,
    /// What was set minus what that clock showed at that moment.
    pub delta_ms: i64,
    /// When the arbiter set the clock (script time).
    pub at_ms: u64,
}

/// How the arbiter puts an illegal move right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArbiterConfig {
    /// The time given to the opponent (art. 7.5.5): two minutes in standard play, one in
    /// rapid and blitz (Appendices A.4, B.3).
    pub extra_ms: u64,
}

impl Default for ArbiterConfig {
    fn default() -> Self {
        ArbiterConfig { extra_ms: 120_000 }
    }
}

/// One of the mover's pieces carried from one square to another, as an illegal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Displacement {
    pub from: Square,
    pub to: Square,
    pub piece: Piece,
    /// The opponent's piece that stood on `to`.
    pub captured: Option<Piece>,
    pub kind: IllegalKind,
}

impl Displacement {
    /// The board after it.
    pub fn apply(&self, board: &Board) -> Board {
        let mut b = board.clone();
        b.discard_piece_at(self.from);
        b.set_piece_at(self.to, self.piece);
        b
    }
}

/// A displacement of the mover's pieces of `kind`, picked by `rng` — or, when the position
/// has none of that kind, of another (a plain move, a capture, the king in check, in that
/// order of preference). `None` only when the mover has no illegal displacement at all.
pub(crate) fn pick_displacement(
    pos: &Chess,
    kind: IllegalKind,
    rng: &mut SplitMix64,
) -> Option<Displacement> {
    let all = displacements(pos);
    [
        kind,
        IllegalKind::Move,
        IllegalKind::Capture,
        IllegalKind::KingInCheck,
    ]
    .into_iter()
    .find_map(|k| {
        let of_kind: Vec<&Displacement> = all.iter().filter(|d| d.kind == k).collect();
        (!of_kind.is_empty()).then(|| *of_kind[rng.below(of_kind.len() as u64) as usize])
    })
}

/// Every displacement of one of the mover's pieces whose board no legal move gives, in a
/// fixed order. Left out, so that nothing looks like the start or end of a special move: a
/// pawn onto either back rank (a promotion), a pawn onto the en passant square, a king
/// stepping more than one square (castling); and, so that both kings stay on the board, a
/// king taken. A king moves only by its own rules, into check.
pub(crate) fn displacements(pos: &Chess) -> Vec<Displacement> {
    let board: &Board = pos.board();
    let mover = pos.turn();
    // What the board looks like after each legal move: no displacement may look the same
    // (a Chess960 castling with the king already on its square moves only the rook).
    let legal: Vec<Board> = pos
        .legal_moves()
        .into_iter()
        .map(|m| {
            let mut p = pos.clone();
            p.play_unchecked(m);
            p.board().clone()
        })
        .collect();
    let ep = pos.maybe_ep_square();
    let mut out = Vec::new();
    for from in board.by_color(mover) {
        let Some(piece) = board.piece_at(from) else {
            continue;
        };
        for to in Square::ALL {
            let captured = board.piece_at(to);
            if to == from
                || captured.is_some_and(|c| c.color == mover || c.role == Role::King)
                || (piece.role == Role::Pawn
                    && (to.rank() == Rank::First || to.rank() == Rank::Eighth || Some(to) == ep))
                || (piece.role == Role::King && from.distance(to) > 1)
            {
                continue;
            }
            let kind = if relay_core::incident::follows_piece_rules(
                board,
                from,
                to,
                piece,
                captured.is_some(),
            ) {
                IllegalKind::KingInCheck
            } else if piece.role == Role::King {
                continue;
            } else if captured.is_some() {
                IllegalKind::Capture
            } else {
                IllegalKind::Move
            };
            let d = Displacement {
                from,
                to,
                piece,
                captured,
                kind,
            };
            let after = d.apply(board);
            if legal.contains(&after) {
                continue;
            }
            // By the piece's rules and still not legal: the own king stands in check after it
            // (checked here, not assumed).
            if kind == IllegalKind::KingInCheck && !king_attacked(&after, mover) {
                continue;
            }
            out.push(d);
        }
    }
    out
}

/// `color`'s king is attacked on `board`.
fn king_attacked(board: &Board, color: Color) -> bool {
    board
        .king_of(color)
        .is_some_and(|k| board.attacks_to(k, !color, board.occupied()).any())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_read_with_their_kinds_and_bad_ones_are_named() {
        assert_eq!(
            parse_plan("12, 31:press,40:check,7:capture").expect("reads"),
            vec![
                PlannedIllegal {
                    ply: 12,
                    kind: IllegalKind::Move
                },
                PlannedIllegal {
                    ply: 31,
                    kind: IllegalKind::PressWithoutMove
                },
                PlannedIllegal {
                    ply: 40,
                    kind: IllegalKind::KingInCheck
                },
                PlannedIllegal {
                    ply: 7,
                    kind: IllegalKind::Capture
                },
            ]
        );
        assert!(parse_plan("0").is_err());
        assert!(parse_plan("x:move").is_err());
        assert!(
            parse_plan("5:fly")
                .expect_err("no such kind")
                .contains("fly")
        );
        // Round trips, in the long names too.
        for kind in [
            IllegalKind::Move,
            IllegalKind::Capture,
            IllegalKind::KingInCheck,
            IllegalKind::PressWithoutMove,
        ] {
            let plan = PlannedIllegal { ply: 9, kind };
            assert_eq!(plan.to_string().parse::<PlannedIllegal>(), Ok(plan));
            assert_eq!(kind.name().parse::<IllegalKind>(), Ok(kind));
        }
    }

    #[test]
    fn displacements_in_real_games_are_never_legal_nor_special_moves() {
        let games = relay_core::pgn::read_games(include_str!("../../relay/data/classics.pgn"));
        let mut kinds = std::collections::BTreeSet::new();
        for g in games.into_iter().flatten() {
            let mut pos = g.start.clone();
            for m in &g.moves {
                let mover = pos.turn();
                for d in displacements(&pos) {
                    let after = d.apply(pos.board());
                    let legal = pos.legal_moves().into_iter().any(|m| {
                        let mut p = pos.clone();
                        p.play_unchecked(m);
                        *p.board() == after
                    });
                    assert!(!legal, "{d:?}");
                    assert_eq!(d.piece.color, mover);
                    assert!(after.king_of(Color::White).is_some());
                    assert!(after.king_of(Color::Black).is_some());
                    if d.piece.role == Role::Pawn {
                        assert!(!matches!(d.to.rank(), Rank::First | Rank::Eighth));
                        assert_ne!(Some(d.to), pos.maybe_ep_square());
                    }
                    if d.piece.role == Role::King {
                        assert_eq!(d.from.distance(d.to), 1);
                    }
                    assert_eq!(d.captured.is_some(), pos.board().piece_at(d.to).is_some());
                    match d.kind {
                        IllegalKind::Move => assert!(d.captured.is_none()),
                        IllegalKind::Capture => assert!(d.captured.is_some()),
                        IllegalKind::KingInCheck => assert!(king_attacked(&after, mover)),
                        IllegalKind::PressWithoutMove => panic!("{d:?}"),
                    }
                    kinds.insert(d.kind);
                }
                pos.play_unchecked(m.mv);
            }
        }
        assert_eq!(kinds.len(), 3, "{kinds:?}");
    }

    #[test]
    fn every_displacement_is_of_the_movers_piece_and_not_a_legal_move() {
        let pos = Chess::default();
        let all = displacements(&pos);
        assert!(all.iter().any(|d| d.kind == IllegalKind::Move));
        for d in &all {
            assert_eq!(d.piece.color, Color::White);
            let mut b = pos.board().clone();
            b.discard_piece_at(d.from);
            b.set_piece_at(d.to, d.piece);
            let legal = pos.legal_moves().into_iter().any(|m| {
                let mut p = pos.clone();
                p.play_unchecked(m);
                *p.board() == b
            });
            assert!(!legal, "{d:?}");
        }
        // A pinned knight: moving it by its rules leaves the king in check.
        let pinned: Chess = "4r1k1/8/8/8/8/8/4N3/4K3 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .expect("fen")
            .into_position(shakmaty::CastlingMode::Standard)
            .expect("legal");
        let checks: Vec<_> = displacements(&pinned)
            .into_iter()
            .filter(|d| d.kind == IllegalKind::KingInCheck)
            .collect();
        assert!(checks.iter().any(|d| d.from == Square::E2), "{checks:?}");
    }
}
