//! The arbiter's record of a game: illegal moves completed by a clock press (or presses
//! without a move) and clock corrections, as the recorder saw them, with the arbiter's ruling.
//! They are written in the writer's group commit with the game's moves ([`crate::Op::Incident`])
//! and are not changes of the round: spectators' feeds never carry them.

use crate::error::{Result, StoreError};
use crate::id::{GameId, RoundId};
use crate::pool::{Store, now_ms, on_pool};
use relay_core::incident::{IllegalKind, Ruling};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Text the store holds for one of the words below, when it is not one of them (a row
/// written by hand or by a newer relay): read as a decoding fault, not guessed at.
#[derive(Debug, thiserror::Error)]
#[error("{what} {given:?} is not one relay knows")]
pub struct UnknownWord {
    pub what: &'static str,
    pub given: String,
}

/// Enums the store keeps as their snake_case names (a text column, the same words in JSON),
/// read back with `from_name`.
macro_rules! stored_words {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $word)] $variant),+
        }

        impl $name {
            /// The word the store and JSON write.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }
        }

        impl $name {
            /// The value a stored word names, if it names one.
            pub fn from_name(s: &str) -> Option<$name> {
                match s {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

stored_words!(
    /// What an incident of the record is.
    IncidentKind {
        /// An illegal move completed by a clock press, or a press without a move. (The
        /// default only starts `Incident::default()`; every maker names its kind.)
        #[default]
        IllegalMove = "illegal_move",
        /// A clock's time set by the arbiter on the clock itself.
        ClockAdjustment = "clock_adjustment",
        /// Recording began in the middle of the game (the moves before were not seen).
        JoinedLate = "joined_late",
        /// Moves read back from the board's memory after an outage.
        Recovered = "recovered",
    }
);

stored_words!(
    /// Whose move or whose clock.
    Side {
        #[default]
        White = "white",
        Black = "black",
    }
);

impl From<relay_core::recorder::ColorName> for Side {
    fn from(c: relay_core::recorder::ColorName) -> Side {
        match c {
            relay_core::recorder::ColorName::White => Side::White,
            relay_core::recorder::ColorName::Black => Side::Black,
        }
    }
}

impl Side {
    pub fn is_white(self) -> bool {
        self == Side::White
    }
}

/// A stored word read back with `parse` (a type's `from_name`): a word relay does not know
/// is a decoding fault of the row.
fn word<T>(what: &'static str, s: &str, parse: fn(&str) -> Option<T>) -> Result<T> {
    parse(s).ok_or_else(|| {
        let e = UnknownWord {
            what,
            given: s.to_string(),
        };
        StoreError::Database(sqlx::Error::Decode(Box::new(e)))
    })
}

/// What the board showed, as it is stored; `id` is 0 before it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Incident {
    pub id: i64,
    pub game_id: GameId,
    pub kind: IncidentKind,
    /// The move it came in place of (an illegal move) or before (a correction), from 1.
    pub ply: u32,
    /// Whose move or whose clock.
    pub color: Side,
    /// An illegal move's kind.
    pub illegal: Option<IllegalKind>,
    /// The squares as seen (`g1g4`); none for a press without a move.
    pub uci: Option<String>,
    /// The piece moved and the one on the target square, as FEN letters.
    pub piece: Option<String>,
    pub captured: Option<String>,
    pub clock_pressed: bool,
    /// A correction: by how much the side's clock changed.
    pub delta_ms: Option<i64>,
    pub at_ms: i64,
    /// The arbiter's answer; none yet.
    pub ruling: Option<Ruling>,
    pub ruled_at_ms: Option<i64>,
}

pub(crate) const INSERT: &str = "INSERT INTO incidents (game_id, kind, ply, color, illegal, uci, piece, captured, clock_pressed, delta_ms, at_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";

/// The columns read back, in [`Row`]'s order.
macro_rules! select {
    ($rest:literal) => {
        concat!("SELECT id, game_id, kind, ply, color, illegal, uci, piece, captured, clock_pressed, delta_ms, at_ms, ruling, ruled_at_ms FROM incidents ", $rest)
    };
}

type Row = (
    i64,
    i64,
    String,
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
    i64,
    Option<String>,
    Option<i64>,
);

fn from_row(r: Row) -> Result<Incident> {
    Ok(Incident {
        id: r.0,
        game_id: GameId::from(r.1),
        kind: word("incident kind", &r.2, IncidentKind::from_name)?,
        ply: u32::try_from(r.3).unwrap_or(0),
        color: word("side", &r.4, Side::from_name)?,
        illegal: (r.5.as_deref())
            .map(|n| word("illegal move kind", n, IllegalKind::from_name))
            .transpose()?,
        uci: r.6,
        piece: r.7,
        captured: r.8,
        clock_pressed: r.9 != 0,
        delta_ms: r.10,
        at_ms: r.11,
        ruling: (r.12.as_deref())
            .map(|n| word("ruling", n, Ruling::from_name))
            .transpose()?,
        ruled_at_ms: r.13,
    })
}

impl Store {
    /// A game's record, oldest first.
    pub async fn game_incidents(&self, game: GameId) -> Result<Vec<Incident>> {
        let rows: Vec<Row> = on_pool!(self, pool => sqlx::query_as(select!("WHERE game_id = $1 ORDER BY id"))
            .bind(game).fetch_all(pool).await?);
        rows.into_iter().map(from_row).collect()
    }

    /// The illegal moves of a round's games that no arbiter has ruled on yet, oldest first
    /// (what the console lists when it opens).
    pub async fn open_illegal_moves(&self, round: RoundId) -> Result<Vec<Incident>> {
        let rows: Vec<Row> = on_pool!(self, pool => sqlx::query_as(select!(
            "WHERE kind = 'illegal_move' AND ruling IS NULL AND game_id IN (SELECT id FROM games WHERE round_id = $1) ORDER BY id"))
            .bind(round).fetch_all(pool).await?);
        rows.into_iter().map(from_row).collect()
    }

    /// One incident.
    pub async fn incident(&self, id: i64) -> Result<Incident> {
        let row: Option<Row> = on_pool!(self, pool => sqlx::query_as(select!("WHERE id = $1"))
            .bind(id).fetch_optional(pool).await?);
        row.map(from_row).transpose()?.ok_or(StoreError::NotFound {
            what: "incident",
            id: id.to_string(),
        })
    }

    /// The arbiter's ruling on an incident, with an audit entry; the incident as it is now
    /// (as written, not read again).
    pub async fn rule_incident(&self, id: i64, ruling: Ruling, actor: &str) -> Result<Incident> {
        let before = self.incident(id).await?;
        let detail = serde_json::json!({
            "incident": id,
            "ruling": ruling,
            "kind": before.kind,
            "illegal": before.illegal,
            "ply": before.ply,
            "color": before.color,
            "uci": before.uci,
        })
        .to_string();
        let at = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query("UPDATE incidents SET ruling = $1, ruled_at_ms = $2 WHERE id = $3")
                .bind(ruling.as_str()).bind(at).bind(id).execute(&mut *tx).await?;
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                .bind(at).bind(actor).bind("incident_ruling").bind(before.game_id).bind(&detail)
                .execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(Incident {
            ruling: Some(ruling),
            ruled_at_ms: Some(at),
            ..before
        })
    }
}
