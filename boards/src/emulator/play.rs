//! Plays a [`Script`] on one board of an emulated line, in the line's virtual time.

use super::line::Line;
use super::player::{Action, Script};
use crate::protocol::{ClockSide, DgtSquare, Orientation, PieceCode};
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

impl Default for Table {
    fn default() -> Self {
        Table {
            white_clock: ClockSide::Left,
            orientation: Orientation::Normal,
        }
    }
}

/// Sets up `start` on board `index` and plays `script` on it, returning when the script is done
/// or `stop` is set. Each action happens at exactly its own virtual time, so the clock shows
/// the times the script was made for.
pub fn play(
    line: &Line,
    index: usize,
    start: &shakmaty::Board,
    script: &Script,
    table: Table,
    stop: &AtomicBool,
) {
    let clock = line.clock();
    let base = clock.now_ms();
    line.act(index, |b| {
        ((), b.set_position(start, table.orientation, base))
    });
    for step in &script.actions {
        let t = base + step.at_ms;
        clock.sleep_until(t, stop);
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let dgt = |sq| DgtSquare::from_square(sq, table.orientation);
        line.act(index, |b| {
            let out = match step.action {
                Action::StartClock => b.start_clock(t),
                Action::Lift(sq) => b.set_square(dgt(sq), PieceCode::Empty, t),
                Action::Place(sq, piece) => b.set_square(dgt(sq), PieceCode::Piece(piece), t),
                Action::PressLever(color) => {
                    let side = if color == Color::White {
                        table.white_clock
                    } else {
                        table.white_clock.other()
                    };
                    b.press_lever(side, t)
                }
            };
            ((), out)
        });
    }
}
