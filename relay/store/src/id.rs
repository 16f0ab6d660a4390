//! The names the store gives what it keeps: a tournament, a round, a game, and a round's
//! change number. The store hands them out and takes them back as these types, so a game's
//! id cannot be passed where a round's is meant anywhere from the database to the HTTP
//! edge. Each is read from text in one place ([`FromStr`]) and written back the same way
//! ([`Display`]); in JSON and in SQL each is the bare number.
//!
//! ```
//! use relay_store::{GameId, RoundId};
//! let game: GameId = "7".parse().unwrap();
//! assert_eq!(game.get(), 7);
//! assert!("0".parse::<RoundId>().is_err());
//! ```

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

/// The derives every id shares: ordered, hashed, the bare number in JSON, in its JSON
/// Schema (written in place) and in SQL (bound and read as the `i64` column, by sqlx and by
/// rusqlite).
macro_rules! number {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize,
            Deserialize, JsonSchema, sqlx::Type,
        )]
        #[serde(transparent)]
        #[schemars(inline)]
        #[sqlx(transparent)]
        pub struct $name(i64);

        impl $name {
            /// The number the database knows it by.
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl From<i64> for $name {
            fn from(n: i64) -> Self {
                $name(n)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        // The writer's own SQLite connection (`direct`) binds them too.
        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }
    };
}

macro_rules! id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        number!($(#[$doc])* $name);

        impl FromStr for $name {
            type Err = BadId;
            fn from_str(s: &str) -> Result<Self, BadId> {
                positive($what, s).map($name)
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
number!(
    /// A round's change number: every change committed to a round gets the next one, and a
    /// client names the last it has (`?since=N`) to get only what came after. 0 (the
    /// default) is before the round's first change.
    Seq
);

impl FromStr for Seq {
    type Err = std::num::ParseIntError;
    /// Any whole number: one a round never had is answered (with everything, or a snapshot)
    /// where it is used, not refused here.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Seq)
    }
}

// Change numbers count: the one after `n` is `n + 1`, and two are `a - b` changes apart.
impl std::ops::Add<i64> for Seq {
    type Output = Seq;
    fn add(self, n: i64) -> Seq {
        Seq(self.0 + n)
    }
}

impl std::ops::AddAssign<i64> for Seq {
    fn add_assign(&mut self, n: i64) {
        self.0 += n;
    }
}

impl std::ops::Sub<i64> for Seq {
    type Output = Seq;
    fn sub(self, n: i64) -> Seq {
        Seq(self.0 - n)
    }
}

impl std::ops::Sub for Seq {
    type Output = i64;
    fn sub(self, earlier: Seq) -> i64 {
        self.0 - earlier.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_and_write_the_bare_number() {
        let g: GameId = "42".parse().expect("a game id");
        assert_eq!(g.to_string(), "42");
        assert_eq!(serde_json::to_string(&g).expect("json"), "42");
        assert_eq!(
            serde_json::from_str::<RoundId>("3").expect("json"),
            RoundId::from(3)
        );
        for bad in ["0", "-1", "x", ""] {
            assert!(bad.parse::<TournamentId>().is_err(), "{bad}");
        }
        assert_eq!("-1".parse::<Seq>().expect("any number").get(), -1);
        assert_eq!(Seq::from(5) - 1, Seq::from(4));
        assert_eq!(Seq::from(5) - Seq::from(2), 3);
    }
}
