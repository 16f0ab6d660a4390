//! A lever press by the side to move is the press that ends their move, unless no move comes
//! of it: then it completed an illegal move or was a press without a move. Which one is known
//! only once the board has been read and judged, so each such press waits here until then.

use super::clocks::PressCheck;
use super::outcome::Outcome;
use super::state::Recorder;
use crate::incident::{IllegalKind, judge_press};
use shakmaty::{Color, Position};

/// How long after a press by the side to move (and the board still) the press is judged: a
/// move made with it has been read by then, a single board's field updates coming before
/// the clock reading that shows the press, a bus board's log together with it.
const PRESS_JUDGED_AFTER_MS: u64 = 1_500;

impl Recorder {
    /// A lever press was just added as `presses[index]`: when it is the side to move's, it
    /// ends the move being made — or, if no move comes of it, it completed an illegal move
    /// or was a press without a move. Which one is known only once the board has been read
    /// and judged, so it waits (see [`Recorder::confirm_presses`]).
    pub(super) fn note_press(&mut self, index: usize, now_ms: u64) {
        let Some(p) = self.clocks.presses.get(index) else {
            return;
        };
        let ok = !self.phase.is_over()
            && self.clocks.gap.is_none()
            && !self.readings_missed
            && self.orientation.is_some();
        let (Some(white), Some(pos)) = (self.clocks.white_side_sure(), self.positions.last())
        else {
            return;
        };
        let color = if p.side == white {
            Color::White
        } else {
            Color::Black
        };
        if !ok || self.positions.len() < 2 {
            return;
        }
        // The presser is to move; or the opponent's move is on the board but not judged yet
        // (a press within the settle time after the opponent's): then the presser is to move
        // after it, and the check waits for that move.
        let ply = if color == pos.turn() {
            self.positions.len()
        } else if self.awaiting_judgement() {
            self.positions.len() + 1
        } else {
            return;
        };
        self.clocks.checks.push(PressCheck {
            press: index,
            at_ms: now_ms,
            board: p.board.unwrap_or(self.board),
            ply,
            color,
        });
    }

    /// Judges the presses waiting in `checks` whose time has come — the board read and
    /// still, a while after the press (`now_ms`; `None`: only those below) — or whose move has
    /// been made meanwhile (the game has a move at the check's ply: a fast player's next move
    /// must not take the press of their illegal one). The board at the press, against the
    /// position the presser was to move in, says what the press was: a legal move (or
    /// anything one displacement does not explain) makes it an ordinary press, left for the
    /// move it ends; one displacement that is not a legal move, or no move at all, is an
    /// illegal move on the record, and its press ends no move.
    pub(super) fn confirm_presses(&mut self, now_ms: Option<u64>) -> Vec<Outcome> {
        let mut out = Vec::new();
        let settled = !self.awaiting_judgement() || now_ms == Some(u64::MAX);
        let checks = std::mem::take(&mut self.clocks.checks);
        let orientation = self.orientation.unwrap_or_default();
        for c in checks {
            let made = self.positions.len() > c.ply;
            let due = settled
                && now_ms.is_some_and(|now| now >= c.at_ms.saturating_add(PRESS_JUDGED_AFTER_MS));
            if !made && !due {
                self.clocks.checks.push(c);
                continue;
            }
            let Some(press) = self.clocks.presses.get(c.press) else {
                continue;
            };
            // A move took the press, or the game went back before it (a takeback, a new
            // game), or it ended.
            if press.used || self.positions.len() < c.ply || (self.phase.is_over() && !made) {
                continue;
            }
            let Some(pos) = self
                .positions
                .get(c.ply - 1)
                .filter(|p| p.turn() == c.color)
            else {
                continue;
            };
            let at_press = press.board.unwrap_or(c.board).to_board(orientation);
            let Some((kind, seen)) = judge_press(pos, &at_press) else {
                continue;
            };
            // A press without a move must still be one now that the board has settled (when
            // no move came since): a board read late (the press seen before the squares of
            // its move) would show the old position at the press.
            if kind == IllegalKind::PressWithoutMove
                && !made
                && self.board_as_read() != *pos.board()
            {
                continue;
            }
            if let Some(p) = self.clocks.presses.get_mut(c.press) {
                p.used = true;
            }
            out.push(Outcome::IllegalMove {
                ply: c.ply,
                color: c.color.into(),
                kind,
                uci: seen.map(|d| d.uci()),
                piece: seen.map(|d| d.piece.char()),
                captured: seen.and_then(|d| d.captured.map(|p| p.char())),
                clock_pressed: true,
            });
        }
        out
    }
}
