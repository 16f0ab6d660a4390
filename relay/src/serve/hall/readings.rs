//! Readings: each port event goes to its e-board's recorder; boards are judged when their
//! settle time has passed; what the recorders conclude becomes jobs for the writer, and an
//! e-board's changed view is news.

use super::desk::epoch_ms;
use super::outcomes::OUT_OF_SYNC_AFTER_MS;
use super::ports::PortInput;
use super::state::Hall;
use boards::protocol::{ClockMessage, Message};
use boards::transport::PortEvent;
use relay_store::{RawEntry, now_ms};
use std::time::SystemTime;

impl Hall {
    pub(super) fn on_port(&mut self, input: PortInput) {
        let PortInput { path, event } = input;
        match event {
            PortEvent::Identified { serial, .. } => {
                let serial = self.id_of(&serial, &path);
                let d = self.desk(&serial, &path);
                d.port = path.clone();
                d.view.port = path;
                d.view.connected = true;
                d.view.lost_since_ms = None;
                self.announce(&serial);
            }
            PortEvent::Message {
                serial: Some(serial),
                message,
                raw,
                at,
            } => {
                let (serial, at_ms) = self.reading(&path, &serial, at, raw);
                let d = self.desk(&serial, &path);
                if let Message::EeMoves { records } = &message {
                    self.read_memory(&serial, records);
                    return;
                }
                match &message {
                    Message::Battery { status } => d.view.battery = Some(status.percent),
                    Message::Clock {
                        clock: ClockMessage::Time(reading),
                    } => {
                        d.view.clock = Some(!reading.status.no_clock);
                        d.view.clock_battery_low =
                            reading.status.battery_low && !reading.status.no_clock;
                    }
                    Message::BoardDump { .. } | Message::FieldUpdate { .. } => {
                        d.board_read_ms = at_ms as i64;
                    }
                    _ => {}
                }
                let mut outs = d.recorder.on_message(&message, at_ms);
                outs.extend(d.recorder.tick(epoch_ms(SystemTime::now())));
                if let Some(at) = d.recorder.judge_at() {
                    self.due.at(at, &serial);
                }
                self.after(&serial, &outs);
            }
            PortEvent::Backlog {
                serial,
                records,
                board,
                raw,
                at,
            } => {
                let (serial, at_ms) = self.reading(&path, &serial, at, raw);
                self.read_backlog(&serial, &records, board.as_ref(), at_ms);
            }
            PortEvent::Garbage { bytes } => {
                self.metrics.garbage.inc();
                tracing::debug!(port = %path, len = bytes.len(), "garbage on the line skipped");
            }
            PortEvent::Lost {
                serial: Some(serial),
            } => {
                let serial = self.known_id(&serial, &path);
                if let Some(d) = self.desks.get_mut(&serial) {
                    d.view.connected = false;
                    d.view.lost_since_ms = Some(now_ms());
                }
                tracing::warn!(%serial, port = %path, "e-board lost");
                self.announce(&serial);
            }
            PortEvent::Back {
                serial: Some(serial),
            } => {
                let serial = self.known_id(&serial, &path);
                if let Some(d) = self.desks.get_mut(&serial) {
                    d.view.connected = true;
                    d.view.lost_since_ms = None;
                }
                tracing::info!(%serial, port = %path, "e-board back");
                self.announce(&serial);
            }
            PortEvent::Closed { path, reason } => {
                let now = now_ms();
                let serials = self.desks.on_port(&path);
                for s in &serials {
                    if let Some(d) = self.desks.get_mut(s) {
                        d.view.connected = false;
                        d.view.lost_since_ms.get_or_insert(now);
                    }
                    self.announce(s);
                }
                if reason == boards::transport::STOPPED {
                    // The service is shutting down: nothing to look for.
                    tracing::debug!(port = %path, "port closed at shutdown");
                } else {
                    tracing::warn!(port = %path, %reason, "port closed; looking for the board again");
                }
            }
            PortEvent::Moved { serial, to, .. } => {
                let serial = self.known_id(&serial, &path);
                if let Some(d) = self.desks.get_mut(&serial) {
                    d.port = to.clone();
                    d.view.port = to;
                }
            }
            _ => {}
        }
    }

    /// A reading from the board `serial` on `path` received `at`: counted, its bytes kept
    /// for the black box (a bus reply of several records comes with its first message only),
    /// its board seen. Returns the board's desk id and the time in ms.
    fn reading(&mut self, path: &str, serial: &str, at: SystemTime, raw: Vec<u8>) -> (String, u64) {
        let serial = self.id_of(serial, path);
        self.metrics.messages.inc();
        let at_ms = epoch_ms(at);
        if !raw.is_empty() {
            self.writer.keep_reading(RawEntry {
                port: path.to_string(),
                serial: Some(serial.clone()),
                received_at_ms: at_ms as i64,
                bytes: raw,
            });
        }
        self.desk(&serial, path).view.last_seen_ms = at_ms as i64;
        (serial, at_ms)
    }

    /// Judges the boards whose settle time has passed.
    pub(super) fn judge_due(&mut self) {
        let now = epoch_ms(SystemTime::now());
        while let Some(serial) = self.due.pop_due(now) {
            // A board touched again since has a later entry of its own: this one finds
            // nothing to judge yet.
            if let Some(d) = self.desks.get_mut(&serial) {
                let outs = d.recorder.tick(now);
                // A held clock reading goes out with the judgement, move or not.
                if !outs.is_empty() || d.press.is_some() {
                    self.after(&serial, &outs);
                }
            }
        }
    }

    pub(super) fn tick_all(&mut self) {
        let now = epoch_ms(SystemTime::now());
        for serial in self.desks.ids() {
            if let Some(d) = self.desks.get_mut(&serial) {
                let outs = d.recorder.tick(now);
                let lasting = d.view.in_sync
                    && d.out_since
                        .is_some_and(|t| now as i64 - t >= OUT_OF_SYNC_AFTER_MS);
                // A held clock reading whose board was judged without a move.
                let press_free = d.press.is_some() && !d.recorder.awaiting_judgement();
                if !outs.is_empty() || lasting || press_free {
                    self.after(&serial, &outs);
                }
            }
        }
    }
}
