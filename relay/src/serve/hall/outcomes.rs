//! What a recorder's outcomes become: the jobs the writer stores (moves, clocks, results,
//! incidents, proposals) and the e-board's view, announced when it is news. Below the files
//! that read boards (`readings`, `memory`, `ids`), which all end here.

use super::desk::{plies, snapshot};
use super::state::Hall;
use crate::serve::jobs::Job;
use crate::serve::views::{ClockView, Proposal};
use relay_core::game::GameResult;
use relay_core::recorder::Outcome;
use relay_store::{Incident, IncidentKind, now_ms};

/// How long a board must stay unexplained before it is reported out of sync.
pub(super) const OUT_OF_SYNC_AFTER_MS: i64 = 2_000;

impl Hall {
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
            self.writer.send_after_readings(Job::Sync(Box::new(snap)));
        }
        // A reading with no move waiting to be judged goes out on its own.
        if !d.recorder.awaiting_judgement()
            && let Some(p) = d.press.take()
        {
            self.writer.send(Job::Clock {
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
            self.writer.send_after_readings(Job::Eboard(Box::new(view)));
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
