//! Records of the board's EEPROM log (dgt-protocol.md §9.6). The same records arrive in
//! DGT_MSG_EE_MOVES (single-board mode) and in the bus-mode change and from-start replies.

use super::clock::ClockSide;
use super::piece::{DgtSquare, PieceCode};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EeRecord {
    /// A square changed (`piece` empty = a piece was lifted). `quick` = less than ~250 ms after
    /// the previous field record.
    Field {
        square: DgtSquare,
        piece: PieceCode,
        quick: bool,
    },
    /// Time of the clock side that was halted by a lever press, in seconds.
    Clock {
        side: ClockSide,
        seconds: u32,
    },
    PowerUp,
    EndOfFile,
    /// 16 pieces on the a, b, g and h files that are not the standard start (Chess960 setups).
    FourRows,
    EmptyBoard,
    Downloaded,
    /// The start position, White at the connector side.
    BeginPosition,
    /// The start position, board turned around.
    BeginPositionRotated,
    /// Bus SET_START_GAME was received; a field record for every piece follows.
    StartTag,
    Watchdog,
    Nop,
    /// A byte that starts no known record.
    Unknown {
        byte: u8,
    },
    /// The data ended inside a record.
    Truncated {
        bytes: u8,
    },
}

/// Parses a record stream. Never fails: unknown bytes and a cut-off tail become records.
pub fn parse_records(data: &[u8]) -> Vec<EeRecord> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        let need = match b {
            0x40..=0x5F => 2,
            0x60..=0x69 | 0x70..=0x79 => 3,
            _ => 1,
        };
        if i + need > data.len() {
            out.push(EeRecord::Truncated {
                bytes: (data.len() - i) as u8,
            });
            break;
        }
        let record = match b {
            0x40..=0x5F => match DgtSquare::new(data[i + 1]) {
                Some(square) => EeRecord::Field {
                    square,
                    piece: PieceCode::from_byte(b & 0x0F),
                    quick: b & 0x10 != 0,
                },
                None => EeRecord::Unknown { byte: b },
            },
            0x60..=0x69 | 0x70..=0x79 => {
                let side = if b & 0x10 != 0 {
                    ClockSide::Left
                } else {
                    ClockSide::Right
                };
                match (bcd(data[i + 1]), bcd(data[i + 2])) {
                    (Some(m), Some(s)) => EeRecord::Clock {
                        side,
                        seconds: u32::from(b & 0x0F) * 3600 + m * 60 + s,
                    },
                    _ => EeRecord::Unknown { byte: b },
                }
            }
            0x6A => EeRecord::PowerUp,
            0x6B => EeRecord::EndOfFile,
            0x6C => EeRecord::FourRows,
            0x6D => EeRecord::EmptyBoard,
            0x6E => EeRecord::Downloaded,
            0x6F => EeRecord::BeginPosition,
            0x7A => EeRecord::BeginPositionRotated,
            0x7B => EeRecord::StartTag,
            0x7C => EeRecord::Watchdog,
            0x7F | 0x00 => EeRecord::Nop,
            _ => EeRecord::Unknown { byte: b },
        };
        i += if matches!(record, EeRecord::Unknown { .. }) {
            1
        } else {
            need
        };
        out.push(record);
    }
    out
}

fn bcd(b: u8) -> Option<u32> {
    let (hi, lo) = (b >> 4, b & 0x0F);
    (hi <= 5 && lo <= 9).then(|| u32::from(hi) * 10 + u32::from(lo))
}

impl EeRecord {
    /// The record's bytes, as the board writes them.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            EeRecord::Field {
                square,
                piece,
                quick,
            } => {
                out.push(0x40 | u8::from(quick) << 4 | piece.to_byte());
                out.push(square.index());
            }
            EeRecord::Clock { side, seconds } => {
                let s = seconds.min(9 * 3600 + 59 * 60 + 59);
                let left = if side == ClockSide::Left { 0x10 } else { 0 };
                out.push(0x60 | left | (s / 3600) as u8);
                let m = s / 60 % 60;
                out.push(((m / 10) as u8) << 4 | (m % 10) as u8);
                let sec = s % 60;
                out.push(((sec / 10) as u8) << 4 | (sec % 10) as u8);
            }
            EeRecord::PowerUp => out.push(0x6A),
            EeRecord::EndOfFile => out.push(0x6B),
            EeRecord::FourRows => out.push(0x6C),
            EeRecord::EmptyBoard => out.push(0x6D),
            EeRecord::Downloaded => out.push(0x6E),
            EeRecord::BeginPosition => out.push(0x6F),
            EeRecord::BeginPositionRotated => out.push(0x7A),
            EeRecord::StartTag => out.push(0x7B),
            EeRecord::Watchdog => out.push(0x7C),
            EeRecord::Nop => out.push(0x7F),
            EeRecord::Unknown { byte } => out.push(byte & 0x7F),
            EeRecord::Truncated { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let records = vec![
            EeRecord::StartTag,
            EeRecord::Field {
                square: DgtSquare::new(52).expect("square"),
                piece: PieceCode::Empty,
                quick: false,
            },
            EeRecord::Field {
                square: DgtSquare::new(36).expect("square"),
                piece: PieceCode::from_byte(1),
                quick: true,
            },
            EeRecord::Clock {
                side: ClockSide::Left,
                seconds: 2 * 3600 + 59 * 60 + 7,
            },
            EeRecord::Clock {
                side: ClockSide::Right,
                seconds: 61,
            },
            EeRecord::BeginPositionRotated,
            EeRecord::EndOfFile,
        ];
        let mut bytes = Vec::new();
        for r in &records {
            r.encode(&mut bytes);
        }
        assert_eq!(parse_records(&bytes), records);
    }

    #[test]
    fn cut_off_record_is_reported() {
        assert_eq!(
            parse_records(&[0x6B, 0x61, 0x02]),
            vec![EeRecord::EndOfFile, EeRecord::Truncated { bytes: 2 }]
        );
    }
}
