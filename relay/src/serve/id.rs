//! The names the HTTP interface gives things: a tournament, a round, a game, a board number,
//! an e-board, and a round's change number. Each is read from text in one place
//! ([`FromStr`]) and written back the same way ([`Display`]); in JSON each is the bare number
//! (or string) the store and the views already use, so these types change no answer.
//!
//! The service inside still passes plain `i64`s around; these types are for the edge, where
//! text from a URL becomes a value and a mix-up of a game for a round would go unnoticed.
//! Their JSON Schema is the bare number's (or string's), written in place wherever one is
//! used rather than as a schema of its own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Text that names no tournament, round or game: not a whole number above zero.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} id {given:?} is not a whole number above 0")]
pub struct BadId {
    /// `tournament`, `round` or `game`.
    pub what: &'static str,
    /// The text as given.
    pub given: String,
}

/// A positive id, parsed as the store hands ids out (1, 2, …).
fn positive(what: &'static str, s: &str) -> Result<i64, BadId> {
    s.parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| BadId {
            what,
            given: s.to_string(),
        })
}

macro_rules! id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
            JsonSchema,
        )]
        #[serde(transparent)]
        #[schemars(inline)]
        pub struct $name(i64);

        impl $name {
            /// The number the store knows it by.
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                $name(id)
            }
        }

        impl FromStr for $name {
            type Err = BadId;
            fn from_str(s: &str) -> Result<Self, BadId> {
                positive($what, s).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id!(
    /// A tournament's id.
    TournamentId,
    "tournament"
);
id!(
    /// A round's id.
    RoundId,
    "round"
);
id!(
    /// A game's id.
    GameId,
    "game"
);

/// A round's change number: every change committed to a round gets the next one, and a
/// client names the last it has (`?since=N`) to get only what came after. 0 is before the
/// round's first change.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
#[schemars(inline)]
pub struct Seq(i64);

impl Seq {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl From<i64> for Seq {
    fn from(n: i64) -> Self {
        Seq(n)
    }
}

impl FromStr for Seq {
    type Err = std::num::ParseIntError;
    /// Any whole number: one a round never had is answered (with everything, or a snapshot)
    /// where it is used, not refused here.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Seq)
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A board number in a round, 1 to [`BoardNo::MAX`].
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
#[schemars(inline)]
pub struct BoardNo(u32);

/// Text that is no board number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("board number must be 1..={}", BoardNo::MAX)]
pub struct BadBoardNo;

impl BoardNo {
    /// The highest board number a round may have.
    pub const MAX: u32 = 10_000;

    pub fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<u32> for BoardNo {
    type Error = BadBoardNo;
    fn try_from(n: u32) -> Result<Self, BadBoardNo> {
        if (1..=BoardNo::MAX).contains(&n) {
            Ok(BoardNo(n))
        } else {
            Err(BadBoardNo)
        }
    }
}

impl FromStr for BoardNo {
    type Err = BadBoardNo;
    fn from_str(s: &str) -> Result<Self, BadBoardNo> {
        s.parse::<u32>()
            .map_err(|_| BadBoardNo)
            .and_then(BoardNo::try_from)
    }
}

impl fmt::Display for BoardNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// An e-board as the hall names it: its serial number, or `serial@port` for a second board
/// reporting the same serial (`hall::ids`). Any text names an e-board: one the hall does not
/// know is not found, not malformed.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
#[schemars(inline)]
pub struct Serial(String);

impl Serial {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Serial {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Serial(s.to_string()))
    }
}

impl fmt::Display for Serial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read as `T`: `Some(shown)` when it reads and is written back as `shown`, and
    /// its JSON is the bare value; `None` when it is refused.
    fn check<T>(text: &str, expected: Option<&str>)
    where
        T: FromStr + fmt::Display + Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug,
    {
        let got = text.parse::<T>().ok();
        assert_eq!(
            got.as_ref().map(T::to_string).as_deref(),
            expected,
            "{text:?}"
        );
        if let Some(v) = got {
            let back: T = v.to_string().parse().ok().expect("reads back");
            assert_eq!(back, v, "{text:?}");
            let json = serde_json::to_string(&v).expect("json");
            let again: T = serde_json::from_str(&json).expect("from json");
            assert_eq!(again, v, "{text:?} as {json}");
        }
    }

    #[test]
    fn ids_are_whole_numbers_above_zero() {
        for text in ["1", "42", "9223372036854775807"] {
            check::<GameId>(text, Some(text));
            check::<RoundId>(text, Some(text));
            check::<TournamentId>(text, Some(text));
        }
        // Written as the store has them, whatever the text looked like (as before the types).
        check::<GameId>("+7", Some("7"));
        check::<GameId>("007", Some("7"));
        for bad in ["0", "-1", "abc", "1.5", " 1", "", "9223372036854775808"] {
            check::<GameId>(bad, None);
        }
        assert_eq!(
            serde_json::to_string(&GameId::from(3)).ok().as_deref(),
            Some("3")
        );
        let e = "x".parse::<RoundId>().expect_err("refused");
        assert_eq!((e.what, e.given.as_str()), ("round", "x"));
    }

    #[test]
    fn change_numbers_board_numbers_and_serials_read_back() {
        for text in ["0", "12", "-3"] {
            check::<Seq>(text, Some(text));
        }
        check::<Seq>("x", None);
        for text in ["1", "10000"] {
            check::<BoardNo>(text, Some(text));
        }
        for bad in ["0", "10001", "-1", "a"] {
            check::<BoardNo>(bad, None);
        }
        for text in ["00042", "00042@ttyUSB1", "x y"] {
            check::<Serial>(text, Some(text));
        }
        assert_eq!(
            serde_json::to_string(&Serial::from_str("7").ok())
                .ok()
                .as_deref(),
            Some("\"7\"")
        );
    }
}
