//! A chain of serial boards on one line (bus mode, dgt-protocol.md §10): finding the boards,
//! polling each for its changes, board and clock, asking again after a bad checksum, and
//! handing on a board's backlog (what it logged while nothing polled it) with the board read
//! right after it. Started by [`super::session::run`] for a port in bus mode.

use super::link::{Port, PortEvent, STOPPED, SessionConfig, read_some, send, sleep_unless_stopped};
use crate::protocol::{
    BusCommand, BusReplyKind, ClockMessage, Command, Decoded, Decoder, EeRecord, LineMode, Message,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// One board on a bus, as the session tracks it.
struct BusBoard {
    serial: String,
    last_ok: Instant,
    last_dump: Instant,
    last_clock: Option<ClockMessage>,
    lost: bool,
    /// The next change poll returns what the board logged while nothing read it (just
    /// found on the line, or back after being lost).
    backlog: bool,
}

enum BusAnswer {
    Reply(BusReplyKind, Vec<u8>),
    BadChecksum,
    Timeout,
}

struct BusLine<'a> {
    cfg: &'a SessionConfig,
    port: &'a mut Port,
    dec: Decoder,
    sink: &'a mut dyn FnMut(PortEvent),
    buf: Vec<u8>,
}

impl BusLine<'_> {
    fn command(&mut self, command: BusCommand, address: u16) -> Result<(), String> {
        send(self.port, &[Command::Bus { command, address }]).map_err(|e| e.to_string())
    }

    /// Reads until `deadline`, handing every item to `f`; stops early when `f` says so.
    fn read_until(
        &mut self,
        deadline: Instant,
        f: &mut dyn FnMut(Decoded, Vec<u8>) -> bool,
    ) -> Result<(), String> {
        let mut buf = std::mem::take(&mut self.buf);
        let result = loop {
            if Instant::now() >= deadline {
                break Ok(());
            }
            let n = match read_some(self.port, &mut buf) {
                Ok(n) => n.unwrap_or(0),
                Err(reason) => break Err(reason),
            };
            let mut done = false;
            // One garbage report per read, not per run (see `single`).
            let mut junk = Vec::new();
            for (item, raw) in self.dec.feed(&buf[..n]) {
                if let Decoded::Garbage { bytes } = &item {
                    junk.extend_from_slice(bytes);
                }
                done |= f(item, raw);
            }
            if !junk.is_empty() {
                (self.sink)(PortEvent::Garbage { bytes: junk });
            }
            if done {
                break Ok(());
            }
        };
        self.buf = buf;
        result
    }

    /// Reports a message from the board `serial`.
    fn emit(&mut self, serial: &str, message: Message, raw: Vec<u8>, at: SystemTime) {
        (self.sink)(PortEvent::Message {
            serial: Some(serial.to_string()),
            message,
            raw,
            at,
        });
    }

    /// Sends a command to one board and waits for its answer.
    fn request(&mut self, command: BusCommand, address: u16) -> Result<BusAnswer, String> {
        self.command(command, address)?;
        let mut answer = BusAnswer::Timeout;
        let deadline = Instant::now() + self.cfg.bus_reply_timeout;
        self.read_until(deadline, &mut |item, raw| match item {
            Decoded::Bus { reply } if reply.address == address => {
                answer = BusAnswer::Reply(reply.reply, raw);
                true
            }
            Decoded::BadChecksum { address: a, .. } if a == address => {
                answer = BusAnswer::BadChecksum;
                true
            }
            _ => false,
        })?;
        if matches!(answer, BusAnswer::BadChecksum) {
            (self.sink)(PortEvent::ChecksumError { address });
        }
        Ok(answer)
    }

    /// A request that is safe to repeat (dump, clock): asked once more after a bad checksum.
    fn request_idempotent(
        &mut self,
        command: BusCommand,
        address: u16,
    ) -> Result<BusAnswer, String> {
        match self.request(command, address)? {
            BusAnswer::BadChecksum => self.request(command, address),
            other => Ok(other),
        }
    }
}

pub(super) fn bus(
    cfg: &SessionConfig,
    path: &str,
    port: &mut Port,
    known: &mut Vec<String>,
    sink: &mut dyn FnMut(PortEvent),
    stop: &AtomicBool,
) -> String {
    let mut line = BusLine {
        cfg,
        port,
        dec: Decoder::new(LineMode::Bus),
        sink,
        buf: vec![0u8; 1024],
    };
    match bus_loop(&mut line, path, known, stop) {
        Ok(()) => STOPPED.into(),
        Err(reason) => reason,
    }
}

/// Finds the boards on the line (§10: ping the known ones, then repeatedly mute the found ones
/// and broadcast a ping until nobody new answers).
fn discover(
    line: &mut BusLine<'_>,
    boards: &BTreeMap<u16, BusBoard>,
    known: &[String],
) -> Result<Vec<u16>, String> {
    let mut found: Vec<u16> = boards.keys().copied().collect();
    for s in known {
        if let Ok(a) = s.parse::<u16>()
            && !found.contains(&a)
            && matches!(
                line.request(BusCommand::Ping, a)?,
                BusAnswer::Reply(BusReplyKind::Ping, _)
            )
        {
            found.push(a);
        }
    }
    for _round in 0..16 {
        for a in found.clone() {
            line.request(BusCommand::IgnoreNextPing, a)?;
        }
        line.command(BusCommand::Ping, 0)?;
        let mut new = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(1200);
        line.read_until(deadline, &mut |item, _| {
            if let Decoded::Bus { reply } = item
                && reply.reply == BusReplyKind::Ping
                && !found.contains(&reply.address)
                && !new.contains(&reply.address)
            {
                new.push(reply.address);
            }
            false
        })?;
        if new.is_empty() {
            break;
        }
        found.extend(new);
    }
    found.retain(|a| !boards.contains_key(a));
    Ok(found)
}

fn bus_loop(
    line: &mut BusLine<'_>,
    path: &str,
    known: &mut Vec<String>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let cfg = line.cfg;
    let mut boards: BTreeMap<u16, BusBoard> = BTreeMap::new();
    let mut last_discovery: Option<Instant> = None;
    while !stop.load(Ordering::Relaxed) {
        let due = last_discovery.is_none_or(|t| {
            t.elapsed()
                >= if boards.is_empty() {
                    Duration::from_secs(2)
                } else {
                    cfg.bus_rediscover
                }
        });
        if due {
            last_discovery = Some(Instant::now());
            for address in discover(line, &boards, known)? {
                let serial = format!("{address:05}");
                if !known.contains(&serial) {
                    known.push(serial.clone());
                }
                (line.sink)(PortEvent::Identified {
                    serial: serial.clone(),
                    address: Some(address),
                    path: path.to_string(),
                });
                if let BusAnswer::Reply(BusReplyKind::Version { major, minor }, raw) =
                    line.request(BusCommand::SendVersion, address)?
                {
                    let message = Message::Version { major, minor };
                    line.emit(&serial, message, raw, SystemTime::now());
                }
                let then = Instant::now();
                boards.insert(
                    address,
                    BusBoard {
                        serial,
                        last_ok: then,
                        // Due at once: the first round dumps the board.
                        last_dump: then.checked_sub(cfg.refresh).unwrap_or(then),
                        last_clock: None,
                        lost: false,
                        backlog: true,
                    },
                );
            }
        }
        let addresses: Vec<u16> = boards.keys().copied().collect();
        for address in addresses {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            poll_board(line, &mut boards, address)?;
        }
        sleep_unless_stopped(cfg.bus_poll_gap, stop);
    }
    Ok(())
}

fn poll_board(
    line: &mut BusLine<'_>,
    boards: &mut BTreeMap<u16, BusBoard>,
    address: u16,
) -> Result<(), String> {
    let cfg = line.cfg;
    let Some(serial) = boards.get(&address).map(|b| b.serial.clone()) else {
        return Ok(());
    };
    let mut answered = false;
    let mut doubt = false;
    let mut pending: Option<(Vec<EeRecord>, Vec<u8>, SystemTime)> = None;
    // Changes since the last poll; repeat (not re-request) after a bad checksum, so nothing
    // the board already handed over is lost.
    let mut answer = line.request(BusCommand::SendChanges, address)?;
    for _ in 0..3 {
        if !matches!(answer, BusAnswer::BadChecksum) {
            break;
        }
        answer = line.request(BusCommand::RepeatChanges, address)?;
    }
    // Just found, or silent until now: this poll's changes are what it logged meanwhile.
    let backlog = boards.get(&address).is_some_and(|b| b.backlog || b.lost);
    match answer {
        BusAnswer::Reply(BusReplyKind::Changes { records }, raw) if backlog => {
            answered = true;
            if let Some(b) = boards.get_mut(&address) {
                b.backlog = false;
            }
            // Handed on with the board as it stands now, read next in this same poll.
            pending = Some((records, raw, SystemTime::now()));
            doubt = true;
        }
        BusAnswer::Reply(BusReplyKind::Changes { records }, raw) => {
            answered = true;
            let at = SystemTime::now();
            // The reply's bytes go to the black box once, with its first message.
            let mut raw = Some(raw);
            for r in records {
                // In the log's order: a lever press comes after the squares of the move it
                // ended (a poll may return several moves and presses).
                let message = match r.as_message() {
                    Some(m) => m,
                    None if r == EeRecord::Nop => continue,
                    // The board restarted, was set up anew, or sent something we cannot place:
                    // read the whole board rather than trust the log.
                    None => {
                        doubt = true;
                        continue;
                    }
                };
                line.emit(&serial, message, raw.take().unwrap_or_default(), at);
            }
        }
        BusAnswer::BadChecksum => doubt = true,
        BusAnswer::Reply(..) | BusAnswer::Timeout => {}
    }
    let refresh_due = boards
        .get(&address)
        .is_some_and(|b| b.last_dump.elapsed() >= cfg.refresh);
    let dump = if doubt || refresh_due {
        Some(line.request_idempotent(BusCommand::SendBoard, address)?)
    } else {
        None
    };
    if let Some((records, raw, at)) = pending {
        let board = match &dump {
            Some(BusAnswer::Reply(BusReplyKind::BoardDump { placement }, _)) => Some(*placement),
            _ => None,
        };
        (line.sink)(PortEvent::Backlog {
            serial: serial.clone(),
            records,
            board,
            raw,
            at,
        });
    }
    if let Some(BusAnswer::Reply(BusReplyKind::BoardDump { placement }, raw)) = dump {
        answered = true;
        if let Some(b) = boards.get_mut(&address) {
            b.last_dump = Instant::now();
        }
        let message = Message::BoardDump { placement };
        line.emit(&serial, message, raw, SystemTime::now());
    }
    if let BusAnswer::Reply(BusReplyKind::Clock { clock }, raw) =
        line.request_idempotent(BusCommand::SendClock, address)?
    {
        answered = true;
        let changed = boards
            .get(&address)
            .is_some_and(|b| b.last_clock != Some(clock));
        if let Some(b) = boards.get_mut(&address) {
            b.last_clock = Some(clock);
        }
        if changed {
            let message = Message::Clock { clock };
            line.emit(&serial, message, raw, SystemTime::now());
        }
    }
    let Some(b) = boards.get_mut(&address) else {
        return Ok(());
    };
    if answered {
        b.last_ok = Instant::now();
        if b.lost {
            b.lost = false;
            // Force a dump next round: moves made while it was away show up there.
            b.last_dump = b.last_dump.checked_sub(cfg.refresh).unwrap_or(b.last_dump);
            (line.sink)(PortEvent::Back {
                serial: Some(serial),
            });
        }
    } else if !b.lost && b.last_ok.elapsed() > cfg.lost_after {
        b.lost = true;
        (line.sink)(PortEvent::Lost {
            serial: Some(serial),
        });
    }
    Ok(())
}
