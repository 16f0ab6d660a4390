//! Board → host messages (dgt-protocol.md §5 and §10), decoded from one complete frame.

use super::clock::{ClockMessage, ClockSide};
use super::eeprom::{EeRecord, parse_records};
use super::piece::{DgtSquare, PieceCode, Placement};
use serde::Serialize;

/// Message ids, with bit 7 set as they appear on the line.
pub mod id {
    pub const BOARD_DUMP: u8 = 0x86;
    pub const BWTIME: u8 = 0x8D;
    pub const FIELD_UPDATE: u8 = 0x8E;
    pub const EE_MOVES: u8 = 0x8F;
    pub const BUSADRES: u8 = 0x90;
    pub const SERIALNR: u8 = 0x91;
    pub const TRADEMARK: u8 = 0x92;
    pub const VERSION: u8 = 0x93;
    pub const BOARD_DUMP_50B: u8 = 0x94;
    pub const BOARD_DUMP_50W: u8 = 0x95;
    pub const BATTERY_STATUS: u8 = 0xA0;
    pub const LONG_SERIALNR: u8 = 0xA2;

    pub const BUS_BRD_DUMP: u8 = 0x83;
    pub const BUS_BWTIME: u8 = 0x84;
    pub const BUS_UPDATE: u8 = 0x85;
    pub const BUS_FROM_START: u8 = 0x86;
    pub const BUS_PING: u8 = 0x87;
    pub const BUS_START_GAME_WRITTEN: u8 = 0x88;
    pub const BUS_VERSION: u8 = 0x89;
    pub const BUS_BRD_DUMP_50B: u8 = 0x8A;
}

/// Battery report of a Bluetooth board (§9.5). 0x7F in a time field means "not available".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct BatteryStatus {
    pub percent: u8,
    /// Hours and minutes left while running (or until charged while charging).
    pub time_left: (u8, u8),
    pub on_time: (u8, u8),
    pub standby: (u8, u8, u8),
    pub charging: bool,
    pub discharging: bool,
}

/// A message in single-board mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Message {
    BoardDump {
        placement: Placement,
    },
    FieldUpdate {
        square: DgtSquare,
        piece: PieceCode,
    },
    Clock {
        clock: ClockMessage,
    },
    /// The short serial number (five digits on current firmware; old firmware adds more).
    SerialNumber {
        serial: String,
    },
    LongSerialNumber {
        serial: String,
    },
    Trademark {
        text: String,
    },
    Version {
        major: u8,
        minor: u8,
    },
    BusAddress {
        address: u16,
    },
    Battery {
        status: BatteryStatus,
    },
    EeMoves {
        records: Vec<EeRecord>,
    },
    /// A clock record from a bus board's change log (§9.6, §10): a lever press halted `side`'s
    /// clock at `seconds`. The session hands these on in the order of the log, between the
    /// field changes around them, so each belongs to the move whose squares it follows. No
    /// single-board frame carries one alone: it encodes as a one-record EEPROM log.
    ClockRecord {
        side: ClockSide,
        seconds: u32,
    },
    /// A draughts board dump (50 squares); kept so an operator sees what arrived.
    DraughtsDump {
        squares: Vec<u8>,
    },
    /// A well-framed message with an id we do not know.
    Unknown {
        id: u8,
        payload: Vec<u8>,
    },
    /// A known id whose payload does not have the shape the protocol gives it.
    Malformed {
        id: u8,
        payload: Vec<u8>,
        reason: String,
    },
}

/// A reply in bus mode: which board answered, and what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BusReply {
    pub address: u16,
    pub reply: BusReplyKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum BusReplyKind {
    BoardDump {
        placement: Placement,
    },
    Clock {
        clock: ClockMessage,
    },
    /// Records since the previous SEND_CHANGES (empty when nothing happened).
    Changes {
        records: Vec<EeRecord>,
    },
    /// Records since the last SET_START_GAME.
    FromStart {
        records: Vec<EeRecord>,
    },
    Ping,
    StartGameWritten,
    Version {
        major: u8,
        minor: u8,
    },
    DraughtsDump {
        squares: Vec<u8>,
    },
    Unknown {
        id: u8,
        data: Vec<u8>,
    },
    Malformed {
        id: u8,
        data: Vec<u8>,
        reason: String,
    },
}

fn ascii(payload: &[u8]) -> String {
    payload.iter().map(|&b| char::from(b & 0x7F)).collect()
}

fn malformed(id: u8, payload: &[u8], reason: &str) -> Message {
    Message::Malformed {
        id,
        payload: payload.to_vec(),
        reason: reason.to_string(),
    }
}

fn placement(payload: &[u8]) -> Option<Placement> {
    let bytes: &[u8; 64] = payload.try_into().ok()?;
    Some(Placement::from_bytes(bytes))
}

impl Message {
    /// Interprets the payload of a frame with single-board id `id`.
    pub fn from_frame(id: u8, payload: &[u8]) -> Message {
        match id {
            id::BOARD_DUMP => match placement(payload) {
                Some(placement) => Message::BoardDump { placement },
                None => malformed(id, payload, "board dump must carry 64 squares"),
            },
            id::BWTIME => match <&[u8; 7]>::try_from(payload) {
                Ok(p) => match ClockMessage::decode(p) {
                    Ok(clock) => Message::Clock { clock },
                    Err(e) => malformed(id, payload, &e.to_string()),
                },
                Err(_) => malformed(id, payload, "clock message must carry 7 bytes"),
            },
            id::FIELD_UPDATE => match payload {
                [sq, pc] => match DgtSquare::new(*sq) {
                    Some(square) => Message::FieldUpdate {
                        square,
                        piece: PieceCode::from_byte(*pc),
                    },
                    None => malformed(id, payload, "square out of range"),
                },
                _ => malformed(id, payload, "field update must carry 2 bytes"),
            },
            id::EE_MOVES => Message::EeMoves {
                records: parse_records(payload),
            },
            id::BUSADRES => match payload {
                [hi, lo] => Message::BusAddress {
                    address: u16::from(*hi) << 7 | u16::from(*lo),
                },
                _ => malformed(id, payload, "bus address must carry 2 bytes"),
            },
            id::SERIALNR => Message::SerialNumber {
                serial: ascii(payload).trim().to_string(),
            },
            id::LONG_SERIALNR => Message::LongSerialNumber {
                serial: ascii(payload),
            },
            id::TRADEMARK => Message::Trademark {
                text: ascii(payload),
            },
            id::VERSION => match payload {
                [major, minor] => Message::Version {
                    major: *major,
                    minor: *minor,
                },
                _ => malformed(id, payload, "version must carry 2 bytes"),
            },
            id::BOARD_DUMP_50B | id::BOARD_DUMP_50W => Message::DraughtsDump {
                squares: payload.to_vec(),
            },
            id::BATTERY_STATUS => match payload {
                [p0, p1, p2, p3, p4, p5, p6, p7, p8, ..] => Message::Battery {
                    status: BatteryStatus {
                        percent: *p0,
                        time_left: (*p1, *p2),
                        on_time: (*p3, *p4),
                        standby: (*p5, *p6, *p7),
                        charging: p8 & 1 != 0,
                        discharging: p8 & 2 != 0,
                    },
                },
                _ => malformed(id, payload, "battery status must carry 9 bytes"),
            },
            _ => Message::Unknown {
                id,
                payload: payload.to_vec(),
            },
        }
    }

    /// The frame for this message, as a board sends it (used by the emulator and tests).
    pub fn encode(&self) -> Vec<u8> {
        let (id, payload): (u8, Vec<u8>) = match self {
            Message::BoardDump { placement } => (id::BOARD_DUMP, placement.to_bytes().to_vec()),
            Message::FieldUpdate { square, piece } => {
                (id::FIELD_UPDATE, vec![square.index(), piece.to_byte()])
            }
            Message::Clock { clock } => (id::BWTIME, clock.to_payload().to_vec()),
            Message::SerialNumber { serial } => (id::SERIALNR, serial.as_bytes().to_vec()),
            Message::LongSerialNumber { serial } => (id::LONG_SERIALNR, serial.as_bytes().to_vec()),
            Message::Trademark { text } => (id::TRADEMARK, text.as_bytes().to_vec()),
            Message::Version { major, minor } => (id::VERSION, vec![*major, *minor]),
            Message::BusAddress { address } => (
                id::BUSADRES,
                vec![(address >> 7) as u8 & 0x7F, *address as u8 & 0x7F],
            ),
            Message::Battery { status: s } => (
                id::BATTERY_STATUS,
                vec![
                    s.percent,
                    s.time_left.0,
                    s.time_left.1,
                    s.on_time.0,
                    s.on_time.1,
                    s.standby.0,
                    s.standby.1,
                    s.standby.2,
                    u8::from(s.charging) | u8::from(s.discharging) << 1,
                ],
            ),
            Message::EeMoves { records } => {
                let mut data = Vec::new();
                for r in records {
                    r.encode(&mut data);
                }
                (id::EE_MOVES, data)
            }
            Message::ClockRecord { side, seconds } => {
                let mut data = Vec::new();
                EeRecord::Clock {
                    side: *side,
                    seconds: *seconds,
                }
                .encode(&mut data);
                (id::EE_MOVES, data)
            }
            Message::DraughtsDump { squares } => (id::BOARD_DUMP_50B, squares.clone()),
            Message::Unknown { id, payload } | Message::Malformed { id, payload, .. } => {
                (*id, payload.clone())
            }
        };
        frame(id, &payload)
    }
}

/// Builds a single-board frame: id, 14-bit total length, payload (bytes masked to 7 bits).
pub fn frame(id: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() + 3;
    let mut out = Vec::with_capacity(len);
    out.push(id | 0x80);
    out.push((len >> 7) as u8 & 0x7F);
    out.push(len as u8 & 0x7F);
    out.extend(payload.iter().map(|b| b & 0x7F));
    out
}

/// Builds a bus-mode reply: id, length, address, data, checksum (§10).
pub fn bus_frame(id: u8, address: u16, data: &[u8]) -> Vec<u8> {
    let len = data.len() + 6;
    let mut out = Vec::with_capacity(len);
    out.push(id | 0x80);
    out.push((len >> 7) as u8 & 0x7F);
    out.push(len as u8 & 0x7F);
    out.push((address >> 7) as u8 & 0x7F);
    out.push(address as u8 & 0x7F);
    out.extend(data.iter().map(|b| b & 0x7F));
    out.push(checksum(&out));
    out
}

/// The bus checksum: sum of the bytes, modulo 128.
pub fn checksum(bytes: &[u8]) -> u8 {
    (bytes.iter().map(|&b| u32::from(b)).sum::<u32>() & 0x7F) as u8
}

impl BusReplyKind {
    /// Interprets the data (between address and checksum) of a bus reply with id `id`.
    pub fn from_frame(id: u8, data: &[u8]) -> BusReplyKind {
        let bad = |reason: &str| BusReplyKind::Malformed {
            id,
            data: data.to_vec(),
            reason: reason.to_string(),
        };
        match id {
            id::BUS_BRD_DUMP => match placement(data) {
                Some(placement) => BusReplyKind::BoardDump { placement },
                None => bad("board dump must carry 64 squares"),
            },
            id::BUS_BWTIME => match <&[u8; 7]>::try_from(data) {
                Ok(p) => match ClockMessage::decode(p) {
                    Ok(clock) => BusReplyKind::Clock { clock },
                    Err(e) => bad(&e.to_string()),
                },
                Err(_) => bad("clock reply must carry 7 bytes"),
            },
            id::BUS_UPDATE => BusReplyKind::Changes {
                records: parse_records(data),
            },
            id::BUS_FROM_START => BusReplyKind::FromStart {
                records: parse_records(data),
            },
            id::BUS_PING => BusReplyKind::Ping,
            id::BUS_START_GAME_WRITTEN => BusReplyKind::StartGameWritten,
            id::BUS_VERSION => match data {
                [major, minor] => BusReplyKind::Version {
                    major: *major,
                    minor: *minor,
                },
                // Before version 1.2 the reply carried no version bytes (§10).
                [] => BusReplyKind::Version { major: 1, minor: 0 },
                _ => bad("version must carry 2 bytes"),
            },
            id::BUS_BRD_DUMP_50B => BusReplyKind::DraughtsDump {
                squares: data.to_vec(),
            },
            _ => BusReplyKind::Unknown {
                id,
                data: data.to_vec(),
            },
        }
    }

    pub fn encode(&self, address: u16) -> Vec<u8> {
        let records_bytes = |records: &[EeRecord]| {
            let mut data = Vec::new();
            for r in records {
                r.encode(&mut data);
            }
            data
        };
        let (id, data): (u8, Vec<u8>) = match self {
            BusReplyKind::BoardDump { placement } => {
                (id::BUS_BRD_DUMP, placement.to_bytes().to_vec())
            }
            BusReplyKind::Clock { clock } => (id::BUS_BWTIME, clock.to_payload().to_vec()),
            BusReplyKind::Changes { records } => (id::BUS_UPDATE, records_bytes(records)),
            BusReplyKind::FromStart { records } => (id::BUS_FROM_START, records_bytes(records)),
            BusReplyKind::Ping => (id::BUS_PING, vec![]),
            BusReplyKind::StartGameWritten => (id::BUS_START_GAME_WRITTEN, vec![]),
            BusReplyKind::Version { major, minor } => (id::BUS_VERSION, vec![*major, *minor]),
            BusReplyKind::DraughtsDump { squares } => (id::BUS_BRD_DUMP_50B, squares.clone()),
            BusReplyKind::Unknown { id, data } | BusReplyKind::Malformed { id, data, .. } => {
                (*id, data.clone())
            }
        };
        bus_frame(id, address, &data)
    }
}

impl EeRecord {
    /// The message a change record stands for, as a live board would have sent it: a square's
    /// new state, or the lever press that halted a clock. Markers and the rest have none.
    pub fn as_message(&self) -> Option<Message> {
        match *self {
            EeRecord::Field { square, piece, .. } => Some(Message::FieldUpdate { square, piece }),
            EeRecord::Clock { side, seconds } => Some(Message::ClockRecord { side, seconds }),
            _ => None,
        }
    }
}
