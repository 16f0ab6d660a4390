//! The WebSocket messages: the one place their shapes are written. Every message a client
//! gets is a [`ServerMessage`], encoded once per event and shared by every client of a feed;
//! `GET /api/ws-messages.schema.json` serves the JSON Schema of this enum, so pages and
//! platforms have a contract.

use super::live::{ClockView, EboardView};
use super::views::{GameView, RoundView};
use relay_store::{ChangeRecord, MoveRecord, StoredMove};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A move as spectators get it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MoveView {
    /// 1 for White's first move.
    pub ply: u32,
    pub san: String,
    pub uci: String,
    /// The position after the move (FEN).
    pub fen: String,
    /// The mover's clock after the move (increment included), when a clock is connected.
    pub clk_ms: Option<u64>,
    /// Time the move took.
    pub emt_ms: Option<u64>,
}

impl From<&StoredMove> for MoveView {
    fn from(m: &StoredMove) -> MoveView {
        MoveView::from(MoveRecord::from(m))
    }
}

impl From<MoveRecord> for MoveView {
    fn from(m: MoveRecord) -> MoveView {
        MoveView {
            ply: m.ply,
            san: m.san,
            uci: m.uci,
            fen: m.fen,
            clk_ms: m.clk_ms,
            emt_ms: m.emt_ms,
        }
    }
}

/// One game's running clock, in a bundle of readings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GameClock {
    pub game_id: i64,
    pub clock: ClockView,
}

/// What the server sends on `/api/rounds/{id}/ws` and `/api/games/{id}/ws`. `seq` is the
/// round's change number: changes carry a new one, in order; running clocks and e-board news
/// repeat the latest. A client coming back with `?since=seq` gets what it missed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The first message: the round (`round`) or game (`game`) as the client's view shows it.
    Snapshot {
        seq: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        round: Option<Box<RoundView>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        game: Option<Box<GameView>>,
    },
    /// A move was played. `clock` is the running clock after it, when the lever press came
    /// with the move; `read_at_ms` is when the board message that completed it was read.
    Move {
        seq: i64,
        game_id: i64,
        #[serde(rename = "move")]
        mv: MoveView,
        #[serde(skip_serializing_if = "Option::is_none")]
        read_at_ms: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// The clock of a move already sent, known from the lever press that ended it; `clock` is
    /// the running clock from that press (no separate `clock` message follows).
    MoveClock {
        seq: i64,
        game_id: i64,
        ply: u32,
        clk_ms: Option<u64>,
        emt_ms: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// The moves from `from_ply` on are gone (a takeback or correction).
    Truncate {
        seq: i64,
        game_id: i64,
        from_ply: u32,
    },
    Result {
        seq: i64,
        game_id: i64,
        result: String,
        termination: Option<String>,
        status: String,
    },
    /// A game set up, paired or replaced as a whole.
    Game {
        seq: i64,
        game: Box<GameView>,
    },
    /// The side to move changed on a game's clock (a lever press with no move to carry it).
    Clock {
        seq: i64,
        game_id: i64,
        clock: ClockView,
    },
    /// The latest reading of each running clock, every 10 s (pages count down in between).
    Clocks {
        seq: i64,
        clocks: Vec<GameClock>,
    },
    /// An e-board's state, for clients that asked (`?eboards=1`).
    Eboard {
        seq: i64,
        eboard: EboardView,
    },
    /// Every 5 s, stamped with the server's time.
    Heartbeat {
        at_ms: i64,
    },
    Error {
        error: String,
    },
}

impl ServerMessage {
    pub fn encode(&self) -> String {
        // Strings, numbers and JSON values only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// The round's change number the message carries.
    pub fn seq(&self) -> Option<i64> {
        match self {
            ServerMessage::Snapshot { seq, .. }
            | ServerMessage::Move { seq, .. }
            | ServerMessage::MoveClock { seq, .. }
            | ServerMessage::Truncate { seq, .. }
            | ServerMessage::Result { seq, .. }
            | ServerMessage::Game { seq, .. }
            | ServerMessage::Clock { seq, .. }
            | ServerMessage::Clocks { seq, .. }
            | ServerMessage::Eboard { seq, .. } => Some(*seq),
            ServerMessage::Heartbeat { .. } | ServerMessage::Error { .. } => None,
        }
    }

    /// The message as a client `delay_ms` behind gets it: every running clock in it
    /// re-stamped, so a page counts down from the delayed moment, not the live one.
    pub fn delayed(&self, delay_ms: i64) -> ServerMessage {
        let mut m = self.clone();
        if delay_ms <= 0 {
            return m;
        }
        match &mut m {
            ServerMessage::Move { clock, .. } | ServerMessage::MoveClock { clock, .. } => {
                *clock = clock.map(|c| c.shifted(delay_ms));
            }
            ServerMessage::Clock { clock, .. } => *clock = clock.shifted(delay_ms),
            ServerMessage::Clocks { clocks, .. } => {
                for c in clocks {
                    c.clock = c.clock.shifted(delay_ms);
                }
            }
            ServerMessage::Game { game, .. } => {
                game.clock = game.clock.map(|c| c.shifted(delay_ms));
            }
            _ => {}
        }
        m
    }

    /// A stored change as the message it was announced with; `None` for a change that needs
    /// the game read as a whole (or a record that does not read).
    pub fn from_change(seq: i64, game_id: i64, record: ChangeRecord) -> Option<ServerMessage> {
        Some(match record {
            ChangeRecord::Move(m) => ServerMessage::Move {
                seq,
                game_id,
                mv: m.into(),
                read_at_ms: None,
                clock: None,
            },
            ChangeRecord::MoveClock(c) => ServerMessage::MoveClock {
                seq,
                game_id,
                ply: c.ply,
                clk_ms: c.clk_ms,
                emt_ms: c.emt_ms,
                clock: None,
            },
            ChangeRecord::Truncate(t) => ServerMessage::Truncate {
                seq,
                game_id,
                from_ply: t.from_ply,
            },
            ChangeRecord::Result(r) => ServerMessage::Result {
                seq,
                game_id,
                result: r.result,
                termination: r.termination,
                status: r.status,
            },
            ChangeRecord::Game => return None,
        })
    }
}

/// The JSON Schema of every WebSocket message.
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(ServerMessage)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_their_type_and_the_schema_names_every_one() {
        let m = ServerMessage::Truncate {
            seq: 4,
            game_id: 2,
            from_ply: 7,
        };
        assert_eq!(
            m.encode(),
            r#"{"type":"truncate","seq":4,"game_id":2,"from_ply":7}"#
        );
        let schema = schema().to_string();
        for kind in [
            "snapshot",
            "move",
            "move_clock",
            "truncate",
            "result",
            "game",
            "clock",
            "clocks",
            "eboard",
            "heartbeat",
            "error",
        ] {
            assert!(schema.contains(&format!("\"{kind}\"")), "{kind}");
        }
    }
}
