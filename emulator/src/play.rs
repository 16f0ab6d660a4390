//! Plays a [`Script`] on one board of an emulated line, in the line's virtual time.

use super::board::{EmulatedBoard, Outgoing};
use super::clock::ChessClock;
use super::line::Line;
use super::player::{Action, Script};
use boards::protocol::{ClockSide, DgtSquare, Orientation, PieceCode};
use shakmaty::Color;
use std::sync::atomic::{AtomicBool, Ordering};

/// How a board stands on its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Which clock side belongs to White.
    pub white_clock: ClockSide,
    /// How the board lies (rotated = White sits at the far side from the connector).
    pub orientation: Orientation,
}

impl Table {
    /// Tables as they differ in a hall, picked by `seed`: White's clock on either side, and
    /// every third board turned round.
    pub fn varied(seed: u64) -> Table {
        Table {
            white_clock: if seed.is_multiple_of(2) {
                ClockSide::Right
            } else {
                ClockSide::Left
            },
            orientation: if seed % 3 == 2 {
                Orientation::Rotated
            } else {
                Orientation::Normal
            },
        }
    }

    /// The clock for `script` on this table: its time control, the first mover's lever up.
    pub fn clock_for(&self, script: &Script) -> Option<ChessClock> {
        script.clock_with_white_on(self.white_clock)
    }
}

impl Default for Table {
    fn default() -> Self {
        Table {
            white_clock: ClockSide::Left,
            orientation: Orientation::Normal,
        }
    }
}

/// Applies one scripted action to a board at virtual time `t`.
fn apply(b: &mut EmulatedBoard, action: Action, table: Table, t: u64) -> Vec<Outgoing> {
    let dgt = |sq| DgtSquare::from_square(sq, table.orientation);
    let side_of = |color: Color| {
        if color == Color::White {
            table.white_clock
        } else {
            table.white_clock.other()
        }
    };
    match action {
        Action::StartClock => b.start_clock(t),
        Action::Lift(sq) => b.set_square(dgt(sq), PieceCode::Empty, t),
        Action::Place(sq, piece) => b.set_square(dgt(sq), PieceCode::Piece(piece), t),
        Action::PressLever(color) => b.press_lever(side_of(color), t),
        Action::StopClock => b.stop_clock(t),
        Action::SetClock {
            white_ms,
            black_ms,
            white_moves,
            black_moves,
            run,
        } => {
            // (time, moves) of the left and right sides.
            let (left, right) = if table.white_clock == ClockSide::Left {
                ((white_ms, white_moves), (black_ms, black_moves))
            } else {
                ((black_ms, black_moves), (white_ms, white_moves))
            };
            b.set_clock(left.0, right.0, run.map(side_of), [left.1, right.1], t)
        }
    }
}

/// Plays `script` on `board` without any I/O, as fast as the CPU allows: returns every byte
/// the board sends with its virtual send time. The host's `startup` bytes are received first
/// (at time 0); the clock is looked at every `tick_ms` so its readings flow as they would.
/// Tests and benchmarks use this to feed the decoder and recorder exactly what a line carries.
pub fn simulate(
    board: &mut EmulatedBoard,
    startup: &[u8],
    start: &shakmaty::Board,
    script: &Script,
    table: Table,
    tick_ms: u64,
) -> Vec<(u64, Vec<u8>)> {
    let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut push = |t: u64, o: Vec<Outgoing>| {
        for x in o {
            out.push((t + x.delay_ms, x.bytes));
        }
    };
    push(0, board.receive(startup, 0));
    push(0, board.set_position(start, table.orientation, 0));
    let tick_ms = tick_ms.max(1);
    let mut next_tick = tick_ms;
    let end = script.actions.last().map_or(0, |a| a.at_ms) + 3_000;
    for step in &script.actions {
        while next_tick < step.at_ms {
            push(next_tick, board.tick(next_tick));
            next_tick += tick_ms;
        }
        push(step.at_ms, apply(board, step.action, table, step.at_ms));
    }
    while next_tick <= end {
        push(next_tick, board.tick(next_tick));
        next_tick += tick_ms;
    }
    out.sort_by_key(|(t, _)| *t);
    out
}

/// Virtual time between setting up the position and the script's start.
pub const SETUP_PAUSE_MS: u64 = 3_000;

/// Sets up `start` on board `index` and plays `script` on it, returning when the script is done
/// or `stop` is set. Each action happens at exactly its own virtual time, so the clock shows
/// the times the script was made for.
///
/// `fast_forward`: when given, waits longer than this (virtual ms) are skipped by jumping the
/// line's clock, so long thinks pass at once while the hands still move at the line's speed.
/// Only for a line that carries this one board (the jump moves every board's time).
pub fn play(
    line: &Line,
    index: usize,
    start: &shakmaty::Board,
    script: &Script,
    table: Table,
    fast_forward: Option<u64>,
    stop: &AtomicBool,
) {
    let clock = line.clock();
    let setup = clock.now_ms();
    line.act(index, |b| {
        ((), b.set_position(start, table.orientation, setup))
    });
    // The set-up position stands a while before the game starts, as in a hall: long enough
    // for any reader to see it still.
    // At high speed the pause is stretched to a real second at least: a reader judges a
    // board only after it has been still for a few hundred real milliseconds.
    let pause = SETUP_PAUSE_MS.max((clock.speed() * 1000.0) as u64);
    let base = setup + pause;
    for step in &script.actions {
        let t = base + step.at_ms;
        if let Some(idle) = fast_forward {
            let now = clock.now_ms();
            if t > now + idle {
                clock.jump(t - now - idle);
            }
        }
        clock.sleep_until(t, stop);
        if stop.load(Ordering::Relaxed) {
            return;
        }
        line.act(index, |b| ((), apply(b, step.action, table, t)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::BoardIdentity;
    use crate::player::{IllegalKind, PlannedIllegal, ScriptOptions, read_games, script};
    use shakmaty::Position;

    #[test]
    fn the_arbiters_setting_lands_on_each_colours_side_of_either_table() {
        let mut games = read_games(
            "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 *",
        )
        .expect("reads");
        let game = games.remove(0);
        let plans = [
            PlannedIllegal {
                ply: 3,
                kind: IllegalKind::Capture,
            },
            PlannedIllegal {
                ply: 6,
                kind: IllegalKind::PressWithoutMove,
            },
        ];
        let s = script(&game, 4, &ScriptOptions::default().with_illegal(&plans));
        assert_eq!(s.illegal.len(), 2);
        for white_clock in [ClockSide::Left, ClockSide::Right] {
            let table = Table {
                white_clock,
                orientation: Orientation::Rotated,
            };
            let mut b = EmulatedBoard::new(BoardIdentity::from_number(3), table.clock_for(&s));
            simulate(&mut b, &[], game.start.board(), &s, table, 100);
            // The board's clock is the script's: each colour's last press left what the
            // script says, on that colour's side, and counted only the real moves.
            let c = b.clock().expect("clock");
            let last = s.moves.len() - 1;
            for (i, color) in [(last, Color::White), (last - 1, Color::Black)] {
                let side = if color == Color::White {
                    white_clock
                } else {
                    white_clock.other()
                };
                assert_eq!(
                    Some(c.remaining_ms(side, s.moves[last].press_ms)),
                    s.moves[i].clk_ms,
                    "{color:?} on the {side:?}"
                );
                assert_eq!(
                    c.moves_done(side),
                    if color == Color::White { 4 } else { 3 }
                );
            }
        }
    }
}
