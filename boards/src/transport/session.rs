//! One port's session: open it, bring the board(s) into the right mode, read, keep alive,
//! notice silence, and come back after an unplug — under a new port name if need be, found by
//! the e-board's serial number.
//!
//! The session only moves bytes and turns decoded frames into [`PortEvent`]s; all protocol
//! knowledge is in [`crate::protocol`]. It runs on its own thread (a blocking loop with a short
//! read timeout) and reports through a callback, so it works the same under any runtime.

use super::link::{Port, PortEvent, STOPPED, SessionConfig, read_some, send, sleep_unless_stopped};
use super::ports;
use crate::protocol::{
    BusCommand, BusReplyKind, Command, Decoded, Decoder, EeRecord, LineMode, Message,
};
use serde::Serialize;
use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

fn canonical(path: &str) -> String {
    std::fs::canonicalize(path).map_or_else(|_| path.to_string(), |p| p.display().to_string())
}

struct Claim {
    set: Option<Arc<Mutex<HashSet<String>>>>,
    key: String,
}

/// The ports in use, taken as they stand when a holder panicked: each write is one set
/// insert or remove, which leaves a whole set.
fn ports(set: &Mutex<HashSet<String>>) -> std::sync::MutexGuard<'_, HashSet<String>> {
    set.lock().unwrap_or_else(|e| e.into_inner())
}

impl Claim {
    fn new(set: &Option<Arc<Mutex<HashSet<String>>>>, path: &str) -> Claim {
        let key = canonical(path);
        if let Some(s) = set {
            ports(s).insert(key.clone());
        }
        Claim {
            set: set.clone(),
            key,
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(s) = &self.set {
            ports(s).remove(&self.key);
        }
    }
}

/// Runs a session until `stop` is set. Every event goes to `sink`.
pub fn run(cfg: SessionConfig, sink: &mut dyn FnMut(PortEvent), stop: &AtomicBool) {
    let mut path = cfg.path.clone();
    let mut known: Vec<String> = Vec::new();
    let mut backoff = cfg.backoff_min;
    let mut reported_failure = false;
    while !stop.load(Ordering::Relaxed) {
        match ports::open(&path) {
            Ok(mut port) => {
                let _claim = Claim::new(&cfg.in_use, &path);
                backoff = cfg.backoff_min;
                reported_failure = false;
                sink(PortEvent::Opened { path: path.clone() });
                let reason = match cfg.mode {
                    LineMode::Single => single(&cfg, &path, &mut port, &mut known, sink, stop),
                    LineMode::Bus => {
                        super::bus::bus(&cfg, &path, &mut port, &mut known, sink, stop)
                    }
                };
                sink(PortEvent::Closed {
                    path: path.clone(),
                    reason,
                });
            }
            Err(e) => {
                if !reported_failure {
                    sink(PortEvent::Closed {
                        path: path.clone(),
                        reason: format!("cannot open: {e}"),
                    });
                    reported_failure = true;
                }
            }
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        sleep_unless_stopped(backoff, stop);
        backoff = (backoff * 2).min(cfg.backoff_max);
        // The same name may come back; if not, look for our board under another one.
        if !known.is_empty()
            && !Path::new(&path).exists()
            && let Some(found) = find_again(&cfg, &path, &known, stop)
        {
            sink(PortEvent::Moved {
                serial: known[0].clone(),
                from: path.clone(),
                to: found.clone(),
            });
            path = found;
            backoff = cfg.backoff_min;
        }
    }
}

/// Probes candidate ports not held by anyone for one of `serials`.
fn find_again(
    cfg: &SessionConfig,
    old: &str,
    serials: &[String],
    stop: &AtomicBool,
) -> Option<String> {
    let mut candidates: Vec<String> = ports::list(&cfg.rescan)
        .into_iter()
        .map(|p| p.path)
        .collect();
    candidates.retain(|c| c != old);
    for c in candidates {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let busy = cfg
            .in_use
            .as_ref()
            .is_some_and(|s| ports(s).contains(&canonical(&c)));
        if busy {
            continue;
        }
        if let Ok(found) = probe(&c, cfg.mode, Duration::from_millis(700))
            && found.serials.iter().any(|s| serials.contains(s))
        {
            return Some(c);
        }
    }
    None
}

/// What a probe found on a port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProbeResult {
    pub path: String,
    pub mode: Option<LineMode>,
    pub serials: Vec<String>,
    pub long_serial: Option<String>,
    pub version: Option<(u8, u8)>,
    pub trademark: Option<String>,
}

/// Asks whatever is on `path` who it is: first as a single board, then as a bus. Leaves a
/// single board idle (a probe must not start a board talking).
pub fn probe(path: &str, prefer: LineMode, wait: Duration) -> io::Result<ProbeResult> {
    let mut port = ports::open(path).map_err(io::Error::from)?;
    let mut result = ProbeResult {
        path: path.to_string(),
        ..ProbeResult::default()
    };
    let order = match prefer {
        LineMode::Single => [LineMode::Single, LineMode::Bus],
        LineMode::Bus => [LineMode::Bus, LineMode::Single],
    };
    for mode in order {
        let mut dec = Decoder::new(mode);
        match mode {
            LineMode::Single => send(
                &mut port,
                &[
                    Command::Reset,
                    Command::ReturnSerialNumber,
                    Command::ReturnLongSerialNumber,
                    Command::SendVersion,
                ],
            )?,
            LineMode::Bus => send(
                &mut port,
                &[Command::Bus {
                    command: BusCommand::Ping,
                    address: 0,
                }],
            )?,
        }
        let end = Instant::now()
            + if mode == LineMode::Bus {
                wait.max(Duration::from_millis(1200))
            } else {
                wait
            };
        let mut buf = [0u8; 256];
        while Instant::now() < end {
            let n = match read_some(&mut port, &mut buf) {
                Ok(Some(n)) => n,
                Ok(None) => continue,
                Err(e) => return Err(io::Error::other(e)),
            };
            for (item, _) in dec.feed(&buf[..n]) {
                match item {
                    Decoded::Message { message } => match message {
                        Message::SerialNumber { serial } => result.serials.push(serial),
                        Message::LongSerialNumber { serial } => result.long_serial = Some(serial),
                        Message::Version { major, minor } => result.version = Some((major, minor)),
                        Message::Trademark { text } => result.trademark = Some(text),
                        _ => {}
                    },
                    Decoded::Bus { reply } if reply.reply == BusReplyKind::Ping => {
                        result.serials.push(format!("{:05}", reply.address));
                    }
                    _ => {}
                }
            }
            if mode == LineMode::Single && result.version.is_some() && !result.serials.is_empty() {
                break;
            }
        }
        if !result.serials.is_empty() {
            result.serials.sort();
            result.serials.dedup();
            result.mode = Some(mode);
            if mode == LineMode::Single {
                let _ = send(&mut port, &[Command::Reset]);
            }
            return Ok(result);
        }
    }
    Ok(result)
}

// The battery request is answered by Bluetooth boards only; a wired board ignores it (§1).
const SINGLE_START: [Command; 9] = [
    Command::Reset,
    Command::ReturnSerialNumber,
    Command::ReturnLongSerialNumber,
    Command::SendVersion,
    Command::ReturnBusAddress,
    Command::SendUpdateNice,
    Command::SendBoard,
    Command::SendClock,
    Command::SendBatteryStatus,
];

/// The start-up commands: with `read_memory`, the memory dump goes right after the serial
/// number (so the board is known when the dump comes) and before the update mode and the
/// board dump (so the log comes before the position it led to). Ten commands: the single
/// board's input buffer holds ten bytes.
fn single_start(cfg: &SessionConfig) -> Vec<Command> {
    let mut start = SINGLE_START.to_vec();
    if cfg.read_memory {
        start.insert(2, Command::SendEeMoves);
    }
    start
}

/// The longest a single-board session's read waits for a byte; it returns sooner when the
/// keep-alive, the refresh or the lost-board check falls due. This is how late a stop is
/// noticed (the relay's hall does not wait that long for it). 500 ms cost 12% more CPU with
/// 1000 boards than 1 s (a wake-up a second per quiet board, on 1000 threads).
const SINGLE_IDLE_READ: Duration = Duration::from_secs(1);

fn single(
    cfg: &SessionConfig,
    path: &str,
    port: &mut Port,
    known: &mut Vec<String>,
    sink: &mut dyn FnMut(PortEvent),
    stop: &AtomicBool,
) -> String {
    let mut dec = Decoder::new(LineMode::Single);
    let mut serial: Option<String> = None;
    // A different serial heard once, waiting for the board to say it again.
    let mut unconfirmed: Option<String> = None;
    if let Err(e) = send(port, &single_start(cfg)) {
        return e.to_string();
    }
    let mut last_rx = Instant::now();
    let mut last_keepalive = Instant::now();
    let mut last_refresh = Instant::now();
    let mut lost = false;
    let mut buf = [0u8; 1024];
    loop {
        if stop.load(Ordering::Relaxed) {
            return STOPPED.into();
        }
        // A single board speaks when it has something to say and a read returns as soon as a
        // byte is there, so the thread sleeps until a byte comes or the next keep-alive,
        // refresh or lost-board check is due, and no longer than SINGLE_IDLE_READ. With a
        // thousand boards, waking on a fixed 250 ms timer was four wake-ups a second per board
        // for nothing, twice as many as the board's own messages.
        let now = Instant::now();
        let mut due = (last_keepalive.max(last_rx) + cfg.keepalive).min(last_refresh + cfg.refresh);
        if !lost {
            due = due.min(last_rx + cfg.lost_after);
        }
        let wait = due
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(1), SINGLE_IDLE_READ);
        if let Err(e) = port.set_timeout(wait) {
            return e.to_string();
        }
        let n = match read_some(port, &mut buf) {
            Ok(n) => n.unwrap_or(0),
            Err(reason) => return reason,
        };
        let at = SystemTime::now();
        // A board in the middle of a long message (the memory dump takes seconds) is there.
        if n > 0 && !lost {
            last_rx = Instant::now();
        }
        let mut junk = Vec::new();
        for (item, raw) in dec.feed(&buf[..n]) {
            last_rx = Instant::now();
            if lost {
                lost = false;
                sink(PortEvent::Back {
                    serial: serial.clone(),
                });
                // It may have been switched off and on (back in bus mode): start it again
                // (and read what it logged meanwhile).
                if let Err(e) = send(port, &single_start(cfg)) {
                    return e.to_string();
                }
            }
            // Garbage is reported before what follows it, as one run however many pieces.
            if !matches!(item, Decoded::Garbage { .. }) && !junk.is_empty() {
                sink(PortEvent::Garbage {
                    bytes: std::mem::take(&mut junk),
                });
            }
            match item {
                Decoded::Message { message } => {
                    if let Message::SerialNumber { serial: s } = &message
                        && serial.as_ref() != Some(s)
                    {
                        // Another serial than the one known: line noise can decode as one,
                        // and taking it would send this board's readings to a board that is
                        // not there. The board is asked again; only the same answer twice is
                        // believed.
                        if serial.is_some() && unconfirmed.as_ref() != Some(s) {
                            tracing::debug!(port = %path, serial = %s, "a different serial number: asking again");
                            unconfirmed = Some(s.clone());
                            if let Err(e) = send(port, &[Command::ReturnSerialNumber]) {
                                return e.to_string();
                            }
                            continue;
                        }
                        unconfirmed = None;
                        serial = Some(s.clone());
                        if !known.contains(s) {
                            known.insert(0, s.clone());
                        }
                        sink(PortEvent::Identified {
                            serial: s.clone(),
                            address: None,
                            path: path.to_string(),
                        });
                    }
                    sink(PortEvent::Message {
                        serial: serial.clone(),
                        message,
                        raw,
                        at,
                    });
                }
                // One report per stretch of noise, not per run: a line full of noise must
                // not flood whoever listens with millions of events.
                Decoded::Garbage { bytes } => junk.extend_from_slice(&bytes),
                // Bus replies cannot be decoded in single mode; nothing else to do.
                Decoded::Bus { .. } | Decoded::BadChecksum { .. } => {}
            }
        }
        if !junk.is_empty() {
            sink(PortEvent::Garbage { bytes: junk });
        }
        let now = Instant::now();
        if !lost && now.duration_since(last_rx) > cfg.lost_after {
            lost = true;
            sink(PortEvent::Lost {
                serial: serial.clone(),
            });
        }
        if now.duration_since(last_refresh) >= cfg.refresh {
            last_refresh = now;
            last_keepalive = now;
            if let Err(e) = send(
                port,
                &[
                    Command::SendUpdateNice,
                    Command::SendBoard,
                    Command::ReturnSerialNumber,
                    Command::SendBatteryStatus,
                ],
            ) {
                return e.to_string();
            }
        } else if now.duration_since(last_keepalive.max(last_rx)) >= cfg.keepalive {
            // Only a quiet board is asked whether it is still there: one that just spoke is.
            last_keepalive = now;
            if let Err(e) = send(port, &[Command::ReturnSerialNumber]) {
                return e.to_string();
            }
        }
    }
}

/// What a single board's own memory holds, read once (`relay board-memory`): its serial
/// number and the records of its log (SEND_EE_MOVES, about 8 s at 9600 baud). The board is
/// left idle. Fails when nothing answers within `wait`.
pub fn read_board_memory(
    path: &str,
    wait: Duration,
) -> io::Result<(Option<String>, Vec<EeRecord>)> {
    let mut port = ports::open(path).map_err(io::Error::from)?;
    send(
        &mut port,
        &[
            Command::Reset,
            Command::ReturnSerialNumber,
            Command::SendEeMoves,
        ],
    )?;
    let mut dec = Decoder::new(LineMode::Single);
    let mut serial = None;
    let mut buf = [0u8; 1024];
    let mut end = Instant::now() + wait;
    while Instant::now() < end {
        let n = match read_some(&mut port, &mut buf) {
            Ok(Some(n)) => n,
            Ok(None) => continue,
            Err(e) => return Err(io::Error::other(e)),
        };
        // The dump is long: a board still sending is given the time it needs.
        end = end.max(Instant::now() + Duration::from_secs(2));
        for (item, _) in dec.feed(&buf[..n]) {
            match item {
                Decoded::Message {
                    message: Message::SerialNumber { serial: s },
                } => serial = Some(s),
                Decoded::Message {
                    message: Message::EeMoves { records },
                } => {
                    let _ = send(&mut port, &[Command::Reset]);
                    return Ok((serial, records));
                }
                _ => {}
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "{path}: no memory dump from the board within {} s",
            wait.as_secs()
        ),
    ))
}
