//! What the player's tests share: a game from a line of PGN, the bundled and recorded games,
//! and [`replay`], which plays a script on a square→piece map and a clock and checks every
//! promise the script makes, so that each module's tests hold the whole script to them.

use super::model::{Action, CLOCK_START_MS, NoiseConfig, Script, clock_side, color_index};
use super::score::{GameScore, read_games};
use crate::illegal::{IllegalKind, PlannedIllegal, ScriptedIllegal};
use shakmaty::{Board, Chess, Color, Move, Piece, Position, Rank, Role, Square};
use std::path::PathBuf;

pub(super) fn data_dir() -> Option<PathBuf> {
    boards::testdata::shared_data("pgn/clocks")
}

pub(super) fn one_game(pgn: &str) -> GameScore {
    let mut games = read_games(pgn).expect("test PGN reads");
    assert_eq!(games.len(), 1);
    games.remove(0)
}

type Squares = [Option<Piece>; 64];

fn squares_of(board: &Board) -> Squares {
    let mut m = [None; 64];
    for sq in Square::ALL {
        m[sq.to_usize()] = board.piece_at(sq);
    }
    m
}

fn fen_of(m: &Squares) -> String {
    let mut b = Board::empty();
    for sq in Square::ALL {
        if let Some(p) = m[sq.to_usize()] {
            b.set_piece_at(sq, p);
        }
    }
    b.board_fen().to_string()
}

#[derive(Debug, Default)]
pub(super) struct Replay {
    pub(super) honoured: usize,
    pub(super) with_clk: usize,
    pub(super) moves: usize,
    /// Not honoured because the recorded clock is below the increment (e.g. 0:00:00).
    pub(super) below_increment: usize,
    /// … because it is higher than the previous reading plus increment and bonus allow.
    pub(super) unreachable: usize,
    /// … because it leaves (almost) no time to move the pieces.
    pub(super) too_fast: usize,
}

/// An illegal move between its press and the arbiter's clock setting, as replayed.
struct OpenIncident {
    /// The offender's clock just before the false press.
    own_before: u64,
    color: Color,
    stopped: bool,
}

/// The board just before an illegal press, against the position the offender was to move
/// in: one of their pieces displaced so that no legal move gives that board (or nothing
/// moved), both kings still there, as the script says it played it.
fn check_false_press(before: &Chess, map: &Squares, x: &ScriptedIllegal) {
    let mover = before.turn();
    assert_eq!(x.color, mover, "ply {}: the mover errs", x.ply);
    let was = squares_of(before.board());
    let changed: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|sq| was[sq.to_usize()] != map[sq.to_usize()])
        .collect();
    let (Some(from), Some(to)) = (x.from, x.to) else {
        assert_eq!(x.kind, IllegalKind::PressWithoutMove);
        assert!(
            changed.is_empty(),
            "ply {}: nothing moved: {changed:?}",
            x.ply
        );
        return;
    };
    assert_eq!(
        changed.len(),
        2,
        "ply {}: one displacement: {changed:?}",
        x.ply
    );
    assert!(changed.contains(&from) && changed.contains(&to));
    let piece = was[from.to_usize()].expect("a piece on from");
    assert_eq!(piece.color, mover);
    assert_eq!(map[from.to_usize()], None);
    assert_eq!(map[to.to_usize()], Some(piece));
    let taken = was[to.to_usize()];
    assert_eq!(x.capture, taken.is_some());
    assert!(taken.is_none_or(|t| t.color != mover && t.role != Role::King));
    let mut board = before.board().clone();
    board.discard_piece_at(from);
    board.set_piece_at(to, piece);
    assert!(board.king_of(Color::White).is_some() && board.king_of(Color::Black).is_some());
    let legal = before.legal_moves().into_iter().any(|m| {
        let mut p = before.clone();
        p.play_unchecked(m);
        *p.board() == board
    });
    assert!(!legal, "ply {}: {from}{to} is a legal move", x.ply);
    assert!(piece.role != Role::Pawn || !matches!(to.rank(), Rank::First | Rank::Eighth));
    let own_king_attacked = board
        .king_of(mover)
        .is_some_and(|k| board.attacks_to(k, !mover, board.occupied()).any());
    match x.kind {
        IllegalKind::Move => assert!(!x.capture),
        IllegalKind::Capture => assert!(x.capture),
        IllegalKind::KingInCheck => {
            // By the piece's rules: the same move on the board, legal but for the king.
            let mv = Move::Normal {
                role: piece.role,
                from,
                capture: taken.map(|t| t.role),
                to,
                promotion: None,
            };
            assert!(!before.is_legal(mv) && own_king_attacked, "ply {}", x.ply);
        }
        IllegalKind::PressWithoutMove => panic!("ply {}: a press without a move moved", x.ply),
    }
}

/// Plays the script on a square→piece map and a clock, checking every promise the script
/// makes (illegal moves and the arbiter's corrections included); returns the clock
/// statistics.
pub(super) fn replay(game: &GameScore, s: &Script, noise: &NoiseConfig) -> Replay {
    let mut map = squares_of(game.start.board());
    let mut afters = Vec::new();
    let mut befores = Vec::new();
    let mut pos = game.start.clone();
    for m in &game.moves {
        befores.push(pos.clone());
        pos.play_unchecked(m.mv);
        afters.push(squares_of(pos.board()));
    }
    let mut incidents = s.illegal.iter();
    let mut adjustments = s.adjustments.iter();
    let mut open: Option<OpenIncident> = None;
    assert_eq!(s.moves.len(), game.moves.len());
    let mut clock = s.new_clock();
    assert_eq!(clock.is_some(), game.time_control.is_some());
    let hi = noise.handling_ms.0.max(noise.handling_ms.1);
    let mut last_at: Option<u64> = None;
    let mut i = 0; // the move being played
    let mut turn = game.start.turn();
    let mut last_physical: Option<u64> = None;
    // A game taken up in the middle starts with the moves made before the cut on the clock.
    let mut moves_done = s.clocks_at_start.map_or([0u32; 2], |c| c.moves_done);
    let mut stats = Replay {
        moves: game.moves.len(),
        ..Replay::default()
    };
    let finish_move = |i: &mut usize, map: &Squares, turn: &mut Color| {
        assert_eq!(
            fen_of(map),
            fen_of(&afters[*i]),
            "board after move {} ({})",
            *i + 1,
            game.moves[*i].san
        );
        *i += 1;
        *turn = turn.other();
    };
    for ta in &s.actions {
        if let Some(t) = last_at {
            assert!(ta.at_ms > t, "times strictly increase: {ta:?} after {t}");
        }
        last_at = Some(ta.at_ms);
        // Without a clock a move is done at its press time.
        while clock.is_none() && i < s.moves.len() && ta.at_ms > s.moves[i].press_ms {
            finish_move(&mut i, &map, &mut turn);
            last_physical = None;
        }
        match ta.action {
            Action::StartClock => {
                assert_eq!(ta.at_ms, CLOCK_START_MS);
                clock.as_mut().expect("clock").start(ta.at_ms);
            }
            Action::Lift(sq) => {
                assert!(map[sq.to_usize()].is_some(), "lift from empty {sq}");
                map[sq.to_usize()] = None;
            }
            Action::Place(sq, piece) => map[sq.to_usize()] = Some(piece),
            Action::PressLever(color) if ta.at_ms != s.moves[i].press_ms => {
                // A press that is not the move's: an illegal move's.
                assert_eq!(color, turn, "the mover presses");
                assert!(open.is_none(), "one illegal move at a time");
                let x = incidents.next().expect("an illegal press is listed");
                assert_eq!((x.ply, x.press_ms), (i + 1, ta.at_ms));
                check_false_press(&befores[i], &map, x);
                if let Some(t) = last_physical {
                    assert!(ta.at_ms - t <= hi, "press within the handling gap");
                }
                let c = clock.as_mut().expect("an illegal press needs a clock");
                let side = clock_side(color);
                let own_before = c.remaining_ms(side, ta.at_ms);
                assert!(c.press(side, ta.at_ms), "the false press is taken");
                open = Some(OpenIncident {
                    own_before,
                    color,
                    stopped: false,
                });
            }
            Action::PressLever(color) => {
                assert_eq!(color, turn, "the mover presses");
                assert!(open.is_none(), "the clock is set before the move");
                assert_eq!(ta.at_ms, s.moves[i].press_ms);
                if let Some(t) = last_physical {
                    assert!(ta.at_ms - t <= hi, "press within the handling gap");
                }
                let side = clock_side(color);
                let c = clock.as_mut().expect("clock");
                let prev_press = if i == 0 {
                    CLOCK_START_MS
                } else {
                    s.moves[i - 1].press_ms
                };
                let before = c.remaining_ms(side, prev_press);
                let n = moves_done[color_index(color)] + 1;
                moves_done[color_index(color)] = n;
                let gain = c.time_control().added_after_move(n).total_ms();
                assert!(c.press(side, ta.at_ms), "press accepted at move {}", i + 1);
                let remaining = c.remaining_ms(side, ta.at_ms);
                assert_eq!(c.moves_done(side), n, "moves counted by the clock");
                assert_eq!(
                    Some(remaining),
                    s.moves[i].clk_ms,
                    "the script's clock after move {}",
                    i + 1
                );
                if let Some(clk) = game.moves[i].clk_ms {
                    stats.with_clk += 1;
                    if s.moves[i].clock_honoured {
                        assert_eq!(remaining, clk, "clock after move {}", i + 1);
                        stats.honoured += 1;
                    } else if clk <= gain {
                        stats.below_increment += 1;
                    } else if clk - gain >= before {
                        stats.unreachable += 1;
                    } else {
                        stats.too_fast += 1;
                    }
                } else {
                    assert!(!s.moves[i].clock_honoured);
                }
                finish_move(&mut i, &map, &mut turn);
            }
            Action::StopClock => {
                let o = open.as_mut().expect("stopped after an illegal press");
                assert!(!o.stopped);
                o.stopped = true;
                clock.as_mut().expect("clock").stop(ta.at_ms);
            }
            Action::SetClock {
                white_ms,
                black_ms,
                white_moves,
                black_moves,
                run,
            } => {
                let o = open.take().expect("set after an illegal press");
                assert!(o.stopped, "stopped first");
                // The position is back as it was before the ply.
                assert_eq!(
                    fen_of(&map),
                    fen_of(&squares_of(befores[i].board())),
                    "board put back at ply {}",
                    i + 1
                );
                assert_eq!(run, Some(o.color), "the offender's clock runs");
                // The offender's clock shows what it did before the false press, its move
                // count the moves really made.
                let own = if o.color == Color::White {
                    white_ms
                } else {
                    black_ms
                };
                assert_eq!(own, o.own_before);
                assert_eq!([white_moves, black_moves], moves_done);
                let c = clock.as_mut().expect("clock");
                // Every change listed (the opponent's first), as set against what was
                // shown.
                for color in [o.color.other(), o.color] {
                    let set = color.fold_wb(white_ms, black_ms);
                    let shown = c.remaining_ms(clock_side(color), ta.at_ms);
                    if set != shown {
                        let a = adjustments.next().expect("the change is listed");
                        assert_eq!(
                            (a.ply, a.color, a.delta_ms, a.at_ms),
                            (i + 1, color, set as i64 - shown as i64, ta.at_ms)
                        );
                    }
                }
                c.arbiter_set(
                    white_ms,
                    black_ms,
                    run.map(clock_side),
                    [white_moves, black_moves],
                    ta.at_ms,
                );
            }
        }
        if matches!(ta.action, Action::Lift(_) | Action::Place(..)) {
            if let Some(t) = last_physical {
                assert!(ta.at_ms - t <= hi, "transient states stay short");
            }
            let prev_press = if i == 0 {
                CLOCK_START_MS
            } else {
                s.moves[i - 1].press_ms
            };
            assert!(ta.at_ms > prev_press && ta.at_ms < s.moves[i].press_ms);
            last_physical = Some(ta.at_ms);
        }
        if matches!(
            ta.action,
            Action::PressLever(_) | Action::StopClock | Action::SetClock { .. }
        ) {
            last_physical = None;
        }
    }
    assert!(open.is_none(), "every illegal move put right");
    assert!(
        incidents.next().is_none(),
        "every illegal move listed was played"
    );
    assert!(
        adjustments.next().is_none(),
        "every clock change listed was made"
    );
    while i < s.moves.len() {
        finish_move(&mut i, &map, &mut turn);
    }
    assert_eq!(
        fen_of(&map),
        fen_of(&squares_of(game.final_position().board()))
    );
    if clock.is_none() {
        assert!(
            s.actions
                .iter()
                .all(|a| matches!(a.action, Action::Lift(_) | Action::Place(..)))
        );
    }
    stats
}

pub(super) fn moves_of(s: &Script) -> Vec<Vec<Action>> {
    // The physical actions of each move (split at the press times).
    let mut out = vec![Vec::new(); s.moves.len()];
    for ta in &s.actions {
        if let Some(i) = s.moves.iter().position(|m| ta.at_ms <= m.press_ms)
            && matches!(ta.action, Action::Lift(_) | Action::Place(..))
        {
            out[i].push(ta.action);
        }
    }
    out
}

/// The physical actions of each real move (after the arbiter's clock setting, if any).
pub(super) fn moves_of_real(s: &Script) -> Vec<Vec<Action>> {
    let mut out = vec![Vec::new(); s.moves.len()];
    let mut i = 0;
    for ta in &s.actions {
        match ta.action {
            Action::SetClock { .. } => out[i].clear(),
            Action::PressLever(_) if ta.at_ms == s.moves[i].press_ms => i += 1,
            Action::PressLever(_) => {}
            Action::Lift(_) | Action::Place(..) => out[i].push(ta.action),
            Action::StartClock | Action::StopClock => {}
        }
    }
    out
}

pub(super) const ITALIAN: &str = "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n\
    1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 5. d3 O-O *";

/// The bundled classics (no clocks recorded), on a 90+30 clock.
pub(super) fn classics() -> Vec<GameScore> {
    let mut games =
        read_games(include_str!("../../../relay/data/classics.pgn")).expect("classics read");
    for g in &mut games {
        g.time_control = Some("5400+30".parse().expect("tc"));
    }
    games
}

pub(super) fn planned(ply: usize, kind: IllegalKind) -> PlannedIllegal {
    PlannedIllegal { ply, kind }
}

/// The position before `ply` (from 1).
pub(super) fn before_ply(game: &GameScore, ply: usize) -> Chess {
    let mut p = game.start.clone();
    for m in &game.moves[..ply - 1] {
        p.play_unchecked(m.mv);
    }
    p
}
