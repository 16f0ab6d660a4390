//! The sans-I/O decoder: bytes in, messages out.
//!
//! Framing (dgt-protocol.md §2.2): only the first byte of a message has bit 7 set, followed by a
//! 14-bit total length in two 7-bit bytes. The decoder skips bytes until it sees a possible
//! message start, and whenever a byte with bit 7 set turns up where a length or payload byte
//! should be, it drops what it had and starts again at that byte: the earlier message was cut
//! short. Lengths are never capped below the protocol's own limit (2^14 - 1), so the 7939-byte
//! EEPROM dump goes through. Skipped bytes are reported, not hidden, so an operator can see a
//! noisy line.

use super::message::{BusReply, BusReplyKind, Message, checksum, id};
use serde::Serialize;

/// Which set of replies the line carries: bus replies (0x83–0x8A) reuse single-board ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineMode {
    #[default]
    Single,
    Bus,
}

/// One decoded item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Decoded {
    Message {
        message: Message,
    },
    Bus {
        reply: BusReply,
    },
    /// A bus reply whose checksum did not match: ask the board to repeat.
    BadChecksum {
        id: u8,
        address: u16,
    },
    /// Bytes that belong to no message (noise, or a message cut short).
    Garbage {
        bytes: Vec<u8>,
    },
}

/// What the decoder has for the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A decoded item and the raw bytes it came from.
    Ready { item: Decoded, raw: Vec<u8> },
    /// Nothing complete yet: feed more bytes.
    NeedMore,
}

/// Turns the bytes of one line into messages. It does no I/O: whoever reads the port pushes
/// what arrived, in pieces of any size, and takes out what became complete.
///
/// A board dump (`86 00 43` and the 64 squares, a8 to h1) of the start position, then a field
/// update (`8E 00 05`, square, piece) that arrives in two reads, then noise:
///
/// ```
/// use boards::protocol::{
///     Decoded, Decoder, DgtSquare, LineMode, Message, Orientation, PieceCode, Placement, Step,
/// };
///
/// // Piece codes (dgt-protocol.md §6.2): 1-6 White's pawn, rook, knight, bishop, king,
/// // queen; 7-12 Black's in the same order; 0 an empty square.
/// let mut dump = vec![0x86, 0x00, 0x43];
/// dump.extend([8, 9, 10, 12, 11, 10, 9, 8]); // a8-h8: r n b q k b n r
/// dump.extend([7; 8]); // the black pawns
/// dump.extend([0; 32]); // four empty ranks
/// dump.extend([1; 8]); // the white pawns
/// dump.extend([2, 3, 4, 6, 5, 4, 3, 2]); // a1-h1: R N B Q K B N R
///
/// let mut decoder = Decoder::new(LineMode::Single);
/// let items = decoder.feed(&dump);
/// let start = Placement::from_board(&shakmaty::Board::default(), Orientation::Normal);
/// // Each item comes with the raw bytes it was decoded from.
/// assert_eq!(
///     items,
///     vec![(Decoded::Message { message: Message::BoardDump { placement: start } }, dump)]
/// );
///
/// // The pawn leaves e2 (index 52): the frame's first three bytes, then the rest.
/// decoder.push(&[0x8E, 0x00, 0x05]);
/// assert_eq!(decoder.next_step(), Step::NeedMore);
/// decoder.push(&[52, 0x00]);
/// let e2 = DgtSquare::new(52).expect("0..=63 is a square");
/// assert_eq!(e2.to_string(), "e2");
/// assert_eq!(
///     decoder.next_step(),
///     Step::Ready {
///         item: Decoded::Message {
///             message: Message::FieldUpdate { square: e2, piece: PieceCode::Empty },
///         },
///         raw: vec![0x8E, 0x00, 0x05, 52, 0x00],
///     }
/// );
/// assert_eq!(decoder.next_step(), Step::NeedMore);
///
/// // Bytes that belong to no frame are reported, not hidden; the decoder goes on with the
/// // next frame (a white pawn, code 1, arriving on e4, index 36).
/// let items: Vec<Decoded> = decoder
///     .feed(&[0x01, 0x02, 0x8E, 0x00, 0x05, 36, 1])
///     .into_iter()
///     .map(|(item, _raw)| item)
///     .collect();
/// let e4 = DgtSquare::new(36).expect("0..=63 is a square");
/// assert_eq!(
///     items,
///     vec![
///         Decoded::Garbage { bytes: vec![0x01, 0x02] },
///         Decoded::Message {
///             message: Message::FieldUpdate { square: e4, piece: PieceCode::from_byte(1) },
///         },
///     ]
/// );
/// assert_eq!(e4.to_string(), "e4");
/// ```
#[derive(Debug, Default)]
pub struct Decoder {
    mode: LineMode,
    buf: Vec<u8>,
    /// Bytes of `buf` before this index are consumed.
    start: usize,
    /// Payload bytes of the frame at `start` already checked for bit 7 (avoids rescanning a
    /// long frame on every feed).
    checked: usize,
}

/// Largest total length the 14-bit length field can express.
pub const MAX_FRAME: usize = (1 << 14) - 1;

impl Decoder {
    pub fn new(mode: LineMode) -> Decoder {
        Decoder {
            mode,
            ..Decoder::default()
        }
    }

    pub fn mode(&self) -> LineMode {
        self.mode
    }

    /// Switches between single-board and bus replies (after the host changed the board's mode).
    pub fn set_mode(&mut self, mode: LineMode) {
        self.mode = mode;
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held that are not yet part of a decoded item.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        let raw = self.buf[self.start..self.start + n].to_vec();
        self.start += n;
        self.checked = 0;
        raw
    }

    fn garbage(&mut self, n: usize) -> Step {
        let bytes = self.take(n);
        Step::Ready {
            item: Decoded::Garbage {
                bytes: bytes.clone(),
            },
            raw: bytes,
        }
    }

    /// The next item, or [`Step::NeedMore`].
    pub fn next_step(&mut self) -> Step {
        let data = &self.buf[self.start..];
        // 1. Skip to a byte with bit 7 set.
        let skip = data
            .iter()
            .position(|b| b & 0x80 != 0)
            .unwrap_or(data.len());
        if skip > 0 {
            return self.garbage(skip);
        }
        if data.len() < 3 {
            // The length bytes may already show that this start is false.
            if let Some(pos) = data.iter().skip(1).position(|b| b & 0x80 != 0) {
                return self.garbage(pos + 1);
            }
            return Step::NeedMore;
        }
        // 2. Header.
        let (msg_id, hi, lo) = (data[0], data[1], data[2]);
        if hi & 0x80 != 0 {
            return self.garbage(1);
        }
        if lo & 0x80 != 0 {
            return self.garbage(2);
        }
        let len = usize::from(hi) << 7 | usize::from(lo);
        let is_bus = self.mode == LineMode::Bus
            && (id::BUS_BRD_DUMP..=id::BUS_BRD_DUMP_50B).contains(&msg_id);
        let min = if is_bus { 6 } else { 3 };
        if len < min {
            return self.garbage(1);
        }
        // 3. Payload: a byte with bit 7 set means this frame was cut short.
        let available = data.len().min(len);
        let from = self.checked.max(3);
        if let Some(pos) = data[from..available].iter().position(|b| b & 0x80 != 0) {
            return self.garbage(from + pos);
        }
        self.checked = available;
        if data.len() < len {
            return Step::NeedMore;
        }
        let raw = self.take(len);
        let item = if is_bus {
            let (body, sum) = raw.split_at(len - 1);
            let address = u16::from(raw[3]) << 7 | u16::from(raw[4]);
            if checksum(body) != sum[0] {
                Decoded::BadChecksum {
                    id: msg_id,
                    address,
                }
            } else {
                Decoded::Bus {
                    reply: BusReply {
                        address,
                        reply: BusReplyKind::from_frame(msg_id, &body[5..]),
                    },
                }
            }
        } else {
            Decoded::Message {
                message: Message::from_frame(msg_id, &raw[3..]),
            }
        };
        Step::Ready { item, raw }
    }

    /// Feeds `bytes` and collects everything that became complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<(Decoded, Vec<u8>)> {
        self.push(bytes);
        let mut out = Vec::new();
        while let Step::Ready { item, raw } = self.next_step() {
            out.push((item, raw));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::message::{bus_frame, frame};
    use crate::protocol::{DgtSquare, PieceCode};

    fn messages(mode: LineMode, bytes: &[u8]) -> Vec<Decoded> {
        Decoder::new(mode)
            .feed(bytes)
            .into_iter()
            .map(|(d, _)| d)
            .collect()
    }

    #[test]
    fn field_update_byte_by_byte() {
        let mut d = Decoder::new(LineMode::Single);
        for b in [0x8E, 0x00, 0x05, 0x34] {
            d.push(&[b]);
            assert_eq!(d.next_step(), Step::NeedMore);
        }
        d.push(&[0x00]);
        let Step::Ready { item, raw } = d.next_step() else {
            panic!("expected a message")
        };
        assert_eq!(raw, vec![0x8E, 0x00, 0x05, 0x34, 0x00]);
        assert_eq!(
            item,
            Decoded::Message {
                message: Message::FieldUpdate {
                    square: DgtSquare::new(0x34).expect("square"),
                    piece: PieceCode::Empty
                }
            }
        );
    }

    #[test]
    fn garbage_before_and_inside() {
        // Noise, then a field update cut short by a new message, then a whole one.
        let bytes = [
            0x01, 0x02, 0x8E, 0x00, 0x05, 0x34, 0x8E, 0x00, 0x05, 0x24, 0x01,
        ];
        let got = messages(LineMode::Single, &bytes);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Decoded::Garbage { bytes: vec![1, 2] });
        assert_eq!(
            got[1],
            Decoded::Garbage {
                bytes: vec![0x8E, 0, 5, 0x34]
            }
        );
        assert!(matches!(
            got[2],
            Decoded::Message {
                message: Message::FieldUpdate { .. }
            }
        ));
    }

    #[test]
    fn long_frames_are_not_capped() {
        let mut payload = vec![0x7F; 7935];
        payload.push(0x6B);
        let f = frame(id::EE_MOVES, &payload);
        assert_eq!(&f[..3], &[0x8F, 0x3E, 0x03]);
        let got = messages(LineMode::Single, &f);
        let [
            Decoded::Message {
                message: Message::EeMoves { records },
            },
        ] = got.as_slice()
        else {
            panic!("expected EE moves, got {got:?}")
        };
        assert_eq!(records.len(), 7936);
    }

    #[test]
    fn bus_ping_and_checksum() {
        let ping = bus_frame(id::BUS_PING, 1025, &[]);
        assert_eq!(ping, vec![0x87, 0x00, 0x06, 0x08, 0x01, 0x16]);
        assert_eq!(
            messages(LineMode::Bus, &ping),
            vec![Decoded::Bus {
                reply: BusReply {
                    address: 1025,
                    reply: BusReplyKind::Ping
                }
            }]
        );
        let mut bad = ping.clone();
        bad[5] = 0x17;
        assert_eq!(
            messages(LineMode::Bus, &bad),
            vec![Decoded::BadChecksum {
                id: 0x87,
                address: 1025
            }]
        );
    }

    #[test]
    fn false_length_resyncs() {
        assert_eq!(
            messages(LineMode::Single, &[0x8E, 0x8E, 0x00, 0x05, 0x10, 0x00]).len(),
            2
        );
        assert_eq!(
            messages(LineMode::Single, &[0x8E, 0x00, 0x01]),
            vec![
                Decoded::Garbage { bytes: vec![0x8E] },
                Decoded::Garbage {
                    bytes: vec![0x00, 0x01]
                }
            ]
        );
    }
}
