//! The names the HTTP interface gives things: a tournament, a round, a game and a round's
//! change number are the store's own types (`relay_store::id`, re-exported here), carried
//! from the database through the service to the URL; a board number and an e-board are the
//! edge's. Each is read from text in one place ([`FromStr`]) and written back the same way
//! ([`Display`]); in JSON each is the bare number (or string), and its JSON Schema the bare
//! number's, written in place wherever one is used.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub use relay_store::{BadId, GameId, RoundId, Seq, TournamentId};

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
