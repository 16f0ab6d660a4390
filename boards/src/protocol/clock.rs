//! The clock as seen through the board: DGT_MSG_BWTIME payloads (dgt-protocol.md §7).
//!
//! A BWTIME payload is either a time reading or a clock acknowledgement; the hours nibble of a
//! time can never be 10, so `0x0A` in the low nibble of p0 or p3 marks an ack (§7.1).
//!
//! Which side is which: p0..p2 is side A = the **right** display seen from the front of the
//! clock, p3..p5 is side B = the **left** display (2011+ headers, DGT's own sample driver and the
//! real capture agree; §7.2). Who is running is taken from the running bit and the lever bit,
//! never from the turn bits 3/4, whose meaning the sources dispute (§7.3): we decode them and
//! name them after what the capture shows (bit4 with A running, bit3 with B running).

use serde::Serialize;
use std::fmt;

/// One side of the clock, as seen from the front.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockSide {
    Left,
    Right,
}

impl ClockSide {
    pub fn other(self) -> ClockSide {
        match self {
            ClockSide::Left => ClockSide::Right,
            ClockSide::Right => ClockSide::Left,
        }
    }
}

/// One side's display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
pub struct SideTime {
    /// Time shown, in whole seconds (the message has no tenths; hours go to 9).
    pub seconds: u32,
    /// Bit 4 of the hours byte: the flag fell and the clock is blocked at zero.
    pub flag_fallen: bool,
    /// Bit 5: the time-per-move indicator (Fischer/Bronstein) is on.
    pub time_per_move: bool,
    /// Bit 6: the flag is shown (the clock may still run, e.g. into the next period).
    pub flag_shown: bool,
}

/// Byte p6 of a time reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
pub struct ClockStatus {
    /// Bit 0: the clock runs (0 = stopped with the start/stop button or not started).
    pub running: bool,
    /// Bit 1: the lever is high on the right side (A); 0 = high on the left side (B).
    pub lever_right_high: bool,
    /// Bit 2: the clock's battery is low.
    pub battery_low: bool,
    /// Bit 3: advisory turn bit, seen set while the left side runs.
    pub turn_left: bool,
    /// Bit 4: advisory turn bit, seen set while the right side runs.
    pub turn_right: bool,
    /// Bit 5: no clock is connected; the times are not valid.
    pub no_clock: bool,
}

impl ClockStatus {
    pub fn from_byte(b: u8) -> ClockStatus {
        ClockStatus {
            running: b & 0x01 != 0,
            lever_right_high: b & 0x02 != 0,
            battery_low: b & 0x04 != 0,
            turn_left: b & 0x08 != 0,
            turn_right: b & 0x10 != 0,
            no_clock: b & 0x20 != 0,
        }
    }

    pub fn to_byte(self) -> u8 {
        u8::from(self.running)
            | u8::from(self.lever_right_high) << 1
            | u8::from(self.battery_low) << 2
            | u8::from(self.turn_left) << 3
            | u8::from(self.turn_right) << 4
            | u8::from(self.no_clock) << 5
    }
}

/// A clock time reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
pub struct ClockReading {
    pub left: SideTime,
    pub right: SideTime,
    pub status: ClockStatus,
}

impl ClockReading {
    /// The side whose time runs down, if the clock runs. The lever is high on the side whose
    /// time runs (the player to move has not pressed yet).
    pub fn running_side(&self) -> Option<ClockSide> {
        if !self.status.running || self.status.no_clock {
            return None;
        }
        Some(if self.status.lever_right_high {
            ClockSide::Right
        } else {
            ClockSide::Left
        })
    }

    pub fn side(&self, side: ClockSide) -> &SideTime {
        match side {
            ClockSide::Left => &self.left,
            ClockSide::Right => &self.right,
        }
    }

    pub fn to_payload(&self) -> [u8; 7] {
        let (r0, r1, r2) = encode_side(&self.right);
        let (l0, l1, l2) = encode_side(&self.left);
        [r0, r1, r2, l0, l1, l2, self.status.to_byte()]
    }
}

/// A clock acknowledgement (§7.5): the four ack bytes, with bit 7 rebuilt from p0/p3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ClockAck {
    pub ack: [u8; 4],
}

/// What an acknowledgement says, decoded from its four bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum AckMeaning {
    /// The clock confirms a host command (`command` is the clock sub-command, e.g. 0x0A setnrun).
    Command { command: u8, ok: bool },
    /// Answer to a version request.
    Version { major: u8, minor: u8 },
    /// The clock reports it is ready (0x81).
    Ready,
    /// A button was pressed (0x88); `button` is ack3 (0x31 back … 0x35 OK).
    Button { button: u8 },
    /// Anything else the clock generates by itself (ack1 >= 0x80).
    Other { code: u8 },
}

impl ClockAck {
    pub fn from_payload(p: &[u8; 7]) -> ClockAck {
        ClockAck {
            ack: [
                (p[1] & 0x7F) | ((p[3] << 3) & 0x80),
                (p[2] & 0x7F) | ((p[3] << 2) & 0x80),
                (p[4] & 0x7F) | ((p[0] << 3) & 0x80),
                (p[5] & 0x7F) | ((p[0] << 2) & 0x80),
            ],
        }
    }

    pub fn to_payload(&self) -> [u8; 7] {
        let [a0, a1, a2, a3] = self.ack;
        [
            0x0A | (a2 & 0x80) >> 3 | (a3 & 0x80) >> 2,
            a0 & 0x7F,
            a1 & 0x7F,
            0x0A | (a0 & 0x80) >> 3 | (a1 & 0x80) >> 2,
            a2 & 0x7F,
            a3 & 0x7F,
            0,
        ]
    }

    /// Acknowledgement of clock sub-command `command` (the emulator's answer).
    pub fn for_command(command: u8) -> ClockAck {
        ClockAck {
            ack: [0x10, command, 0, 0],
        }
    }

    pub fn meaning(&self) -> AckMeaning {
        let [a0, a1, a2, a3] = self.ack;
        match a1 {
            0x09 => AckMeaning::Version {
                major: a2 >> 4,
                minor: a2 & 0x0F,
            },
            0x00..=0x7F => AckMeaning::Command {
                command: a1,
                ok: a0 == 0x10,
            },
            0x81 => AckMeaning::Ready,
            0x88 => AckMeaning::Button { button: a3 },
            code => AckMeaning::Other { code },
        }
    }
}

/// A BWTIME payload, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMessage {
    Time(ClockReading),
    Ack(ClockAck),
    /// All seven bytes zero: sent by Bluetooth boards after a clock command; carries nothing (§1).
    Blank,
}

/// Why a BWTIME payload could not be a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("clock time with invalid BCD digits (minutes {minutes:#04x}, seconds {seconds:#04x})")]
pub struct BadClockTime {
    pub minutes: u8,
    pub seconds: u8,
}

impl ClockMessage {
    pub fn decode(p: &[u8; 7]) -> Result<ClockMessage, BadClockTime> {
        if p.iter().all(|b| *b == 0) {
            return Ok(ClockMessage::Blank);
        }
        if p[0] & 0x0F == 0x0A || p[3] & 0x0F == 0x0A {
            return Ok(ClockMessage::Ack(ClockAck::from_payload(p)));
        }
        Ok(ClockMessage::Time(ClockReading {
            right: decode_side(p[0], p[1], p[2])?,
            left: decode_side(p[3], p[4], p[5])?,
            status: ClockStatus::from_byte(p[6]),
        }))
    }

    pub fn to_payload(&self) -> [u8; 7] {
        match self {
            ClockMessage::Time(t) => t.to_payload(),
            ClockMessage::Ack(a) => a.to_payload(),
            ClockMessage::Blank => [0; 7],
        }
    }
}

fn bcd(b: u8) -> Option<u32> {
    let (hi, lo) = (b >> 4, b & 0x0F);
    (hi <= 5 && lo <= 9).then(|| u32::from(hi) * 10 + u32::from(lo))
}

fn to_bcd(v: u32) -> u8 {
    ((v / 10) as u8) << 4 | (v % 10) as u8
}

fn decode_side(h: u8, m: u8, s: u8) -> Result<SideTime, BadClockTime> {
    let bad = BadClockTime {
        minutes: m,
        seconds: s,
    };
    let minutes = bcd(m).ok_or(bad)?;
    let seconds = bcd(s).ok_or(bad)?;
    Ok(SideTime {
        seconds: u32::from(h & 0x0F) * 3600 + minutes * 60 + seconds,
        flag_fallen: h & 0x10 != 0,
        time_per_move: h & 0x20 != 0,
        flag_shown: h & 0x40 != 0,
    })
}

/// Encodes a side's time; times over 9:59:59 are shown as 9:59:59, as the display would.
fn encode_side(t: &SideTime) -> (u8, u8, u8) {
    let secs = t.seconds.min(9 * 3600 + 59 * 60 + 59);
    let h = (secs / 3600) as u8
        | u8::from(t.flag_fallen) << 4
        | u8::from(t.time_per_move) << 5
        | u8::from(t.flag_shown) << 6;
    (h, to_bcd(secs / 60 % 60), to_bcd(secs % 60))
}

/// Formats seconds as `h:mm:ss`, the form PGN clock comments and the sniff output use.
pub fn format_hms(seconds: u32) -> String {
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

impl fmt::Display for ClockReading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "left {} right {}",
            format_hms(self.left.seconds),
            format_hms(self.right.seconds)
        )?;
        match self.running_side() {
            Some(side) => write!(f, " ({side:?} running)"),
            None => write!(f, " (stopped)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(p: [u8; 7]) -> ClockReading {
        match ClockMessage::decode(&p) {
            Ok(ClockMessage::Time(t)) => t,
            other => panic!("expected a time, got {other:?}"),
        }
    }

    #[test]
    fn captured_readings() {
        // Stopped before the game, 5:05 a side, Fischer indicator on.
        let t = time([0x20, 0x05, 0x05, 0x20, 0x05, 0x05, 0x08]);
        assert_eq!((t.left.seconds, t.right.seconds), (305, 305));
        assert!(t.left.time_per_move && t.right.time_per_move);
        assert_eq!(t.running_side(), None);
        // Left side running.
        let t = time([0x20, 0x05, 0x05, 0x20, 0x05, 0x04, 0x09]);
        assert_eq!(t.running_side(), Some(ClockSide::Left));
        assert_eq!(t.left.seconds, 304);
        // Right side running after the lever press.
        let t = time([0x20, 0x05, 0x05, 0x20, 0x05, 0x09, 0x13]);
        assert_eq!(t.running_side(), Some(ClockSide::Right));
        // Right flag fell: blocked at zero, clock stopped.
        let t = time([0x30, 0x00, 0x00, 0x20, 0x00, 0x16, 0x12]);
        assert!(t.right.flag_fallen && !t.left.flag_fallen);
        assert_eq!((t.right.seconds, t.left.seconds), (0, 16));
        assert_eq!(t.running_side(), None);
    }

    #[test]
    fn readings_round_trip() {
        for p in [
            [0x20, 0x05, 0x05, 0x20, 0x05, 0x05, 0x08],
            [0x30, 0x00, 0x00, 0x20, 0x00, 0x16, 0x12],
            [0x41, 0x59, 0x59, 0x09, 0x00, 0x00, 0x3F],
        ] {
            assert_eq!(time(p).to_payload(), p);
        }
    }

    #[test]
    fn acks() {
        let check = |p: [u8; 7], meaning: AckMeaning| match ClockMessage::decode(&p) {
            Ok(ClockMessage::Ack(a)) => {
                assert_eq!(a.meaning(), meaning);
                assert_eq!(a.to_payload(), p);
            }
            other => panic!("expected an ack, got {other:?}"),
        };
        check(
            [0x0A, 0x10, 0x09, 0x0A, 0x20, 0x00, 0x00],
            AckMeaning::Version { major: 2, minor: 0 },
        );
        check(
            [0x0A, 0x10, 0x08, 0x2A, 0x00, 0x33, 0x00],
            AckMeaning::Button { button: 0x33 },
        );
        check(
            [0x0A, 0x10, 0x0A, 0x0A, 0x00, 0x00, 0x00],
            AckMeaning::Command {
                command: 0x0A,
                ok: true,
            },
        );
        assert_eq!(ClockMessage::decode(&[0; 7]), Ok(ClockMessage::Blank));
    }

    #[test]
    fn bad_bcd_is_an_error() {
        assert!(ClockMessage::decode(&[0x00, 0x6A, 0x00, 0x00, 0x00, 0x00, 0x01]).is_err());
    }
}
