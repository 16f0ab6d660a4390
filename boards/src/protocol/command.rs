//! Host → board commands (dgt-protocol.md §4, §8, §10, §11): encoding, and a decoder for the
//! emulator's side of the line.

use super::message::checksum;
use serde::Serialize;

/// A command the host sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "name")]
pub enum Command {
    /// 0x40: back to idle (nothing sent spontaneously).
    Reset,
    /// 0x41: send one clock message.
    SendClock,
    /// 0x42: send a board dump.
    SendBoard,
    /// 0x43: field updates and a clock message at least every second.
    SendUpdate,
    /// 0x44: field updates only.
    SendUpdateBoard,
    /// 0x45: the short serial number.
    ReturnSerialNumber,
    /// 0x46: the bus address.
    ReturnBusAddress,
    /// 0x47: the trademark text.
    SendTrademark,
    /// 0x49: the EEPROM log (about 8 s at 9600 baud).
    SendEeMoves,
    /// 0x4A: switch to bus mode.
    ToBusMode,
    /// 0x4B: field updates, and clock messages when the clock changes.
    SendUpdateNice,
    /// 0x4C: battery status (Bluetooth boards).
    SendBatteryStatus,
    /// 0x4D: firmware version.
    SendVersion,
    /// 0x4E: jump to the boot loader. Never sent by the relay; listed so the emulator can
    /// recognise it (it treats it as a reset).
    StartBootloader,
    /// 0x50 / 0x52: draughts board dumps.
    SendBoard50B,
    SendBoard50W,
    /// 0x51 / 0x53 / 0x54: draughts scan settings.
    Scan50B,
    Scan50W,
    Scan100,
    /// 0x55: the long serial number.
    ReturnLongSerialNumber,
    /// 0x2B: a command for the clock, passed through the board.
    Clock(ClockCommand),
    /// 0x60: Revelation II LEDs.
    SetLeds {
        pattern: u8,
        from: u8,
        to: u8,
    },
    /// A 4-byte bus command to `address` (0 = every board).
    Bus {
        command: BusCommand,
        address: u16,
    },
}

/// Sub-commands of 0x2B (§8). Times are whole seconds, sent as binary h/m/s.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "clock_command")]
pub enum ClockCommand {
    /// Seven-segment text on a DGT XL: six digit patterns (C B A F E D), icons, beep.
    Display {
        segments: [u8; 6],
        icons: u8,
        beep: bool,
    },
    /// Icons: left and right icon sets, left and right period/flag, special bits.
    Icons {
        left: u8,
        right: u8,
        left_period: u8,
        right_period: u8,
        special: u8,
    },
    /// Leave text mode, show the times again.
    End,
    /// Ask for the button state.
    Button,
    /// Ask for the clock's version (answered in the ack).
    Version,
    /// Set both times and run. `control`: 0x01 left counts down, 0x02 right counts down,
    /// 0x04 pause, 0x08 toggle player on the lever.
    SetAndRun { left: u32, right: u32, control: u8 },
    /// Beep for `units` × 64 ms.
    Beep { units: u8 },
    /// Eight characters of text on a DGT 3000; `beep` 0 = none.
    Text { text: [u8; 8], beep: u8 },
}

/// Bus commands (§10), without the bit 7 they carry on the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BusCommand {
    SendClock,
    SendBoard,
    SendChanges,
    RepeatChanges,
    SetStartGame,
    SendFromStart,
    Ping,
    EndBusMode,
    Reset,
    IgnoreNextPing,
    SendVersion,
    SendBoard50B,
    SendAll,
}

const BUS_COMMANDS: [(BusCommand, u8); 13] = [
    (BusCommand::SendClock, 0x81),
    (BusCommand::SendBoard, 0x82),
    (BusCommand::SendChanges, 0x83),
    (BusCommand::RepeatChanges, 0x84),
    (BusCommand::SetStartGame, 0x85),
    (BusCommand::SendFromStart, 0x86),
    (BusCommand::Ping, 0x87),
    (BusCommand::EndBusMode, 0x88),
    (BusCommand::Reset, 0x89),
    (BusCommand::IgnoreNextPing, 0x8A),
    (BusCommand::SendVersion, 0x8B),
    (BusCommand::SendBoard50B, 0x8C),
    (BusCommand::SendAll, 0x8D),
];

impl BusCommand {
    pub fn byte(self) -> u8 {
        BUS_COMMANDS
            .iter()
            .find(|(c, _)| *c == self)
            .map_or(0x87, |(_, b)| *b)
    }

    pub fn from_byte(b: u8) -> Option<BusCommand> {
        BUS_COMMANDS.iter().find(|(_, x)| *x == b).map(|(c, _)| *c)
    }
}

const SIMPLE: [(u8, Command); 20] = [
    (0x40, Command::Reset),
    (0x41, Command::SendClock),
    (0x42, Command::SendBoard),
    (0x43, Command::SendUpdate),
    (0x44, Command::SendUpdateBoard),
    (0x45, Command::ReturnSerialNumber),
    (0x46, Command::ReturnBusAddress),
    (0x47, Command::SendTrademark),
    (0x49, Command::SendEeMoves),
    (0x4A, Command::ToBusMode),
    (0x4B, Command::SendUpdateNice),
    (0x4C, Command::SendBatteryStatus),
    (0x4D, Command::SendVersion),
    (0x4E, Command::StartBootloader),
    (0x50, Command::SendBoard50B),
    (0x51, Command::Scan50B),
    (0x52, Command::SendBoard50W),
    (0x53, Command::Scan50W),
    (0x54, Command::Scan100),
    (0x55, Command::ReturnLongSerialNumber),
];

fn split_hms(seconds: u32) -> [u8; 3] {
    let s = seconds.min(9 * 3600 + 59 * 60 + 59);
    [(s / 3600) as u8, (s / 60 % 60) as u8, (s % 60) as u8]
}

impl ClockCommand {
    fn code(&self) -> u8 {
        match self {
            ClockCommand::Display { .. } => 0x01,
            ClockCommand::Icons { .. } => 0x02,
            ClockCommand::End => 0x03,
            ClockCommand::Button => 0x08,
            ClockCommand::Version => 0x09,
            ClockCommand::SetAndRun { .. } => 0x0A,
            ClockCommand::Beep { .. } => 0x0B,
            ClockCommand::Text { .. } => 0x0C,
        }
    }

    /// The sub-command byte the clock echoes in its acknowledgement.
    pub fn ack_code(&self) -> u8 {
        self.code()
    }

    fn body(&self) -> Vec<u8> {
        match self {
            ClockCommand::Display {
                segments,
                icons,
                beep,
            } => {
                let mut v = segments.to_vec();
                v.push(*icons);
                v.push(if *beep { 0x03 } else { 0x01 });
                v
            }
            ClockCommand::Icons {
                left,
                right,
                left_period,
                right_period,
                special,
            } => {
                vec![
                    *left,
                    *right,
                    *left_period,
                    *right_period,
                    *special,
                    0,
                    0,
                    0,
                ]
            }
            ClockCommand::End | ClockCommand::Button | ClockCommand::Version => vec![],
            ClockCommand::SetAndRun {
                left,
                right,
                control,
            } => {
                let mut v = split_hms(*left).to_vec();
                v.extend(split_hms(*right));
                v.push(*control);
                v
            }
            ClockCommand::Beep { units } => vec![*units],
            ClockCommand::Text { text, beep } => {
                let mut v = text.to_vec();
                v.push(*beep);
                v
            }
        }
    }

    fn parse(code: u8, body: &[u8]) -> Option<ClockCommand> {
        let hms = |b: &[u8]| u32::from(b[0]) * 3600 + u32::from(b[1]) * 60 + u32::from(b[2]);
        Some(match (code, body.len()) {
            (0x01, 8) => {
                let mut segments = [0; 6];
                segments.copy_from_slice(&body[..6]);
                ClockCommand::Display {
                    segments,
                    icons: body[6],
                    beep: body[7] == 0x03,
                }
            }
            (0x02, 8) => ClockCommand::Icons {
                left: body[0],
                right: body[1],
                left_period: body[2],
                right_period: body[3],
                special: body[4],
            },
            (0x03, 0) => ClockCommand::End,
            (0x08, 0) => ClockCommand::Button,
            (0x09, 0) => ClockCommand::Version,
            (0x0A, 7) => ClockCommand::SetAndRun {
                left: hms(&body[0..3]),
                right: hms(&body[3..6]),
                control: body[6],
            },
            (0x0B, 1) => ClockCommand::Beep { units: body[0] },
            (0x0C, 9) => {
                let mut text = [0; 8];
                text.copy_from_slice(&body[..8]);
                ClockCommand::Text {
                    text,
                    beep: body[8],
                }
            }
            _ => return None,
        })
    }
}

impl Command {
    pub fn encode(&self) -> Vec<u8> {
        if let Some((b, _)) = SIMPLE.iter().find(|(_, c)| c == self) {
            return vec![*b];
        }
        match self {
            Command::Clock(cc) => {
                // 2B size 03 cmd body… 00; size counts every byte after itself.
                let body = cc.body();
                let mut v = vec![0x2B, (body.len() + 3) as u8, 0x03, cc.code()];
                v.extend(body);
                v.push(0x00);
                v
            }
            Command::SetLeds { pattern, from, to } => vec![0x60, 0x04, *pattern, *from, *to, 0x00],
            Command::Bus { command, address } => {
                let mut v = vec![
                    command.byte(),
                    (address >> 7) as u8 & 0x7F,
                    *address as u8 & 0x7F,
                ];
                v.push(checksum(&v));
                v
            }
            // Every other variant is in SIMPLE.
            _ => vec![],
        }
    }
}

/// What the emulator got from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostInput {
    Command(Command),
    /// A bus command whose checksum is wrong (a real board ignores it).
    BadBusChecksum(Vec<u8>),
    /// A byte or block that is no command.
    Unknown(Vec<u8>),
}

/// Splits the host's byte stream into commands (the board side of the line).
#[derive(Debug, Default)]
pub struct CommandDecoder {
    buf: Vec<u8>,
}

impl CommandDecoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete input, or `None` when more bytes are needed.
    pub fn next_input(&mut self) -> Option<HostInput> {
        let first = *self.buf.first()?;
        let (len, input) = match first {
            0x80..=0xFF => {
                if self.buf.len() < 4 {
                    return None;
                }
                let f = &self.buf[..4];
                let input = match BusCommand::from_byte(first) {
                    Some(command) if checksum(&f[..3]) == f[3] => {
                        HostInput::Command(Command::Bus {
                            command,
                            address: u16::from(f[1] & 0x7F) << 7 | u16::from(f[2] & 0x7F),
                        })
                    }
                    Some(_) => HostInput::BadBusChecksum(f.to_vec()),
                    None => HostInput::Unknown(f.to_vec()),
                };
                (4, input)
            }
            0x2B | 0x60 => {
                let size = usize::from(*self.buf.get(1)?);
                if self.buf.len() < size + 2 {
                    return None;
                }
                let f = &self.buf[..size + 2];
                let input = if first == 0x60 && size == 4 {
                    HostInput::Command(Command::SetLeds {
                        pattern: f[2],
                        from: f[3],
                        to: f[4],
                    })
                } else if first == 0x2B && size >= 3 && f[2] == 0x03 {
                    // The body sits between the sub-command and the closing 0x00; old hosts
                    // leave out the 0x00, so accept both.
                    let body_end = if f[size + 1] == 0 { size + 1 } else { size + 2 };
                    match ClockCommand::parse(f[3], &f[4..body_end.max(4)]) {
                        Some(cc) => HostInput::Command(Command::Clock(cc)),
                        None => HostInput::Unknown(f.to_vec()),
                    }
                } else {
                    HostInput::Unknown(f.to_vec())
                };
                (size + 2, input)
            }
            b => match SIMPLE.iter().find(|(x, _)| *x == b) {
                Some((_, c)) => (1, HostInput::Command(c.clone())),
                None => (1, HostInput::Unknown(vec![b])),
            },
        };
        self.buf.drain(..len);
        Some(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: Command) -> Vec<u8> {
        let bytes = c.encode();
        let mut d = CommandDecoder::default();
        d.push(&bytes);
        assert_eq!(d.next_input(), Some(HostInput::Command(c)));
        assert_eq!(d.next_input(), None);
        bytes
    }

    #[test]
    fn encodings_match_the_protocol_text() {
        assert_eq!(round_trip(Command::SendUpdateNice), vec![0x4B]);
        assert_eq!(
            round_trip(Command::Clock(ClockCommand::Version)),
            vec![0x2B, 0x03, 0x03, 0x09, 0x00]
        );
        assert_eq!(
            round_trip(Command::Clock(ClockCommand::End)),
            vec![0x2B, 0x03, 0x03, 0x03, 0x00]
        );
        assert_eq!(
            round_trip(Command::Clock(ClockCommand::SetAndRun {
                left: 2700,
                right: 2700,
                control: 0x01
            })),
            vec![0x2B, 0x0A, 0x03, 0x0A, 0, 45, 0, 0, 45, 0, 0x01, 0x00]
        );
        assert_eq!(
            round_trip(Command::Clock(ClockCommand::Beep { units: 2 })),
            vec![0x2B, 0x04, 0x03, 0x0B, 2, 0]
        );
        let text = round_trip(Command::Clock(ClockCommand::Text {
            text: *b"relay ok",
            beep: 0,
        }));
        assert_eq!(&text[..4], &[0x2B, 0x0C, 0x03, 0x0C]);
        assert_eq!(text.len(), 14);
        let display = round_trip(Command::Clock(ClockCommand::Display {
            segments: [1, 2, 3, 4, 5, 6],
            icons: 0,
            beep: true,
        }));
        assert_eq!(&display[..2], &[0x2B, 0x0B]);
        let icons = round_trip(Command::Clock(ClockCommand::Icons {
            left: 1,
            right: 2,
            left_period: 1,
            right_period: 1,
            special: 0,
        }));
        assert_eq!(&icons[..2], &[0x2B, 0x0B]);
        round_trip(Command::Clock(ClockCommand::Button));
        assert_eq!(
            round_trip(Command::SetLeds {
                pattern: 1,
                from: 12,
                to: 28
            }),
            vec![0x60, 0x04, 1, 12, 28, 0]
        );
        // Header example: SEND_CLK to board 0x806.
        assert_eq!(
            round_trip(Command::Bus {
                command: BusCommand::SendClock,
                address: 0x10 << 7 | 0x06
            }),
            vec![0x81, 0x10, 0x06, 0x17]
        );
        for (_, c) in SIMPLE {
            round_trip(c);
        }
        for (c, _) in BUS_COMMANDS {
            round_trip(Command::Bus {
                command: c,
                address: 1025,
            });
        }
    }

    #[test]
    fn bad_bus_checksum_is_reported() {
        let mut d = CommandDecoder::default();
        d.push(&[0x87, 0x00, 0x00, 0x00]);
        assert_eq!(
            d.next_input(),
            Some(HostInput::BadBusChecksum(vec![0x87, 0, 0, 0]))
        );
    }
}
