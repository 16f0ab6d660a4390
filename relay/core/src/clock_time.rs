//! Clock times as PGN writes them.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A clock time or a duration, in milliseconds. Displays as `h:mm:ss` (PGN `[%clk]`, `[%emt]`),
/// with tenths only when they are not zero (`0:00:09.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct ClockTime(pub u64);

impl ClockTime {
    pub fn from_secs(s: u64) -> ClockTime {
        ClockTime(s * 1000)
    }

    pub fn millis(self) -> u64 {
        self.0
    }

    pub fn secs(self) -> u64 {
        self.0 / 1000
    }
}

impl fmt::Display for ClockTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0 / 1000;
        write!(f, "{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)?;
        let tenths = self.0 % 1000 / 100;
        if tenths > 0 {
            write!(f, ".{tenths}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid clock time {0:?} (expected h:mm:ss, optionally with tenths)")]
pub struct BadClockTime(pub String);

impl FromStr for ClockTime {
    type Err = BadClockTime;

    /// Accepts `h:mm:ss`, `hh:mm:ss`, `m:ss`, each optionally with a fraction (`.5`, `.25`).
    fn from_str(s: &str) -> Result<ClockTime, BadClockTime> {
        let bad = || BadClockTime(s.to_string());
        let t = s.trim();
        let (whole, frac) = match t.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (t, None),
        };
        let parts: Vec<&str> = whole.split(':').collect();
        if parts.len() < 2
            || parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(bad());
        }
        let nums: Vec<u64> = parts
            .iter()
            .map(|p| p.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let (h, m, sec) = match nums.as_slice() {
            [m, s] => (0, *m, *s),
            [h, m, s] => (*h, *m, *s),
            _ => return Err(bad()),
        };
        if sec >= 60 || (parts.len() == 3 && m >= 60) || h > 1000 {
            return Err(bad());
        }
        let mut ms = ((h * 60 + m) * 60 + sec) * 1000;
        if let Some(f) = frac {
            if f.is_empty() || f.len() > 3 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let digits: u64 = f.parse().map_err(|_| bad())?;
            ms += digits * 10u64.pow(3 - f.len() as u32);
        }
        Ok(ClockTime(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        let check = |input: &str, ms: u64, shown: &str| {
            let t: ClockTime = input.parse().unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(t, ClockTime(ms), "{input}");
            assert_eq!(t.to_string(), shown);
            assert_eq!(
                shown.parse::<ClockTime>().map(|t| t.to_string()),
                Ok(shown.to_string())
            );
        };
        check("1:59:56", 7_196_000, "1:59:56");
        check("01:59:56", 7_196_000, "1:59:56");
        check("0:00:09.5", 9_500, "0:00:09.5");
        check("15:29", 929_000, "0:15:29");
        check("0:15:29.25", 929_250, "0:15:29.2");
        for bad in [
            "", "1", "1:2:3:4", "0:61:00", "a:00:00", "1:00:00.", "-1:00:00",
        ] {
            assert!(bad.parse::<ClockTime>().is_err(), "{bad}");
        }
    }
}
