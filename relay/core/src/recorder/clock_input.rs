//! Clock readings and a bus board's clock records taken in: the lever presses they show,
//! the votes for which clock side is White, a fallen flag, clock corrections made by hand,
//! and the PGN clock tags.

use super::clocks::{Press, START_VOTE, side_index};
use super::outcome::{ColorName, Outcome};
use super::state::Recorder;
use crate::clock_time::ClockTime;
use boards::protocol::{ClockReading, ClockSide};
use shakmaty::{Color, Position};

/// The least clock change that a reading-to-reading comparison reports as a correction: the
/// clock shows whole seconds, so a second either way is rounding.
const ADJUSTMENT_MIN_MS: i64 = 2_000;

impl Recorder {
    /// A clock reading received at `now_ms`: a correction made by hand, evidence for which
    /// side is White, a lever press, a fallen flag, and the clock as it now stands.
    pub(super) fn on_clock(&mut self, r: &ClockReading, now_ms: u64) -> Vec<Outcome> {
        if r.status.no_clock {
            return Vec::new();
        }
        let prev = self.take_reading(r, now_ms);
        self.vote_by_reading(r, prev);
        self.press_by_reading(r, prev, now_ms);
        let mut out = self.flag_fell(r);
        out.extend(self.assign_clocks());
        out.extend(self.clock_shown(r));
        out
    }

    /// Makes `r` the last reading; returns the one before it. A clock correction between
    /// the two is held (see `held`), and the reading is the first after a gap or the one a
    /// game's start times are read from when it is.
    fn take_reading(&mut self, r: &ClockReading, now_ms: u64) -> Option<ClockReading> {
        let prev = self.clocks.last.replace(*r);
        let elapsed = self
            .clocks
            .last_at_ms
            .replace(now_ms)
            .map(|t| now_ms.saturating_sub(t));
        if let (Some(prev), Some(elapsed)) = (prev, elapsed) {
            let adjustments = self.adjustments(&prev, r, elapsed);
            self.held.extend(adjustments);
        }
        self.clocks.last_is_fresh = true;
        if let Some(gap) = self.clocks.gap.as_mut()
            && gap.first.is_none()
        {
            gap.first = Some(*r);
            gap.floor = self.clocks.presses.len();
        }
        if self.clocks.start_reading.is_none() && self.game.is_some() && !self.clocks.joined_late {
            // The first reading of a game, or the one standing when it began.
            self.clocks.start_reading = Some(prev.unwrap_or(*r));
        }
        prev
    }

    /// What the reading `r` (after `prev`) says of which clock side is White.
    fn vote_by_reading(&mut self, r: &ClockReading, prev: Option<ClockReading>) {
        let running = r.running_side();
        let prev_running = prev.and_then(|p| p.running_side());
        // Votes: while a side runs, it is usually the side to move. Not at the reading that
        // shows a press: the board of the move just made may not have settled yet.
        if let (Some(s), Some(pos)) = (running, self.positions.last())
            && !self.phase.is_over()
            && running == prev_running
            // Moves on the board not judged yet (a bus poll brings several at once) would make
            // the game's side to move a stale one.
            && !self.awaiting_judgement()
        {
            let white = pos.turn() == Color::White;
            self.clocks.vote(s, white, 1);
        }
        // Strong evidence at the start of a game: the clock is started for the side to move,
        // and the first press of the game is that side's.
        let start_turn = self.positions.first().map(|p| p.turn());
        // (Not after a gap: the first reading then shows whoever's turn it is by now.)
        let at_start = self.positions.len() <= 2
            && self.clocks.presses.is_empty()
            && self.clocks.gap.is_none();
        let white_starts = start_turn == Some(Color::White);
        match (prev_running, running) {
            (None, Some(y)) if at_start => self.clocks.vote(y, white_starts, START_VOTE),
            (Some(x), Some(y)) if x != y && at_start => {
                self.clocks.vote(x, white_starts, START_VOTE)
            }
            _ => {}
        }
    }

    /// The lever press the reading `r` shows (the running side changed since `prev`), and
    /// when the turn it began started.
    fn press_by_reading(&mut self, r: &ClockReading, prev: Option<ClockReading>, now_ms: u64) {
        let running = r.running_side();
        let prev_running = prev.and_then(|p| p.running_side());
        match (prev_running, running) {
            (Some(x), Some(y)) if x != y => {
                let before_ms = prev.map(|p| u64::from(p.side(x).seconds) * 1000);
                self.clocks.presses.push(Press {
                    side: x,
                    after_ms: u64::from(r.side(x).seconds) * 1000,
                    before_ms,
                    turn_start_ms: self.clocks.turn_start[side_index(x)],
                    used: false,
                    board: None,
                });
                self.note_press(self.clocks.presses.len() - 1, now_ms);
                self.clocks.turn_start[side_index(y)] = Some(u64::from(r.side(y).seconds) * 1000);
            }
            // (Not the first reading after a gap: that turn began unseen.)
            (None, Some(y))
                if self.clocks.turn_start[side_index(y)].is_none() && self.clocks.gap.is_none() =>
            {
                self.clocks.turn_start[side_index(y)] = Some(u64::from(r.side(y).seconds) * 1000);
            }
            _ => {}
        }
    }

    /// The clock as it stands after the reading `r`: the clock tags, and the running clock
    /// (held back behind clock corrections held), which releases the corrections once play
    /// goes on from the game's position.
    fn clock_shown(&mut self, r: &ClockReading) -> Vec<Outcome> {
        let mut out = Vec::new();
        if let Some((white, black, running)) = self.running_clock() {
            self.clock_tags(white, black, running);
            let clock = Outcome::Clock {
                white,
                black,
                running: running.map(ColorName::from),
            };
            if self.held.is_empty() {
                out.push(clock);
            } else {
                self.held_clock = Some(clock);
            }
        }
        // Play goes on from the game's position: the corrections were this game's.
        if !self.held.is_empty() && r.running_side().is_some() && self.shows_game() {
            out.extend(self.release_held());
        }
        out
    }

    /// A clock record from a bus board's log: a lever press halted `side` at `seconds`. It is
    /// the press itself, in its place among the board's changes, so several presses between two
    /// clock polls are each seen; the readings that follow are not taken for another press.
    pub(super) fn on_clock_record(
        &mut self,
        side: ClockSide,
        seconds: u32,
        now_ms: u64,
    ) -> Vec<Outcome> {
        let after_ms = u64::from(seconds) * 1000;
        let other = side.other();
        // The reading taken just after this press, before its record came (the poll's clock
        // request raced the press): the press is already known, now it gets its board.
        if let Some(p) = self.clocks.presses.last_mut()
            && p.board.is_none()
            && p.side == side
            && p.after_ms.abs_diff(after_ms) <= 1_000
            && self
                .clocks
                .last
                .is_some_and(|r| r.running_side() == Some(other))
        {
            p.board = Some(self.board);
            return self.assign_clocks();
        }
        let last = self.clocks.last;
        let before_ms = last
            .filter(|r| self.clocks.last_is_fresh && r.running_side() == Some(side))
            .map(|r| u64::from(r.side(side).seconds) * 1000);
        self.clocks.presses.push(Press {
            side,
            after_ms,
            before_ms,
            turn_start_ms: self.clocks.turn_start[side_index(side)],
            used: false,
            board: Some(self.board),
        });
        self.note_press(self.clocks.presses.len() - 1, now_ms);
        // The other side's turn starts at the time its own last press left it.
        let other_time = self
            .clocks
            .presses
            .iter()
            .rev()
            .find(|p| p.side == other)
            .map(|p| p.after_ms)
            .or(last.map(|r| u64::from(r.side(other).seconds) * 1000));
        self.clocks.turn_start[side_index(other)] = other_time;
        // The last reading now stands for the clock after this press, so the next reading
        // (which shows the other side running) is not counted as a press again.
        if let Some(r) = self.clocks.last.as_mut()
            && r.running_side().is_some()
        {
            let t = if side == ClockSide::Left {
                &mut r.left
            } else {
                &mut r.right
            };
            t.seconds = seconds;
            r.status.lever_right_high = other == ClockSide::Right;
            r.status.turn_left = other == ClockSide::Left;
            r.status.turn_right = other == ClockSide::Right;
        }
        self.clocks.last_is_fresh = false;
        self.assign_clocks()
    }

    /// Clock corrections between two readings `elapsed` ms apart: a side whose time rose
    /// without its own lever press (the increment and a period's bonus come with the press),
    /// or fell by more than it ran. Only while a game with moves goes on (setting the clocks
    /// before a game is not a correction) and which side is White is known.
    fn adjustments(&mut self, prev: &ClockReading, r: &ClockReading, elapsed: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(white) = self.clocks.white_side_sure() else {
            return out;
        };
        if self.phase.is_over() || self.clocks.gap.is_some() || self.positions.len() < 2 {
            return out;
        }
        let (was, now) = (prev.running_side(), r.running_side());
        let elapsed = i64::try_from(elapsed).unwrap_or(i64::MAX);
        for side in [ClockSide::Left, ClockSide::Right] {
            let pressed = was == Some(side) && now.is_some() && now != Some(side);
            // A flag shown stops the clock: nothing to compare.
            if pressed || r.side(side).flag_fallen || prev.side(side).flag_fallen {
                continue;
            }
            // Running in both readings, it ran all the time between them; started between
            // them, it ran for under a second (a running clock is read every second), which
            // the display's rounding covers: a time set at the start shows as it was set.
            let ran = if was == Some(side) && now == Some(side) {
                elapsed
            } else {
                0
            };
            let change =
                (i64::from(r.side(side).seconds) - i64::from(prev.side(side).seconds)) * 1000;
            let delta = if change > 1_000 {
                change
            } else if change < -(ran + 2_000) {
                change + ran
            } else {
                continue;
            };
            if delta.abs() < ADJUSTMENT_MIN_MS {
                continue;
            }
            // Whole seconds, as the clock shows them.
            let delta = (delta as f64 / 1000.0).round() as i64 * 1000;
            let color = if side == white {
                ColorName::White
            } else {
                ColorName::Black
            };
            out.push(Outcome::ClockAdjustment {
                ply: self.positions.len(),
                color,
                delta_ms: delta,
            });
        }
        out
    }

    /// Keeps the PGN clock tags (PGN clock supplement §5, §6): `[WhiteClock]`/`[BlackClock]`
    /// with the times at the start of play, and `[Clock]` with the running clock while the
    /// game goes on.
    fn clock_tags(&mut self, white: ClockTime, black: ClockTime, running: Option<Color>) {
        let finished = self.phase.is_over();
        let start = self.clocks.start_reading;
        let white_side = self.clocks.white_side();
        let to_move = self.positions.last().map_or(Color::White, |p| p.turn());
        let Some(g) = self.game.as_mut() else { return };
        if g.tags.get("WhiteClock").is_none()
            && let (Some(r), Some(w)) = (start, white_side)
        {
            g.tags.set(
                "WhiteClock",
                ClockTime::from_secs(u64::from(r.side(w).seconds)).to_string(),
            );
            g.tags.set(
                "BlackClock",
                ClockTime::from_secs(u64::from(r.side(w.other()).seconds)).to_string(),
            );
        }
        if finished {
            g.tags.remove("Clock");
            return;
        }
        let value = match running {
            Some(Color::White) => format!("W/{white}"),
            Some(Color::Black) => format!("B/{black}"),
            None => format!(
                "N/{}",
                if to_move == Color::White {
                    white
                } else {
                    black
                }
            ),
        };
        g.tags.set("Clock", value);
    }
}
