//! Readings: each port event goes to its e-board's recorder; boards are judged when their
//! settle time has passed; what the recorders conclude becomes jobs for the writer, and an
//! e-board's changed view is news.

use super::desk::{epoch_ms, plies, snapshot};
use super::ports::PortInput;
use super::state::{Hall, hand_raws};
use crate::serve::jobs::Job;
use crate::serve::views::{ClockView, Proposal};
use boards::protocol::{ClockMessage, Message};
use boards::transport::PortEvent;
use relay_core::game::GameResult;
use relay_core::recorder::Outcome;
use relay_store::{Incident, IncidentKind, RawEntry, now_ms};
use std::cmp::Reverse;
use std::time::SystemTime;

/// How long a board must stay unexplained before it is reported out of sync.
const OUT_OF_SYNC_AFTER_MS: i64 = 2_000;

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
                    self.due.push(Reverse((at, serial.clone())));
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
                let serials: Vec<String> = self
                    .desks
                    .iter()
                    .filter(|(_, d)| d.port == path)
                    .map(|(s, _)| s.clone())
                    .collect();
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
            self.raws.push(RawEntry {
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
        while let Some(Reverse((at, _))) = self.due.peek()
            && *at <= now
        {
            let Some(Reverse((_, serial))) = self.due.pop() else {
                break;
            };
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
        let serials: Vec<String> = self.desks.keys().cloned().collect();
        for serial in serials {
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

    /// Turns a recorder's outcomes into jobs for the writer.
    pub(super) fn after(&mut self, serial: &str, outs: &[Outcome]) {
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        let mut sync = false;
        for o in outs {
            match o {
                Outcome::NewGame { .. } => {
                    d.game_no += 1;
                    d.sent.clear();
                    d.sent_result = GameResult::Ongoing;
                    d.view.proposal = None;
                    sync = true;
                }
                Outcome::Move { .. }
                | Outcome::Correction { .. }
                | Outcome::Takeback { .. }
                | Outcome::MoveClock { .. }
                | Outcome::GameOver { .. } => sync = true,
                Outcome::Clock {
                    white,
                    black,
                    running,
                } => {
                    // A newer reading replaces a held one: it says all the older one did.
                    d.press = Some(ClockView {
                        white_ms: white.millis(),
                        black_ms: black.millis(),
                        running: *running,
                        at_ms: now_ms(),
                    });
                }
                Outcome::ResultProposed { result, reason } => {
                    let reason = *reason;
                    // The same signal again (a result changed by the moves since) keeps the
                    // moment it was first given.
                    let at_ply = match &d.view.proposal {
                        Some(p) if p.reason == reason => p.at_ply,
                        _ => plies(&d.recorder),
                    };
                    d.view.proposal = Some(Proposal {
                        result: *result,
                        reason,
                        at_ply,
                        moves_after: 0,
                    });
                }
                Outcome::IllegalMove {
                    ply,
                    color,
                    kind,
                    uci,
                    piece,
                    captured,
                    clock_pressed,
                } => {
                    tracing::warn!(%serial, ply, ?color, kind = kind.name(), uci = ?uci, "illegal move completed by a clock press");
                    d.incidents.push(Incident {
                        kind: IncidentKind::IllegalMove,
                        ply: *ply as u32,
                        color: (*color).into(),
                        illegal: Some(*kind),
                        uci: uci.clone(),
                        piece: piece.map(String::from),
                        captured: captured.map(String::from),
                        clock_pressed: *clock_pressed,
                        at_ms: now_ms(),
                        ..Incident::default()
                    });
                    sync = true;
                }
                Outcome::JoinedLate { color } => {
                    tracing::info!(%serial, ?color, "a game under way: recorded from the board, joined late");
                    d.incidents.push(Incident {
                        kind: IncidentKind::JoinedLate,
                        ply: 1,
                        color: (*color).into(),
                        at_ms: now_ms(),
                        ..Incident::default()
                    });
                    sync = true;
                }
                Outcome::ClockAdjustment {
                    ply,
                    color,
                    delta_ms,
                } => {
                    tracing::info!(%serial, ply, ?color, delta_ms, "clock corrected");
                    d.incidents.push(Incident {
                        kind: IncidentKind::ClockAdjustment,
                        ply: *ply as u32,
                        color: (*color).into(),
                        delta_ms: Some(*delta_ms),
                        at_ms: now_ms(),
                        ..Incident::default()
                    });
                    sync = true;
                }
                Outcome::OutOfSync { .. } | Outcome::InSync | Outcome::Draw { .. } => {}
            }
        }
        if let Some(p) = d.view.proposal.as_mut() {
            p.moves_after = plies(&d.recorder).saturating_sub(p.at_ply);
        }
        let now = now_ms();
        d.out_since = if d.recorder.is_out_of_sync() {
            Some(d.out_since.unwrap_or(now))
        } else {
            None
        };
        d.view.in_sync = d.out_since.is_none_or(|t| now - t < OUT_OF_SYNC_AFTER_MS);
        d.view.board_fen = d.recorder.board_as_read().board_fen().to_string();
        if sync && let Some(snap) = snapshot(serial, d) {
            // The readings behind the move are stored with it (or before it).
            hand_raws(&self.jobs, &mut self.raws);
            let _ = self.jobs.send(Job::Sync(Box::new(snap)));
        }
        // A reading with no move waiting to be judged goes out on its own.
        if !d.recorder.awaiting_judgement()
            && let Some(p) = d.press.take()
        {
            let _ = self.jobs.send(Job::Clock {
                serial: serial.to_string(),
                clock: p,
            });
        }
        self.announce(serial);
    }

    /// Sends the e-board's view to the writer when it changed (the writer adds the game).
    pub(super) fn announce(&mut self, serial: &str) {
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        // last_seen changes with every message; it alone is not news. Neither is the board
        // as read while it agrees with the game (every piece lifted would be news otherwise);
        // it matters when the board is out of sync.
        let changed = d.announced.as_ref().is_none_or(|a| {
            let mut a = a.clone();
            a.last_seen_ms = d.view.last_seen_ms;
            if d.view.in_sync && a.in_sync {
                a.board_fen.clone_from(&d.view.board_fen);
            }
            a != d.view
        });
        if changed {
            d.announced = Some(d.view.clone());
            let view = d.view.clone();
            self.send_raws();
            let _ = self.jobs.send(Job::Eboard(Box::new(view)));
        } else {
            // Not news, but `/api/eboards` shows the board as last read (the console's
            // picture of a board in sync with its game).
            let (seen, fen) = (d.view.last_seen_ms, d.view.board_fen.clone());
            self.boards.edit_eboard(serial, |v| {
                v.last_seen_ms = seen;
                v.board_fen = fen;
            });
        }
    }
}
