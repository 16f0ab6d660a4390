//! The DGT board protocol, without I/O: squares and pieces, the clock message, board → host
//! messages with a resyncing decoder, and host → board commands.

pub mod clock;
pub mod command;
pub mod decoder;
pub mod eeprom;
pub mod message;
pub mod piece;

pub use clock::{
    AckMeaning, ClockAck, ClockMessage, ClockReading, ClockSide, ClockStatus, SideTime,
};
pub use command::{BusCommand, ClockCommand, Command, CommandDecoder};
pub use decoder::{Decoded, Decoder, LineMode, Step};
pub use eeprom::EeRecord;
pub use message::{BatteryStatus, BusReply, BusReplyKind, Message};
pub use piece::{DgtSquare, MagicPiece, Orientation, PieceCode, Placement};
