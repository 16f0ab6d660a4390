//! What a port's session and a bus line share: how a session behaves ([`SessionConfig`]),
//! what it reports ([`PortEvent`]), and the port's byte I/O.

use crate::protocol::{Command, EeRecord, LineMode, Message};
use serde::Serialize;
use serialport::SerialPort;
use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How a session behaves; [`SessionConfig::new`] gives the defaults for real boards.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    pub path: String,
    pub mode: LineMode,
    /// A cheap request this often keeps the line alive and proves the board is there.
    pub keepalive: Duration,
    /// Re-request the update mode and a full board dump this often (guards against a board
    /// that was power-cycled into bus mode, or a lost field update).
    pub refresh: Duration,
    /// No byte for this long: the board is reported lost (the port stays open).
    pub lost_after: Duration,
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// Where else to look for the board after an unplug (paths or `dir/prefix*`), besides the
    /// ports the system lists.
    pub rescan: Vec<String>,
    /// Bus mode: how long to wait for an addressed reply.
    pub bus_reply_timeout: Duration,
    /// Bus mode: pause between two polling rounds.
    pub bus_poll_gap: Duration,
    /// Bus mode: look for boards newly added to the chain this often.
    pub bus_rediscover: Duration,
    /// Ports held by other sessions of this process; never probed.
    pub in_use: Option<Arc<Mutex<HashSet<String>>>>,
    /// Single-board mode: ask the board for its own memory (SEND_EE_MOVES, about 8 s at
    /// 9600 baud) each time it is started, before its position: what it logged while nothing
    /// read it comes first, then the board as it stands.
    pub read_memory: bool,
}

impl SessionConfig {
    pub fn new(path: &str, mode: LineMode) -> SessionConfig {
        SessionConfig {
            path: path.to_string(),
            mode,
            keepalive: Duration::from_secs(2),
            refresh: Duration::from_secs(10),
            lost_after: Duration::from_secs(5),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(5),
            rescan: Vec::new(),
            bus_reply_timeout: Duration::from_millis(150),
            bus_poll_gap: Duration::from_millis(100),
            bus_rediscover: Duration::from_secs(20),
            in_use: None,
            read_memory: false,
        }
    }
}

/// What a session reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum PortEvent {
    Opened {
        path: String,
    },
    /// An e-board on this port answered with its serial number.
    Identified {
        serial: String,
        address: Option<u16>,
        path: String,
    },
    /// A decoded message from a board (bus replies are turned into the same messages).
    Message {
        serial: Option<String>,
        message: Message,
        #[serde(skip)]
        raw: Vec<u8>,
        #[serde(skip)]
        at: SystemTime,
    },
    Garbage {
        bytes: Vec<u8>,
    },
    /// A bus reply failed its checksum; the session asked again.
    ChecksumError {
        address: u16,
    },
    Lost {
        serial: Option<String>,
    },
    Back {
        serial: Option<String>,
    },
    /// The port closed (unplugged, read error, end of file); the session will try again,
    /// unless `reason` is [`STOPPED`] (the session was asked to stop).
    Closed {
        path: String,
        reason: String,
    },
    /// Bus mode: what a board logged while nothing polled it (the first change poll after the
    /// board was found on the line, or came back), as one piece: the field and clock records
    /// since the last poll that was answered, in the board's order. The board's position
    /// follows as a dump.
    Backlog {
        serial: String,
        records: Vec<EeRecord>,
        /// The board as it stands right after (read in the same poll): where the records
        /// lead, which tells the squares they do not touch.
        #[serde(skip)]
        board: Option<crate::protocol::Placement>,
        #[serde(skip)]
        raw: Vec<u8>,
        #[serde(skip)]
        at: SystemTime,
    },
    /// The board was found again under another name.
    Moved {
        serial: String,
        from: String,
        to: String,
    },
}

pub(super) type Port = Box<dyn SerialPort>;

pub(super) fn send(port: &mut Port, commands: &[Command]) -> io::Result<()> {
    let bytes: Vec<u8> = commands.iter().flat_map(Command::encode).collect();
    port.write_all(&bytes)?;
    port.flush()
}

/// Reads what is there (waiting at most the port's timeout). `Ok(None)` = nothing yet.
pub(super) fn read_some(port: &mut Port, buf: &mut [u8]) -> Result<Option<usize>, String> {
    match port.read(buf) {
        Ok(0) => Err("end of file (device gone)".into()),
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::WouldBlock => {
            Ok(None)
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

pub(super) fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
}

/// The reason a port closes with when its session was asked to stop.
pub const STOPPED: &str = "stopped";
