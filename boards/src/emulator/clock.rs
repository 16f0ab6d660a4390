//! The emulated chess clock: two countdowns, Fischer increments added at the lever press, and
//! period bonuses (e.g. 30 minutes after move 40).
//!
//! The clock's state changes only at explicit events (start, lever press, set-and-run), each
//! given its own virtual time in milliseconds; a reading is a pure function of that state and
//! the time asked about. So the emulator can press the lever at an exact millisecond and the
//! clock shows exactly the time the script meant, however late the reader thread looks.

use crate::protocol::{ClockReading, ClockSide, ClockStatus, SideTime};
use std::fmt;
use std::str::FromStr;

/// One period of a time control: `moves` moves (None = rest of the game) in `base_ms`, with
/// `increment_ms` added after each move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub moves: Option<u32>,
    pub base_ms: u64,
    pub increment_ms: u64,
}

/// The periods of a game's time control, parsed from the PGN TimeControl forms the emulator
/// needs: `5400+30`, `180`, `40/5400+30:1800+30`, `40/7200:3600`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeControl {
    pub periods: Vec<Period>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported time control {0:?} (expected forms like 5400+30 or 40/5400+30:1800+30)")]
pub struct BadTimeControl(pub String);

impl FromStr for TimeControl {
    type Err = BadTimeControl;

    fn from_str(s: &str) -> Result<TimeControl, BadTimeControl> {
        let bad = || BadTimeControl(s.to_string());
        let mut periods = Vec::new();
        for part in s.trim().split(':') {
            let (moves, rest) = match part.split_once('/') {
                Some((m, rest)) => (Some(m.parse::<u32>().map_err(|_| bad())?), rest),
                None => (None, part),
            };
            let (base, inc) = match rest.split_once('+') {
                Some((b, i)) => (b, i),
                None => (rest, "0"),
            };
            let base: f64 = base.parse().map_err(|_| bad())?;
            let inc: f64 = inc.parse().map_err(|_| bad())?;
            if !(base.is_finite() && inc.is_finite() && base > 0.0 && inc >= 0.0) {
                return Err(bad());
            }
            periods.push(Period {
                moves,
                base_ms: (base * 1000.0).round() as u64,
                increment_ms: (inc * 1000.0).round() as u64,
            });
        }
        if periods.is_empty()
            || periods[..periods.len() - 1]
                .iter()
                .any(|p| p.moves.is_none())
        {
            return Err(bad());
        }
        Ok(TimeControl { periods })
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                write!(f, ":")?;
            }
            if let Some(m) = p.moves {
                write!(f, "{m}/")?;
            }
            write!(f, "{}", p.base_ms / 1000)?;
            if p.increment_ms > 0 {
                write!(f, "+{}", p.increment_ms / 1000)?;
            }
        }
        Ok(())
    }
}

impl TimeControl {
    /// The bonus added after a side's `moves_done`-th move (the start of a new period), if any.
    pub fn bonus_after(&self, moves_done: u32) -> u64 {
        let mut boundary = 0;
        for (i, p) in self.periods.iter().enumerate() {
            let Some(m) = p.moves else { return 0 };
            boundary += m;
            if moves_done == boundary {
                // The next period's time; a last period with a move count repeats itself.
                return self.periods.get(i + 1).unwrap_or(p).base_ms;
            }
            if moves_done < boundary {
                return 0;
            }
        }
        // Past every boundary: only a last period with a move count repeats.
        match self.periods.last() {
            Some(Period {
                moves: Some(m),
                base_ms,
                ..
            }) if (moves_done - boundary).is_multiple_of(*m) => *base_ms,
            _ => 0,
        }
    }

    /// The increment for a side's `moves_done`-th move.
    pub fn increment_for(&self, moves_done: u32) -> u64 {
        let mut boundary = 0;
        for p in &self.periods {
            match p.moves {
                Some(m) if moves_done > boundary + m => boundary += m,
                _ => return p.increment_ms,
            }
        }
        self.periods.last().map_or(0, |p| p.increment_ms)
    }
}

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
        let base = tc.periods.first().map_or(0, |p| p.base_ms);
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
            self.remaining[i] += self.tc.increment_for(n) + self.tc.bonus_after(n);
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

    pub fn set_battery_low(&mut self, low: bool) {
        self.battery_low = low;
    }

    /// What the clock reports at `now_ms`. Displays round up to whole seconds, as a countdown
    /// display does: it shows 0:00 only when the time is really gone.
    pub fn reading(&self, now_ms: u64) -> ClockReading {
        let fallen = self.flag_fallen(now_ms);
        let fischer = self.tc.periods.iter().any(|p| p.increment_ms > 0);
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
    fn time_controls_parse_and_print() {
        for s in [
            "5400+30",
            "180+2",
            "40/5400+30:1800+30",
            "40/7200:3600",
            "300",
        ] {
            let tc: TimeControl = s.parse().expect("parses");
            assert_eq!(tc.to_string(), s);
        }
        assert!("".parse::<TimeControl>().is_err());
        assert!("5400:40/300".parse::<TimeControl>().is_err());
        assert!("abc".parse::<TimeControl>().is_err());
    }

    #[test]
    fn increments_and_period_bonus() {
        let tc: TimeControl = "40/5400+30:1800+30".parse().expect("parses");
        assert_eq!(tc.bonus_after(39), 0);
        assert_eq!(tc.bonus_after(40), 1_800_000);
        assert_eq!(tc.bonus_after(41), 0);
        assert_eq!(tc.increment_for(1), 30_000);
        assert_eq!(tc.increment_for(60), 30_000);
        let tc: TimeControl = "40/7200:3600".parse().expect("parses");
        assert_eq!(tc.bonus_after(40), 3_600_000);
        assert_eq!(tc.bonus_after(80), 0);
        let tc: TimeControl = "40/7200".parse().expect("parses");
        assert_eq!(tc.bonus_after(40), 7_200_000);
        assert_eq!(tc.bonus_after(80), 7_200_000);
        assert_eq!(tc.bonus_after(79), 0);
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
