//! The emulated chess clock: two countdowns, Fischer increments added at the lever press, and
//! period bonuses (e.g. 30 minutes after move 40).
//!
//! The clock's state changes only at explicit events (start, lever press, set-and-run), each
//! given its own virtual time in milliseconds; a reading is a pure function of that state and
//! the time asked about. So the emulator can press the lever at an exact millisecond and the
//! clock shows exactly the time the script meant, however late the reader thread looks.

use boards::protocol::{ClockReading, ClockSide, ClockStatus, SideTime};
// The one time-control type of the project: the clock runs on what the core reads from a
// PGN `TimeControl` tag.
pub use relay_core::time_control::{Period, TimeControl};

/// A DGT clock on a table.
#[derive(Clone, Debug)]
pub struct ChessClock {
    tc: TimeControl,
    /// Time left per side (Left, Right) at `since_ms`.
    remaining: [u64; 2],
    since_ms: u64,
    /// The side whose time runs, if the clock runs.
    running: Option<ClockSide>,
    /// The side whose lever is up (the player to move), also while stopped.
    lever_up: ClockSide,
    moves_done: [u32; 2],
    battery_low: bool,
}

fn idx(side: ClockSide) -> usize {
    match side {
        ClockSide::Left => 0,
        ClockSide::Right => 1,
    }
}

impl ChessClock {
    /// A stopped clock set to the first period, with `first_to_move`'s lever up.
    pub fn new(tc: TimeControl, first_to_move: ClockSide) -> ChessClock {
        let base = tc.initial_ms().unwrap_or(0);
        ChessClock {
            tc,
            remaining: [base, base],
            since_ms: 0,
            running: None,
            lever_up: first_to_move,
            moves_done: [0, 0],
            battery_low: false,
        }
    }

    pub fn time_control(&self) -> &TimeControl {
        &self.tc
    }

    /// Time left on `side` at `now_ms` (never below zero).
    pub fn remaining_ms(&self, side: ClockSide, now_ms: u64) -> u64 {
        let r = self.remaining[idx(side)];
        if self.running == Some(side) {
            r.saturating_sub(now_ms.saturating_sub(self.since_ms))
        } else {
            r
        }
    }

    fn settle(&mut self, now_ms: u64) {
        if let Some(side) = self.running {
            self.remaining[idx(side)] = self.remaining_ms(side, now_ms);
        }
        self.since_ms = now_ms.max(self.since_ms);
    }

    /// The flag fell on the running side: the clock is blocked at zero.
    pub fn flag_fallen(&self, now_ms: u64) -> Option<ClockSide> {
        let side = self.running?;
        (self.remaining_ms(side, now_ms) == 0).then_some(side)
    }

    /// Starts (or resumes) the clock; the side whose lever is up runs.
    pub fn start(&mut self, now_ms: u64) {
        self.settle(now_ms);
        self.running = Some(self.lever_up);
    }

    /// Stops the clock (start/stop button).
    pub fn stop(&mut self, now_ms: u64) {
        self.settle(now_ms);
        self.running = None;
    }

    /// The player on `side` presses their lever: their time stops, gets the increment (and a
    /// period bonus when this move completes a period), and the other side runs. A press by
    /// the side that is not running, or after a flag fell, changes nothing (as on a real clock).
    pub fn press(&mut self, side: ClockSide, now_ms: u64) -> bool {
        if self.flag_fallen(now_ms).is_some() {
            return false;
        }
        match self.running {
            Some(running) if running != side => return false,
            None if self.lever_up != side => return false,
            _ => {}
        }
        let was_running = self.running.is_some();
        self.settle(now_ms);
        let i = idx(side);
        if was_running {
            self.moves_done[i] += 1;
            let n = self.moves_done[i];
            self.remaining[i] += self.tc.added_after_move(n).total_ms();
            self.running = Some(side.other());
        }
        self.lever_up = side.other();
        true
    }

    /// Set-and-run from the host: both times, which side runs (None = paused).
    pub fn set_and_run(
        &mut self,
        left_ms: u64,
        right_ms: u64,
        run: Option<ClockSide>,
        now_ms: u64,
    ) {
        self.remaining = [left_ms, right_ms];
        self.since_ms = now_ms;
        self.running = run;
        if let Some(side) = run {
            self.lever_up = side;
        }
    }

    /// The arbiter sets the clock (after an illegal move): both times, the moves each side
    /// has made as the clock counts them for its periods (`[left, right]`: a press that was
    /// not a move is taken off), and the side that runs (`None`: left stopped).
    pub fn arbiter_set(
        &mut self,
        left_ms: u64,
        right_ms: u64,
        run: Option<ClockSide>,
        moves_done: [u32; 2],
        now_ms: u64,
    ) {
        self.set_and_run(left_ms, right_ms, run, now_ms);
        self.moves_done = moves_done;
    }

    /// The moves the player on `side` has completed, as the clock counts them (lever presses
    /// while running, less any the arbiter took off).
    pub fn moves_done(&self, side: ClockSide) -> u32 {
        self.moves_done[idx(side)]
    }

    pub fn set_battery_low(&mut self, low: bool) {
        self.battery_low = low;
    }

    /// What the clock reports at `now_ms`. Displays round up to whole seconds, as a countdown
    /// display does: it shows 0:00 only when the time is really gone.
    pub fn reading(&self, now_ms: u64) -> ClockReading {
        let fallen = self.flag_fallen(now_ms);
        let fischer = self.tc.periods().iter().any(|p| p.increment_ms() > 0);
        let side_time = |side: ClockSide| SideTime {
            seconds: self.remaining_ms(side, now_ms).div_ceil(1000) as u32,
            flag_fallen: fallen == Some(side),
            time_per_move: fischer,
            flag_shown: fallen == Some(side),
        };
        let running = self.running.is_some() && fallen.is_none();
        let right_up = self.lever_up == ClockSide::Right;
        ClockReading {
            left: side_time(ClockSide::Left),
            right: side_time(ClockSide::Right),
            status: ClockStatus {
                running,
                lever_right_high: right_up,
                battery_low: self.battery_low,
                turn_left: !right_up,
                turn_right: right_up,
                no_clock: false,
            },
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_bonus_is_added_after_the_last_move_of_the_period() {
        let mut c = ChessClock::new(
            "40/5400+30:1800+30".parse().expect("parses"),
            ClockSide::Left,
        );
        c.start(0);
        let mut now = 0;
        for _ in 0..39 {
            now += 1_000;
            assert!(c.press(ClockSide::Left, now));
            now += 1_000;
            assert!(c.press(ClockSide::Right, now));
        }
        // 39 moves of 1 s each, 30 s back after each.
        assert_eq!(
            c.remaining_ms(ClockSide::Left, now),
            5_400_000 + 39 * 29_000
        );
        now += 1_000;
        assert!(c.press(ClockSide::Left, now));
        assert_eq!(
            c.remaining_ms(ClockSide::Left, now),
            5_400_000 + 40 * 29_000 + 1_800_000
        );
    }

    #[test]
    fn lever_press_adds_increment_and_switches_side() {
        let mut c = ChessClock::new("180+2".parse().expect("parses"), ClockSide::Left);
        c.start(0);
        assert_eq!(c.reading(1_500).left.seconds, 179);
        assert_eq!(c.reading(1_500).running_side(), Some(ClockSide::Left));
        assert!(
            !c.press(ClockSide::Right, 2_000),
            "the waiting side cannot press"
        );
        assert!(c.press(ClockSide::Left, 3_000));
        let r = c.reading(3_000);
        assert_eq!((r.left.seconds, r.right.seconds), (179, 180));
        assert_eq!(r.running_side(), Some(ClockSide::Right));
        assert_eq!(
            r.status.to_byte(),
            0x13,
            "right running looks like the capture"
        );
        c.press(ClockSide::Right, 4_000);
        assert_eq!(
            c.reading(4_000).status.to_byte(),
            0x09,
            "left running looks like the capture"
        );
        // Let the left flag fall.
        let r = c.reading(400_000);
        assert!(r.left.flag_fallen && r.running_side().is_none());
        assert!(!c.press(ClockSide::Left, 400_000));
    }
}
