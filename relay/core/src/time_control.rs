//! The PGN `TimeControl` tag (PGN standard §9.6): what it says, how to read the forms real
//! broadcasts type into it, and what it means for a clock (start time, time added per move).

use std::fmt;
use std::str::FromStr;

/// One control period of a [`TimeControl`]. Durations are kept in milliseconds because engine
/// matches write fractional increments (`10+0.05`); the standard itself only has whole seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Period {
    /// `40/9000`: `moves` moves in `base_ms`. The increment is the FIDE-style extension
    /// `40/5400+30` (30 s added after every move of the period); `None` when not written.
    Moves {
        moves: u32,
        base_ms: u64,
        increment_ms: Option<u64>,
    },
    /// `300` (sudden death) or `4500+60` (incremental). `increment_ms` is `None` when no `+` was
    /// written, so that `10+0` and `10` both survive a round trip.
    SuddenDeath {
        base_ms: u64,
        increment_ms: Option<u64>,
    },
    /// `*180`: a sandclock holding `total_ms` in all.
    Sandclock { total_ms: u64 },
}

impl Period {
    /// The time the period starts with (for a sandclock: each side's half of the sand).
    pub fn base_ms(&self) -> u64 {
        match *self {
            Period::Moves { base_ms, .. } | Period::SuddenDeath { base_ms, .. } => base_ms,
            Period::Sandclock { total_ms } => total_ms / 2,
        }
    }

    /// The time added after each move made in this period.
    pub fn increment_ms(&self) -> u64 {
        match *self {
            Period::Moves { increment_ms, .. } | Period::SuddenDeath { increment_ms, .. } => {
                increment_ms.unwrap_or(0)
            }
            Period::Sandclock { .. } => 0,
        }
    }

    /// How many moves the period lasts; `None` when it lasts the rest of the game.
    pub fn moves(&self) -> Option<u32> {
        match *self {
            Period::Moves { moves, .. } => Some(moves),
            _ => None,
        }
    }
}

/// The value of a PGN `TimeControl` tag.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TimeControl {
    /// `?`
    Unknown,
    /// `-`: no time control.
    NoControl,
    /// One or more periods in the order they are played, joined by `:` in the tag. The last one
    /// repeats for as long as the game needs (§9.6).
    Periods(Vec<Period>),
}

/// What a side's clock gains when it completes a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TimeAdded {
    /// The increment of the period the move was played in.
    pub increment_ms: u64,
    /// The next period's time, when this move completes a moves period (move 40 of `40/5400`).
    pub period_bonus_ms: u64,
}

impl TimeAdded {
    pub fn total_ms(&self) -> u64 {
        self.increment_ms + self.period_bonus_ms
    }
}

impl TimeControl {
    /// A single incremental period, e.g. `TimeControl::increment(5400, 30)` for 90 min + 30 s.
    pub fn increment(base_secs: u64, increment_secs: u64) -> TimeControl {
        TimeControl::Periods(vec![Period::SuddenDeath {
            base_ms: base_secs * 1000,
            increment_ms: Some(increment_secs * 1000),
        }])
    }

    pub fn periods(&self) -> &[Period] {
        match self {
            TimeControl::Periods(p) => p,
            _ => &[],
        }
    }

    /// The time each clock starts with, in ms; `None` without a known time control.
    pub fn initial_ms(&self) -> Option<u64> {
        self.periods().first().map(Period::base_ms)
    }

    /// The period that a side's `n`-th move (1-based) is played in, and whether that move is the
    /// last of its period. Periods past the end repeat the last one (§9.6).
    fn period_of_move(&self, n: u32) -> Option<(usize, bool)> {
        let periods = self.periods();
        let last = periods.len().checked_sub(1)?;
        let mut first_move = 1u64; // the first move number of period `i`
        let n = u64::from(n.max(1));
        for (i, p) in periods.iter().enumerate() {
            let Some(len) = p.moves() else {
                return Some((i, false));
            };
            let len = u64::from(len.max(1));
            if i == last {
                // The repeating last moves period: which repetition does not matter, only
                // whether `n` ends one.
                return Some((i, (n + 1 - first_move).is_multiple_of(len)));
            }
            if n < first_move + len {
                return Some((i, n == first_move + len - 1));
            }
            first_move += len;
        }
        None
    }

    /// What a side's clock gains when it completes its `n`-th move (1-based): the increment of
    /// the period the move belongs to, plus the next period's time if the move ends a moves
    /// period. For `40/5400+30:1800+30`, move 39 adds 30 s, move 40 adds 30 s + 1800 s. Nothing
    /// for `?`, `-` or a sandclock (whose sand flows rather than being added).
    pub fn added_after_move(&self, n: u32) -> TimeAdded {
        let periods = self.periods();
        let Some((i, ends_period)) = self.period_of_move(n) else {
            return TimeAdded::default();
        };
        let here = periods[i];
        let period_bonus_ms = if ends_period {
            periods.get(i + 1).unwrap_or(&here).base_ms()
        } else {
            0
        };
        TimeAdded {
            increment_ms: here.increment_ms(),
            period_bonus_ms,
        }
    }

    /// Reads the forms people and broadcast software type into a `TimeControl` tag, besides the
    /// standard ones: `90 min + 30 sec`, `15 min/game + 10 sec/move`, `90+30`,
    /// `40/5400+30:1800+30`, `90 min/40 moves + 30 min + 30 sec/move`, `90'+30"`.
    ///
    /// Numbers without a unit are ambiguous (`90+30` is 90 *seconds* + 30 in the standard but
    /// means 90 minutes everywhere else). Over-the-board games never start with less than three
    /// minutes, so a base under 180 without a unit is read as minutes and anything larger as
    /// seconds; increments without a unit are seconds. A value the standard can read with every
    /// base of at least 180 s (or with a fractional part, as engine matches write) is taken as is.
    pub fn from_free_text(s: &str) -> Option<TimeControl> {
        let s = s.trim();
        let strict = s.parse::<TimeControl>().ok();
        if let Some(tc) = &strict {
            let plausible_seconds = tc.periods().iter().all(|p| match *p {
                Period::Sandclock { .. } => true,
                _ => p.base_ms() >= 180_000 || p.base_ms() % 1000 != 0,
            }) || tc.periods().iter().any(|p| p.increment_ms() % 1000 != 0);
            if plausible_seconds {
                return strict;
            }
        }
        free_text::parse(s).or(strict)
    }
}

/// Why a `TimeControl` tag value is not in the standard form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid TimeControl {value:?}: {reason}")]
pub struct BadTimeControl {
    pub value: String,
    pub reason: &'static str,
}

/// Parses a number of seconds with an optional fraction of up to three digits into ms.
fn parse_secs(s: &str) -> Option<u64> {
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ms = whole.parse::<u64>().ok()?.checked_mul(1000)?;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 3 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        ms += f.parse::<u64>().ok()? * 10u64.pow(3 - f.len() as u32);
    }
    Some(ms)
}

fn write_secs(f: &mut fmt::Formatter<'_>, ms: u64) -> fmt::Result {
    write!(f, "{}", ms / 1000)?;
    let frac = ms % 1000;
    if frac != 0 {
        // Shortest exact decimal: 50 ms is "0.05", not "0.050".
        let digits = format!("{frac:03}");
        write!(f, ".{}", digits.trim_end_matches('0'))?;
    }
    Ok(())
}

impl FromStr for TimeControl {
    type Err = BadTimeControl;

    /// The six kinds of §9.6, periods joined by `:`, in seconds. Two extensions real software
    /// writes are accepted: an increment on a moves period (`40/5400+30`, FIDE's classical
    /// control) and fractions of a second (`10+0.05`, engine matches). Nothing else: no spaces,
    /// no units (see [`TimeControl::from_free_text`] for those).
    fn from_str(s: &str) -> Result<TimeControl, BadTimeControl> {
        let bad = |reason| BadTimeControl {
            value: s.to_string(),
            reason,
        };
        match s {
            "?" => return Ok(TimeControl::Unknown),
            "-" => return Ok(TimeControl::NoControl),
            "" => return Err(bad("empty")),
            _ => {}
        }
        let fields: Vec<&str> = s.split(':').collect();
        let mut periods = Vec::with_capacity(fields.len());
        for (i, field) in fields.iter().enumerate() {
            let period = if let Some(total) = field.strip_prefix('*') {
                let total_ms = parse_secs(total).ok_or(bad("sandclock needs *seconds"))?;
                if total_ms == 0 {
                    return Err(bad("a sandclock needs a positive time"));
                }
                Period::Sandclock { total_ms }
            } else {
                let (moves, rest) = match field.split_once('/') {
                    Some((m, rest)) => {
                        let moves = m
                            .parse::<u32>()
                            .ok()
                            .filter(|&n| n > 0 && m.bytes().all(|b| b.is_ascii_digit()))
                            .ok_or(bad("moves must be a positive integer"))?;
                        (Some(moves), rest)
                    }
                    None => (None, *field),
                };
                let (base, inc) = match rest.split_once('+') {
                    Some((b, i)) => (b, Some(i)),
                    None => (rest, None),
                };
                let base_ms = parse_secs(base).ok_or(bad("expected seconds"))?;
                let increment_ms = match inc {
                    Some(i) => Some(parse_secs(i).ok_or(bad("expected increment seconds"))?),
                    None => None,
                };
                if base_ms == 0 && increment_ms.unwrap_or(0) == 0 {
                    return Err(bad("a period needs some time"));
                }
                match moves {
                    Some(moves) => Period::Moves {
                        moves,
                        base_ms,
                        increment_ms,
                    },
                    None => Period::SuddenDeath {
                        base_ms,
                        increment_ms,
                    },
                }
            };
            // Only a moves period ever ends, so anything after another kind could never start.
            if i + 1 < fields.len() && period.moves().is_none() {
                return Err(bad("only the last period may run to the end of the game"));
            }
            periods.push(period);
        }
        Ok(TimeControl::Periods(periods))
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let periods = match self {
            TimeControl::Unknown => return f.write_str("?"),
            TimeControl::NoControl => return f.write_str("-"),
            TimeControl::Periods(p) => p,
        };
        for (i, p) in periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            match *p {
                Period::Sandclock { total_ms } => {
                    f.write_str("*")?;
                    write_secs(f, total_ms)?;
                }
                Period::Moves {
                    moves,
                    base_ms,
                    increment_ms,
                } => {
                    write!(f, "{moves}/")?;
                    write_secs(f, base_ms)?;
                    if let Some(inc) = increment_ms {
                        f.write_str("+")?;
                        write_secs(f, inc)?;
                    }
                }
                Period::SuddenDeath {
                    base_ms,
                    increment_ms,
                } => {
                    write_secs(f, base_ms)?;
                    if let Some(inc) = increment_ms {
                        f.write_str("+")?;
                        write_secs(f, inc)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The free-text reader behind [`TimeControl::from_free_text`]: a small tokenizer and a pass
/// that builds periods from durations, move counts and separators.
mod free_text {
    use super::{Period, TimeControl};

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Unit {
        Hours,
        Minutes,
        Seconds,
    }

    #[derive(Clone, Debug, PartialEq)]
    enum Tok {
        Num(f64),
        Unit(Unit),
        /// "moves", "mv": the number before it counts moves.
        Moves,
        /// "/move", "per move", "increment", "inc", "bonus": the duration is an increment.
        PerMove,
        /// "/game", "game", "g": noise that says "for the game".
        Game,
        Plus,
        Slash,
        /// `:`, `;`, `,`, "then": a new period starts.
        Sep,
        /// "per", "a", "each": must be followed by "move".
        Per,
        Other,
    }

    fn tokenize(s: &str) -> Vec<Tok> {
        let mut toks = Vec::new();
        let chars: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_ascii_digit() {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                toks.push(text.parse().map(Tok::Num).unwrap_or(Tok::Other));
                continue;
            }
            if c.is_alphabetic() {
                let start = i;
                while i < chars.len() && chars[i].is_alphabetic() {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
                let tok = match word.as_str() {
                    "h" | "hr" | "hrs" | "hour" | "hours" => Tok::Unit(Unit::Hours),
                    "m" | "min" | "mins" | "minute" | "minutes" | "mn" => Tok::Unit(Unit::Minutes),
                    "s" | "sec" | "secs" | "second" | "seconds" => Tok::Unit(Unit::Seconds),
                    "moves" | "move" | "mv" | "mvs" => {
                        // "/move" and "per move" say increment; "40 moves" counts moves.
                        match toks.last() {
                            Some(Tok::Slash) => {
                                toks.pop();
                                Tok::PerMove
                            }
                            Some(Tok::Per) => {
                                toks.pop();
                                Tok::PerMove
                            }
                            _ => Tok::Moves,
                        }
                    }
                    "per" | "a" | "each" => Tok::Per,
                    "inc" | "increment" | "incr" | "bonus" | "fischer" => Tok::PerMove,
                    "game" | "g" | "sd" | "kk" | "ko" => {
                        if toks.last() == Some(&Tok::Slash) {
                            toks.pop();
                        }
                        Tok::Game
                    }
                    "then" | "and" | "followed" | "by" => Tok::Sep,
                    "for" | "in" | "the" | "rest" | "of" | "all" | "from" | "with" | "plus" => {
                        if word == "plus" {
                            Tok::Plus
                        } else {
                            Tok::Game
                        }
                    }
                    _ => return Vec::new(), // an unknown word: not a time control we can read
                };
                toks.push(tok);
                continue;
            }
            i += 1;
            match c {
                '+' => toks.push(Tok::Plus),
                '/' => toks.push(Tok::Slash),
                ':' | ';' | ',' => toks.push(Tok::Sep),
                '\'' | '′' => toks.push(Tok::Unit(Unit::Minutes)),
                '"' | '″' => toks.push(Tok::Unit(Unit::Seconds)),
                c if c.is_whitespace() || c == '.' || c == '(' || c == ')' => {}
                _ => return Vec::new(),
            }
        }
        toks
    }

    #[derive(Clone, Copy, Debug, Default)]
    struct Building {
        moves: Option<u32>,
        base_ms: Option<u64>,
        increment_ms: Option<u64>,
    }

    impl Building {
        fn is_empty(&self) -> bool {
            self.moves.is_none() && self.base_ms.is_none() && self.increment_ms.is_none()
        }
    }

    fn to_ms(n: f64, unit: Unit) -> Option<u64> {
        let secs = match unit {
            Unit::Hours => n * 3600.0,
            Unit::Minutes => n * 60.0,
            Unit::Seconds => n,
        };
        (0.0..1e9)
            .contains(&secs)
            .then(|| (secs * 1000.0).round() as u64)
    }

    pub(super) fn parse(s: &str) -> Option<TimeControl> {
        match s {
            "?" => return Some(TimeControl::Unknown),
            "-" => return Some(TimeControl::NoControl),
            _ => {}
        }
        let toks = tokenize(s);
        if toks.is_empty() || toks.contains(&Tok::Other) || toks.contains(&Tok::Per) {
            return None;
        }
        let mut done: Vec<Building> = Vec::new();
        let mut cur = Building::default();
        // An increment given once at the end ("+ 30 sec/move") applies to every period.
        let mut trailing_increment: Option<u64> = None;
        let mut i = 0;
        let mut after_plus = false;
        while i < toks.len() {
            match toks[i] {
                Tok::Num(n) => {
                    let unit = match toks.get(i + 1) {
                        Some(Tok::Unit(u)) => {
                            i += 1;
                            Some(*u)
                        }
                        _ => None,
                    };
                    let next = toks.get(i + 1);
                    if next == Some(&Tok::Moves) || (unit.is_none() && next == Some(&Tok::Slash)) {
                        // "40 moves" or "40/90": a move count.
                        if n.fract() != 0.0 || !(1.0..=1000.0).contains(&n) {
                            return None;
                        }
                        if cur.moves.is_some() && cur.base_ms.is_some() {
                            done.push(std::mem::take(&mut cur));
                        }
                        cur.moves = Some(n as u32);
                        i += 2;
                        after_plus = false;
                        continue;
                    }
                    let per_move = next == Some(&Tok::PerMove);
                    let is_increment = per_move
                        || (after_plus
                            && cur.base_ms.is_some()
                            && unit.is_none_or(|u| u == Unit::Seconds));
                    if is_increment {
                        let ms = to_ms(n, unit.unwrap_or(Unit::Seconds))?;
                        if cur.base_ms.is_none() && !done.is_empty() && cur.is_empty() {
                            trailing_increment = Some(ms);
                        } else if cur.increment_ms.is_some() {
                            return None;
                        } else {
                            cur.increment_ms = Some(ms);
                        }
                        if per_move {
                            i += 1;
                        }
                    } else {
                        // A base time. Without a unit: minutes when small (see from_free_text).
                        let unit = unit.unwrap_or(if n < 180.0 {
                            Unit::Minutes
                        } else {
                            Unit::Seconds
                        });
                        let ms = to_ms(n, unit)?;
                        if cur.base_ms.is_some() {
                            // "90 min/40 moves + 30 min": a second period starts.
                            done.push(std::mem::take(&mut cur));
                        }
                        cur.base_ms = Some(ms);
                    }
                    after_plus = false;
                }
                Tok::Plus => after_plus = true,
                Tok::Sep => {
                    if !cur.is_empty() {
                        done.push(std::mem::take(&mut cur));
                    }
                    after_plus = false;
                }
                Tok::Slash | Tok::Game | Tok::PerMove | Tok::Moves | Tok::Unit(_) => {}
                Tok::Other | Tok::Per => return None,
            }
            i += 1;
        }
        if !cur.is_empty() {
            done.push(cur);
        }
        // An increment standing alone after the last period ("... : + 30 s") belongs to all.
        if let Some(last) = done.last()
            && last.base_ms.is_none()
            && last.moves.is_none()
            && last.increment_ms.is_some()
        {
            trailing_increment = last.increment_ms;
            done.pop();
        }
        if done.is_empty() {
            return None;
        }
        if let Some(inc) = trailing_increment {
            for b in &mut done {
                b.increment_ms.get_or_insert(inc);
            }
        } else if done.len() > 1 {
            // "40/90 : 30 + 30": an increment written on the last period only is FIDE's
            // "30 s per move from move one" in practice.
            if let Some(inc) = done.last().and_then(|b| b.increment_ms) {
                for b in &mut done {
                    b.increment_ms.get_or_insert(inc);
                }
            }
        }
        let last = done.len() - 1;
        let mut periods = Vec::new();
        for (k, b) in done.into_iter().enumerate() {
            let base_ms = b.base_ms?;
            periods.push(match b.moves {
                Some(moves) => Period::Moves {
                    moves,
                    base_ms,
                    increment_ms: b.increment_ms,
                },
                None if k == last => Period::SuddenDeath {
                    base_ms,
                    increment_ms: b.increment_ms,
                },
                None => return None,
            });
        }
        Some(TimeControl::Periods(periods))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Option<&str>) {
        let got = TimeControl::from_free_text(input).map(|tc| tc.to_string());
        assert_eq!(got.as_deref(), expected, "{input:?}");
    }

    #[test]
    fn standard_round_trip() {
        for s in [
            "?",
            "-",
            "40/9000",
            "300",
            "4500+60",
            "*180",
            "40/7200:3600",
            "40/7200:20/3600:900+30",
            "40/5400+30:1800+30",
            "10+0",
            "10+0.05",
            "0+1",
        ] {
            let tc: TimeControl = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(tc.to_string(), s);
            assert_eq!(tc.to_string().parse::<TimeControl>(), Ok(tc));
        }
    }

    #[test]
    fn standard_rejects() {
        for s in [
            "",
            "90 min",
            "40/",
            "/9000",
            "0/9000",
            "300:40/9000",
            "*180:300",
            "+30",
            "4500+",
            "45 00",
            "1.2345",
            "0",
            "40/9000 ",
            "x",
            "*",
            "*0",
            "040/9000x",
            "-1",
        ] {
            let err = s.parse::<TimeControl>().expect_err(s);
            assert!(err.to_string().contains("invalid TimeControl"), "{err}");
        }
    }

    #[test]
    fn kinds() {
        let tc: TimeControl = "40/9000:300:*180".parse().unwrap_or(TimeControl::Unknown);
        assert_eq!(
            tc,
            TimeControl::Unknown,
            "a sandclock after sudden death is rejected"
        );
        let tc: TimeControl = "40/9000:*180".parse().expect("valid");
        assert_eq!(
            tc.periods(),
            &[
                Period::Moves {
                    moves: 40,
                    base_ms: 9_000_000,
                    increment_ms: None
                },
                Period::Sandclock { total_ms: 180_000 },
            ]
        );
    }

    #[test]
    fn free_text() {
        check("90 min + 30 sec", Some("5400+30"));
        check("15 min/game + 10 sec/move", Some("900+10"));
        check("90+30", Some("5400+30"));
        check("40/5400+30:1800+30", Some("40/5400+30:1800+30"));
        check("40/7200:20/3600:900+30", Some("40/7200:20/3600:900+30"));
        check("900+10", Some("900+10"));
        check("10+0.05", Some("10+0.05"));
        check("10+0", Some("600+0"));
        check("1800", Some("1800"));
        check("90", Some("5400"));
        check("-", Some("-"));
        check("?", Some("?"));
        check(
            "90 min/40 moves + 30 min + 30 sec/move",
            Some("40/5400+30:1800+30"),
        );
        check(
            "40 moves in 90 minutes, then 30 minutes, 30 seconds increment",
            Some("40/5400+30:1800+30"),
        );
        check("90' + 30\"", Some("5400+30"));
        check("2h", Some("7200"));
        check("G/60", Some("3600"));
        check("3 min + 2 sec", Some("180+2"));
        check("25 + 10", Some("1500+10"));
        check("*180", Some("*180"));
        check("rapid", None);
        check("", None);
        check("90 min + 30 sec + 15 sec", None);
    }

    #[test]
    fn clock_arithmetic() {
        let tc: TimeControl = "40/5400+30:1800+30".parse().expect("valid");
        assert_eq!(tc.initial_ms(), Some(5_400_000));
        let add = |n| tc.added_after_move(n);
        assert_eq!(
            add(1),
            TimeAdded {
                increment_ms: 30_000,
                period_bonus_ms: 0
            }
        );
        assert_eq!(
            add(39),
            TimeAdded {
                increment_ms: 30_000,
                period_bonus_ms: 0
            }
        );
        assert_eq!(
            add(40),
            TimeAdded {
                increment_ms: 30_000,
                period_bonus_ms: 1_800_000
            }
        );
        assert_eq!(add(41).total_ms(), 30_000);
        assert_eq!(
            add(80).total_ms(),
            30_000,
            "the last period is sudden death"
        );

        // 40/7200:20/3600:900+30 — moves 1-40, 41-60, then the rest.
        let tc: TimeControl = "40/7200:20/3600:900+30".parse().expect("valid");
        assert_eq!(tc.initial_ms(), Some(7_200_000));
        assert_eq!(tc.added_after_move(40).total_ms(), 3_600_000);
        assert_eq!(tc.added_after_move(59).total_ms(), 0);
        assert_eq!(tc.added_after_move(60).total_ms(), 900_000);
        assert_eq!(tc.added_after_move(61).total_ms(), 30_000);

        // A lone moves period repeats: 40 moves in 2½ hours, again and again.
        let tc: TimeControl = "40/9000".parse().expect("valid");
        assert_eq!(tc.added_after_move(40).period_bonus_ms, 9_000_000);
        assert_eq!(tc.added_after_move(41).total_ms(), 0);
        assert_eq!(tc.added_after_move(80).period_bonus_ms, 9_000_000);

        // 40/7200:3600 — after move 40 the hour comes, then sudden death.
        let tc: TimeControl = "40/7200:3600".parse().expect("valid");
        assert_eq!(tc.added_after_move(40).total_ms(), 3_600_000);
        assert_eq!(tc.added_after_move(80).total_ms(), 0);

        assert_eq!(
            TimeControl::increment(300, 2)
                .added_after_move(7)
                .total_ms(),
            2_000
        );
        let sand: TimeControl = "*180".parse().expect("valid");
        assert_eq!(sand.initial_ms(), Some(90_000));
        assert_eq!(sand.added_after_move(3).total_ms(), 0);
        assert_eq!(TimeControl::Unknown.initial_ms(), None);
        assert_eq!(TimeControl::NoControl.added_after_move(1).total_ms(), 0);
    }
}
