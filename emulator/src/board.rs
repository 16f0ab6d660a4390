//! One emulated e-board with its clock, without I/O: host bytes in, board bytes out.
//!
//! It behaves as dgt-protocol.md §3, §4, §10 and §13 describe a real board: it powers up in bus
//! mode and says nothing until asked; a single-board command switches it to single-board mode
//! and is processed; a bus command switches it back and is processed only when addressed to it.
//! In UPDATE_BOARD / UPDATE / UPDATE_NICE it reports each square change as it happens, and in
//! UPDATE / UPDATE_NICE also the clock. In bus mode it keeps the changes in its EEPROM-style log
//! until the host polls them.

use super::clock::ChessClock;
use super::memory::BoardMemory;
use boards::protocol::command::HostInput;
use boards::protocol::message::{BatteryStatus, id};
use boards::protocol::{
    BusCommand, BusReplyKind, ClockAck, ClockCommand, ClockMessage, ClockSide, Command,
    CommandDecoder, DgtSquare, EeRecord, Message, Orientation, PieceCode, Placement,
};
use boards::rng::SplitMix64;

/// What the board is doing with the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardMode {
    /// Power-up state: answers only bus commands addressed to it.
    Bus,
    /// Single-board mode, answering requests only.
    Idle,
    /// Field updates as they happen.
    UpdateBoard,
    /// Field updates, and the clock at least every second.
    Update,
    /// Field updates, and the clock whenever it changes.
    UpdateNice,
}

/// Bytes for the host, possibly after a delay (bus boards answer a broadcast ping at random
/// moments within 1100 ms so that their replies do not collide).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    pub delay_ms: u64,
    pub bytes: Vec<u8>,
}

impl Outgoing {
    fn now(bytes: Vec<u8>) -> Outgoing {
        Outgoing { delay_ms: 0, bytes }
    }
}

/// Identity of an emulated board.
#[derive(Clone, Debug)]
pub struct BoardIdentity {
    /// Five decimal digits; the bus address is this number.
    pub serial: String,
    pub version: (u8, u8),
    /// Claim to be a Bluetooth board (answers the battery request).
    pub bluetooth: bool,
}

impl BoardIdentity {
    pub fn from_number(n: u16) -> BoardIdentity {
        BoardIdentity {
            serial: format!("{:05}", n % 16384),
            version: (1, 2),
            bluetooth: false,
        }
    }

    pub fn bus_address(&self) -> u16 {
        self.serial.parse::<u16>().unwrap_or(0) & 0x3FFF
    }

    pub fn long_serial(&self) -> String {
        format!("{:0>10}", self.serial)
    }
}

#[derive(Debug)]
pub struct EmulatedBoard {
    identity: BoardIdentity,
    placement: Placement,
    orientation: Orientation,
    clock: Option<ChessClock>,
    mode: BoardMode,
    input: CommandDecoder,
    /// Bus mode: records since the last SEND_CHANGES, the last packet sent, and everything since
    /// SET_START_GAME.
    changes: Vec<EeRecord>,
    last_changes: Vec<EeRecord>,
    from_start: Vec<EeRecord>,
    /// The board's own memory, returned by SEND_EE_MOVES.
    memory: BoardMemory,
    last_field_ms: Option<u64>,
    last_clock_sent: Option<([u8; 7], u64)>,
    ignore_next_ping: bool,
    /// Percent charged, reported by a Bluetooth board.
    battery: u8,
    rng: SplitMix64,
}

impl EmulatedBoard {
    /// A board with the standard start position on it, in bus mode as after power-up.
    pub fn new(identity: BoardIdentity, clock: Option<ChessClock>) -> EmulatedBoard {
        let rng = SplitMix64(u64::from(identity.bus_address()));
        let placement = Placement::from_board(&shakmaty::Board::default(), Orientation::Normal);
        EmulatedBoard {
            identity,
            placement,
            orientation: Orientation::Normal,
            clock,
            mode: BoardMode::Bus,
            input: CommandDecoder::default(),
            changes: Vec::new(),
            last_changes: Vec::new(),
            from_start: Vec::new(),
            memory: BoardMemory::power_up(&placement),
            last_field_ms: None,
            last_clock_sent: None,
            ignore_next_ping: false,
            battery: 87,
            rng,
        }
    }

    /// The charge a Bluetooth board reports, in percent.
    pub fn set_battery(&mut self, percent: u8) {
        self.battery = percent.min(100);
    }

    pub fn identity(&self) -> &BoardIdentity {
        &self.identity
    }

    pub fn mode(&self) -> BoardMode {
        self.mode
    }

    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    pub fn clock(&self) -> Option<&ChessClock> {
        self.clock.as_ref()
    }

    pub fn clock_mut(&mut self) -> Option<&mut ChessClock> {
        self.clock.as_mut()
    }

    /// Puts a whole position on the board at once (the arbiter setting up), as real squares in
    /// the given orientation; reported square by square like any change.
    pub fn set_position(
        &mut self,
        board: &shakmaty::Board,
        orientation: Orientation,
        now_ms: u64,
    ) -> Vec<Outgoing> {
        self.orientation = orientation;
        let target = Placement::from_board(board, orientation);
        let mut out = Vec::new();
        for sq in DgtSquare::all() {
            if self.placement.get(sq) != target.get(sq) {
                out.extend(self.set_square(sq, target.get(sq), now_ms));
            }
        }
        out
    }

    /// A piece is lifted (`PieceCode::Empty`) or set down on a square, in the board's numbering.
    pub fn set_square(
        &mut self,
        square: DgtSquare,
        piece: PieceCode,
        now_ms: u64,
    ) -> Vec<Outgoing> {
        if self.placement.get(square) == piece {
            return Vec::new();
        }
        self.placement.set(square, piece);
        let quick = self
            .last_field_ms
            .is_some_and(|t| now_ms.saturating_sub(t) < 250);
        self.last_field_ms = Some(now_ms);
        let record = EeRecord::Field {
            square,
            piece,
            quick,
        };
        self.log(record);
        self.memory.field(square, piece, quick, &self.placement);
        match self.mode {
            BoardMode::UpdateBoard | BoardMode::Update | BoardMode::UpdateNice => {
                vec![Outgoing::now(
                    Message::FieldUpdate { square, piece }.encode(),
                )]
            }
            BoardMode::Bus | BoardMode::Idle => Vec::new(),
        }
    }

    /// A record for the bus's change log and from-start log (the board's own memory is
    /// kept by [`BoardMemory`], with its overwriting and markers).
    fn log(&mut self, record: EeRecord) {
        self.changes.push(record);
        self.from_start.push(record);
    }

    /// The board's own memory.
    pub fn memory(&self) -> &BoardMemory {
        &self.memory
    }

    /// Wipes the board's memory and keeps it empty (a board whose log holds nothing).
    pub fn forget(&mut self) {
        self.memory.forget();
    }

    /// The player on `side` presses the lever.
    pub fn press_lever(&mut self, side: ClockSide, now_ms: u64) -> Vec<Outgoing> {
        let Some(clock) = self.clock.as_mut() else {
            return Vec::new();
        };
        if !clock.press(side, now_ms) {
            return Vec::new();
        }
        let seconds = clock.remaining_ms(side, now_ms).div_ceil(1000) as u32;
        self.log(EeRecord::Clock { side, seconds });
        self.memory.press(side, seconds, now_ms);
        self.tick(now_ms)
    }

    /// Stops the clock (the arbiter's button; not logged, as [`EmulatedBoard::set_clock`]).
    pub fn stop_clock(&mut self, now_ms: u64) -> Vec<Outgoing> {
        if let Some(clock) = self.clock.as_mut() {
            clock.stop(now_ms);
        }
        self.tick(now_ms)
    }

    /// The arbiter sets the clock (see [`ChessClock::arbiter_set`]). Like the start/stop
    /// button, not in the board's log: a bus board logs lever presses only.
    pub fn set_clock(
        &mut self,
        left_ms: u64,
        right_ms: u64,
        run: Option<ClockSide>,
        moves_done: [u32; 2],
        now_ms: u64,
    ) -> Vec<Outgoing> {
        if let Some(clock) = self.clock.as_mut() {
            clock.arbiter_set(left_ms, right_ms, run, moves_done, now_ms);
        }
        self.tick(now_ms)
    }

    /// Starts the clock (the arbiter's button).
    pub fn start_clock(&mut self, now_ms: u64) -> Vec<Outgoing> {
        if let Some(clock) = self.clock.as_mut() {
            clock.start(now_ms);
        }
        self.tick(now_ms)
    }

    fn clock_payload(&self, now_ms: u64) -> [u8; 7] {
        match &self.clock {
            Some(c) => c.reading(now_ms).to_payload(),
            // No clock connected: bit 5 of the status byte, times zero (§15.9: the exact bytes
            // of a real board without a clock are not known).
            None => [0, 0, 0, 0, 0, 0, 0x20],
        }
    }

    fn clock_frame(&self, now_ms: u64) -> Vec<u8> {
        boards::protocol::message::frame(id::BWTIME, &self.clock_payload(now_ms))
    }

    /// Time passes: in UPDATE mode the clock is sent every second, in UPDATE_NICE whenever what
    /// it shows changes.
    pub fn tick(&mut self, now_ms: u64) -> Vec<Outgoing> {
        let payload = self.clock_payload(now_ms);
        let due = match (self.mode, self.last_clock_sent) {
            (BoardMode::Update, Some((p, t))) => p != payload || now_ms.saturating_sub(t) >= 1000,
            (BoardMode::UpdateNice, Some((p, _))) => p != payload,
            (BoardMode::Update | BoardMode::UpdateNice, None) => true,
            _ => false,
        };
        if !due {
            return Vec::new();
        }
        self.last_clock_sent = Some((payload, now_ms));
        vec![Outgoing::now(boards::protocol::message::frame(
            id::BWTIME,
            &payload,
        ))]
    }

    /// Bytes from the host.
    pub fn receive(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Outgoing> {
        self.input.push(bytes);
        let mut out = Vec::new();
        while let Some(input) = self.input.next_input() {
            if let HostInput::Command(command) = input {
                out.extend(self.handle(command, now_ms));
            }
            // Unknown bytes and bus commands with a bad checksum are ignored, as a board does.
        }
        out
    }

    fn handle(&mut self, command: Command, now_ms: u64) -> Vec<Outgoing> {
        if let Command::Bus { command, address } = command {
            return self.handle_bus(command, address, now_ms);
        }
        if self.mode == BoardMode::Bus {
            self.mode = BoardMode::Idle;
        }
        let reply = |m: Message| vec![Outgoing::now(m.encode())];
        match command {
            Command::Reset | Command::StartBootloader => {
                self.mode = BoardMode::Idle;
                Vec::new()
            }
            Command::SendClock => vec![Outgoing::now(self.clock_frame(now_ms))],
            Command::SendBoard => reply(Message::BoardDump {
                placement: self.placement,
            }),
            Command::SendUpdate => self.enter(BoardMode::Update),
            Command::SendUpdateBoard => self.enter(BoardMode::UpdateBoard),
            Command::SendUpdateNice => self.enter(BoardMode::UpdateNice),
            Command::ReturnSerialNumber => reply(Message::SerialNumber {
                serial: self.identity.serial.clone(),
            }),
            Command::ReturnLongSerialNumber => reply(Message::LongSerialNumber {
                serial: self.identity.long_serial(),
            }),
            Command::ReturnBusAddress => reply(Message::BusAddress {
                address: self.identity.bus_address(),
            }),
            Command::SendTrademark => reply(Message::Trademark {
                text: "Digital Game Technology\r\nCopyright (c) 2026 relay emulator\r\n"
                    .to_string(),
            }),
            Command::SendVersion => {
                let (major, minor) = self.identity.version;
                reply(Message::Version { major, minor })
            }
            Command::SendBatteryStatus if self.identity.bluetooth => reply(Message::Battery {
                status: BatteryStatus {
                    percent: self.battery,
                    time_left: (11, 20),
                    on_time: (2, 5),
                    standby: (0x7F, 0x7F, 0x7F),
                    charging: false,
                    discharging: true,
                },
            }),
            Command::SendEeMoves => {
                let bytes = self.memory.dump();
                self.memory.downloaded();
                // The dump's bytes as they are: its first record may be cut by the write
                // position, which the records keep as unknown bytes.
                reply(Message::EeMoves {
                    records: boards::protocol::eeprom::parse_records(&bytes),
                })
            }
            Command::ToBusMode => {
                self.mode = BoardMode::Bus;
                Vec::new()
            }
            Command::Clock(cc) => self.handle_clock(cc, now_ms),
            // Draughts commands, LEDs and the battery request of a wired board: no reply.
            _ => Vec::new(),
        }
    }

    fn enter(&mut self, mode: BoardMode) -> Vec<Outgoing> {
        self.mode = mode;
        self.last_clock_sent = None;
        Vec::new()
    }

    fn handle_clock(&mut self, cc: ClockCommand, now_ms: u64) -> Vec<Outgoing> {
        if let ClockCommand::SetAndRun {
            left,
            right,
            control,
        } = &cc
            && let Some(clock) = self.clock.as_mut()
        {
            let run = match control & 0x07 {
                c if c & 0x04 != 0 => None,
                0x01 => Some(ClockSide::Left),
                0x02 => Some(ClockSide::Right),
                _ => None,
            };
            clock.set_and_run(
                u64::from(*left) * 1000,
                u64::from(*right) * 1000,
                run,
                now_ms,
            );
        }
        if self.clock.is_none() || !matches!(self.mode, BoardMode::Update | BoardMode::UpdateNice) {
            // Acks only come in the update modes (§3), and only from a clock that is there.
            return Vec::new();
        }
        let ack = match cc {
            ClockCommand::Version => ClockAck {
                ack: [0x10, 0x09, 0x21, 0],
            },
            other => ClockAck::for_command(other.ack_code()),
        };
        let frame =
            boards::protocol::message::frame(id::BWTIME, &ClockMessage::Ack(ack).to_payload());
        vec![Outgoing::now(frame)]
    }

    fn handle_bus(&mut self, command: BusCommand, address: u16, now_ms: u64) -> Vec<Outgoing> {
        let me = self.identity.bus_address();
        let broadcast = address == 0;
        if !broadcast && address != me {
            return Vec::new();
        }
        // Any bus command puts a single-mode board back into bus mode.
        self.mode = BoardMode::Bus;
        let reply = |kind: BusReplyKind| vec![Outgoing::now(kind.encode(me))];
        match command {
            BusCommand::Ping if broadcast => {
                if std::mem::take(&mut self.ignore_next_ping) {
                    return Vec::new();
                }
                let delay_ms = self.rng.below(1100);
                vec![Outgoing {
                    delay_ms,
                    bytes: BusReplyKind::Ping.encode(me),
                }]
            }
            _ if broadcast => {
                if command == BusCommand::EndBusMode {
                    self.mode = BoardMode::Idle;
                }
                Vec::new()
            }
            BusCommand::Ping => reply(BusReplyKind::Ping),
            BusCommand::IgnoreNextPing => {
                self.ignore_next_ping = true;
                reply(BusReplyKind::Ping)
            }
            BusCommand::SendClock => {
                let clock = ClockMessage::decode(&self.clock_payload(now_ms))
                    .unwrap_or(ClockMessage::Blank);
                reply(BusReplyKind::Clock { clock })
            }
            BusCommand::SendBoard => reply(BusReplyKind::BoardDump {
                placement: self.placement,
            }),
            BusCommand::SendChanges => {
                self.last_changes = std::mem::take(&mut self.changes);
                reply(BusReplyKind::Changes {
                    records: self.last_changes.clone(),
                })
            }
            BusCommand::RepeatChanges => reply(BusReplyKind::Changes {
                records: self.last_changes.clone(),
            }),
            BusCommand::SetStartGame => {
                self.from_start.clear();
                self.from_start.push(EeRecord::StartTag);
                for square in DgtSquare::all() {
                    let piece = self.placement.get(square);
                    if piece != PieceCode::Empty {
                        self.from_start.push(EeRecord::Field {
                            square,
                            piece,
                            quick: true,
                        });
                    }
                }
                self.changes.clear();
                vec![Outgoing {
                    delay_ms: 70,
                    bytes: BusReplyKind::StartGameWritten.encode(me),
                }]
            }
            BusCommand::SendFromStart => reply(BusReplyKind::FromStart {
                records: self.from_start.clone(),
            }),
            BusCommand::EndBusMode => {
                self.mode = BoardMode::Idle;
                Vec::new()
            }
            BusCommand::Reset => {
                self.mode = BoardMode::Bus;
                self.changes.clear();
                Vec::new()
            }
            BusCommand::SendVersion => {
                let (major, minor) = self.identity.version;
                reply(BusReplyKind::Version { major, minor })
            }
            BusCommand::SendAll => {
                self.last_changes = std::mem::take(&mut self.changes);
                let clock = ClockMessage::decode(&self.clock_payload(now_ms))
                    .unwrap_or(ClockMessage::Blank);
                let mut bytes = BusReplyKind::Changes {
                    records: self.last_changes.clone(),
                }
                .encode(me);
                bytes.extend(BusReplyKind::Clock { clock }.encode(me));
                bytes.extend(
                    BusReplyKind::BoardDump {
                        placement: self.placement,
                    }
                    .encode(me),
                );
                vec![Outgoing::now(bytes)]
            }
            BusCommand::SendBoard50B => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boards::protocol::{Decoded, Decoder, LineMode};

    fn board() -> EmulatedBoard {
        let clock = ChessClock::new("180+2".parse().expect("tc"), ClockSide::Left);
        EmulatedBoard::new(BoardIdentity::from_number(1025), Some(clock))
    }

    fn decode(mode: LineMode, out: &[Outgoing]) -> Vec<Decoded> {
        let mut d = Decoder::new(mode);
        out.iter()
            .flat_map(|o| d.feed(&o.bytes))
            .map(|(m, _)| m)
            .collect()
    }

    #[test]
    fn silent_until_asked() {
        let mut b = board();
        let sq = DgtSquare::new(52).expect("square");
        assert!(
            b.set_square(sq, PieceCode::Empty, 0).is_empty(),
            "bus mode after power-up"
        );
        assert!(b.receive(&Command::Reset.encode(), 0).is_empty());
        assert!(b.tick(10).is_empty(), "idle sends no clock");
        let out = b.receive(&Command::SendUpdateNice.encode(), 20);
        assert!(out.is_empty());
        let out = b.set_square(
            DgtSquare::new(36).expect("square"),
            PieceCode::from_byte(1),
            30,
        );
        assert_eq!(out[0].bytes, vec![0x8E, 0x00, 0x05, 36, 1]);
        assert_eq!(b.tick(40).len(), 1, "first clock reading in UPDATE_NICE");
        assert!(b.tick(50).is_empty(), "nothing changed");
    }

    #[test]
    fn answers_requests() {
        let mut b = board();
        let mut bytes = Vec::new();
        for c in [
            Command::ReturnSerialNumber,
            Command::SendVersion,
            Command::ReturnBusAddress,
            Command::SendBoard,
        ] {
            bytes.extend(c.encode());
        }
        let got = decode(LineMode::Single, &b.receive(&bytes, 0));
        assert_eq!(got.len(), 4);
        assert!(
            matches!(&got[0], Decoded::Message { message: Message::SerialNumber { serial } } if serial == "01025")
        );
        assert!(matches!(
            &got[2],
            Decoded::Message {
                message: Message::BusAddress { address: 1025 }
            }
        ));
    }

    #[test]
    fn the_arbiter_at_the_clock_is_not_in_the_bus_log() {
        let mut b = board();
        let changes = |b: &mut EmulatedBoard| {
            let ask = Command::Bus {
                command: BusCommand::SendChanges,
                address: 1025,
            }
            .encode();
            match decode(LineMode::Bus, &b.receive(&ask, 0)).as_slice() {
                [Decoded::Bus { reply }] => match &reply.reply {
                    BusReplyKind::Changes { records } => records.len(),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            }
        };
        b.start_clock(0);
        b.press_lever(ClockSide::Left, 1_000);
        assert_eq!(changes(&mut b), 1, "a lever press is logged");
        b.stop_clock(5_000);
        b.set_clock(180_000, 300_000, Some(ClockSide::Left), [0, 0], 9_000);
        assert_eq!(
            changes(&mut b),
            0,
            "the start/stop button and the setting are not"
        );
        let c = b.clock().expect("clock");
        assert_eq!(c.remaining_ms(ClockSide::Right, 10_000), 300_000);
        assert_eq!(c.remaining_ms(ClockSide::Left, 10_000), 179_000);
        assert_eq!(c.moves_done(ClockSide::Left), 0);
    }

    #[test]
    fn bus_changes_and_repeat() {
        let mut b = board();
        let bus = |c: BusCommand| {
            Command::Bus {
                command: c,
                address: 1025,
            }
            .encode()
        };
        b.set_square(DgtSquare::new(52).expect("square"), PieceCode::Empty, 0);
        let got = decode(LineMode::Bus, &b.receive(&bus(BusCommand::SendChanges), 0));
        let [Decoded::Bus { reply }] = got.as_slice() else {
            panic!("{got:?}")
        };
        assert!(matches!(&reply.reply, BusReplyKind::Changes { records } if records.len() == 1));
        let again = decode(
            LineMode::Bus,
            &b.receive(&bus(BusCommand::RepeatChanges), 0),
        );
        assert_eq!(again, got);
        let empty = decode(LineMode::Bus, &b.receive(&bus(BusCommand::SendChanges), 0));
        assert!(
            matches!(&empty[0], Decoded::Bus { reply } if reply.reply == BusReplyKind::Changes { records: vec![] })
        );
        // Not addressed to this board: silence.
        assert!(
            b.receive(
                &Command::Bus {
                    command: BusCommand::SendBoard,
                    address: 7
                }
                .encode(),
                0
            )
            .is_empty()
        );
    }

    #[test]
    fn clock_ack_only_in_update_modes() {
        let mut b = board();
        let v = Command::Clock(ClockCommand::Version).encode();
        assert!(b.receive(&v, 0).is_empty());
        b.receive(&Command::SendUpdateNice.encode(), 0);
        b.tick(0);
        let got = decode(LineMode::Single, &b.receive(&v, 0));
        assert!(matches!(
            got[0],
            Decoded::Message {
                message: Message::Clock {
                    clock: ClockMessage::Ack(_)
                }
            }
        ));
    }
}
