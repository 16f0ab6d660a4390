//! The change records, typed: what each kind of change in the `changes` table holds. The
//! store writes them and the service reads them back (resuming clients, delay lines) through
//! these types only, so a record's shape is written in one place.

use crate::model::{Change, StoredMove};
use serde::{Deserialize, Serialize};

/// A move as recorded in a change (and as spectators get it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub ply: u32,
    pub san: String,
    pub uci: String,
    pub clk_ms: Option<u64>,
    pub emt_ms: Option<u64>,
    /// The position after the move.
    pub fen: String,
}

impl From<&StoredMove> for MoveRecord {
    fn from(m: &StoredMove) -> MoveRecord {
        MoveRecord {
            ply: m.ply,
            san: m.san.clone(),
            uci: m.uci.clone(),
            clk_ms: m.clk_ms,
            emt_ms: m.emt_ms,
            fen: m.fen_after.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveClockRecord {
    pub ply: u32,
    pub clk_ms: Option<u64>,
    pub emt_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncateRecord {
    pub from_ply: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRecord {
    pub result: String,
    pub termination: Option<String>,
    pub status: String,
}

/// One change to a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeRecord {
    Move(MoveRecord),
    MoveClock(MoveClockRecord),
    Truncate(TruncateRecord),
    Result(ResultRecord),
    /// The game was set up, paired, placed or replaced as a whole: read the game itself.
    Game,
}

impl ChangeRecord {
    /// The `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            ChangeRecord::Move(_) => "move",
            ChangeRecord::MoveClock(_) => "move_clock",
            ChangeRecord::Truncate(_) => "truncate",
            ChangeRecord::Result(_) => "result",
            ChangeRecord::Game => "game",
        }
    }

    /// The `payload` column (JSON).
    pub fn payload(&self) -> String {
        let v = match self {
            ChangeRecord::Move(r) => serde_json::to_string(r),
            ChangeRecord::MoveClock(r) => serde_json::to_string(r),
            ChangeRecord::Truncate(r) => serde_json::to_string(r),
            ChangeRecord::Result(r) => serde_json::to_string(r),
            ChangeRecord::Game => Ok("{}".to_string()),
        };
        // Plain structs of strings and numbers always serialize.
        v.unwrap_or_else(|_| "{}".to_string())
    }
}

impl Change {
    /// Whether it is a move, told from its kind alone (the payload is not read).
    pub fn is_move(&self) -> bool {
        self.kind == "move"
    }

    /// Whether it truncates a game, sets its result or changes it as a whole (an arbiter's
    /// edit, a pairing), told from its kind alone: a reader of the log that only needs to
    /// know does not parse every move's payload.
    pub fn edits_game(&self) -> bool {
        matches!(self.kind.as_str(), "truncate" | "result" | "game")
    }

    /// The change, typed. Kinds other than the four game edits (pairings, start, assign,
    /// replace) read as [`ChangeRecord::Game`]; a payload that does not match its kind is an
    /// error.
    pub fn record(&self) -> Result<ChangeRecord, serde_json::Error> {
        Ok(match self.kind.as_str() {
            "move" => ChangeRecord::Move(serde_json::from_str(&self.payload)?),
            "move_clock" => ChangeRecord::MoveClock(serde_json::from_str(&self.payload)?),
            "truncate" => ChangeRecord::Truncate(serde_json::from_str(&self.payload)?),
            "result" => ChangeRecord::Result(serde_json::from_str(&self.payload)?),
            _ => ChangeRecord::Game,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written() {
        let records = [
            ChangeRecord::Move(MoveRecord {
                ply: 3,
                san: "Nf3".into(),
                uci: "g1f3".into(),
                clk_ms: Some(5_400_000),
                emt_ms: None,
                fen: "8/8/8/8/8/8/8/8 w - - 0 1".into(),
            }),
            ChangeRecord::MoveClock(MoveClockRecord {
                ply: 3,
                clk_ms: Some(1),
                emt_ms: Some(2),
            }),
            ChangeRecord::Truncate(TruncateRecord { from_ply: 4 }),
            ChangeRecord::Result(ResultRecord {
                result: "1-0".into(),
                termination: None,
                status: "finished".into(),
            }),
        ];
        for r in records {
            let c = Change {
                seq: crate::Seq::from(1),
                game_id: Some(crate::GameId::from(1)),
                kind: r.kind().into(),
                payload: r.payload(),
                at_ms: 0,
            };
            assert_eq!(c.record().expect("typed"), r);
        }
        let bad = Change {
            seq: crate::Seq::from(1),
            game_id: Some(crate::GameId::from(1)),
            kind: "move".into(),
            payload: r#"{"ply":"x"}"#.into(),
            at_ms: 0,
        };
        assert!(bad.record().is_err());
    }
}
