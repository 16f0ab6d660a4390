//! The hall's state: a desk per e-board, which desk each serial on each port is, the
//! moments boards are due to be judged, and the readings waiting for the black box.

use super::desk::Desk;
use crate::serve::instance::instance_name;
use crate::serve::jobs::{Job, Resume, ToWriter};
use crate::serve::live::Boards;
use crate::serve::metrics::Metrics;
use crate::serve::views::EboardView;
use relay_core::game::GameResult;
use relay_core::recorder::{Recorder, RecorderConfig};
use relay_store::{RawEntry, now_ms};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

/// Hands `raws` (the hall's waiting readings) to the writer as one job; nothing when there
/// are none. Takes the two fields, not the hall, so it can run while a desk is borrowed.
pub(super) fn hand_raws(jobs: &ToWriter, raws: &mut Vec<RawEntry>) {
    if !raws.is_empty() {
        let _ = jobs.send(Job::Raws(std::mem::take(raws)));
    }
}

pub struct Hall {
    /// The boards' live state, which the hall notes an e-board's last reading in.
    pub(super) boards: Arc<Boards>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) cfg: RecorderConfig,
    pub(super) desks: HashMap<String, Desk>,
    /// Which desk (e-board id) a serial number reported on a port belongs to, by port then
    /// serial: the serial itself, or `serial@port` when another connected board already
    /// reports it. (Looked up for every message, so without building a key.)
    pub(super) ids: HashMap<String, HashMap<String, String>>,
    pub(super) resume: HashMap<String, Resume>,
    pub(super) jobs: ToWriter,
    /// When each touched board is due to be judged (earliest first; a board touched again
    /// has several entries, and only the last finds it still).
    pub(super) due: BinaryHeap<Reverse<(u64, String)>>,
    /// Readings for the black box not yet handed to the writer: they go together, before
    /// the next move or e-board news and at least every [`RAWS_EVERY`], instead of one job
    /// (and one wake-up of the writer) per reading; 1000 boards send about 2000 a second.
    pub(super) raws: Vec<RawEntry>,
}

impl Hall {
    pub fn new(
        boards: Arc<Boards>,
        metrics: Arc<Metrics>,
        cfg: RecorderConfig,
        resume: HashMap<String, Resume>,
        jobs: ToWriter,
    ) -> Hall {
        Hall {
            boards,
            metrics,
            cfg,
            desks: HashMap::new(),
            ids: HashMap::new(),
            resume,
            jobs,
            due: BinaryHeap::new(),
            raws: Vec::new(),
        }
    }

    /// Hands the waiting readings to the writer, in the order they were read.
    pub(super) fn send_raws(&mut self) {
        hand_raws(&self.jobs, &mut self.raws);
    }

    pub(super) fn desk(&mut self, serial: &str, port: &str) -> &mut Desk {
        if !self.desks.contains_key(serial) {
            let (recorder, sent) = match self.resume.remove(serial) {
                Some(r) => {
                    tracing::info!(%serial, plies = r.moves.len(), "carrying on with the stored game");
                    (
                        Recorder::resume(self.cfg.clone(), r.game, r.orientation),
                        r.moves,
                    )
                }
                None => (Recorder::new(self.cfg.clone()), Vec::new()),
            };
            let sent_result = recorder.game().map_or(GameResult::Ongoing, |g| g.result);
            let view = EboardView {
                serial: serial.to_string(),
                port: port.to_string(),
                connected: true,
                lost_since_ms: None,
                last_seen_ms: now_ms(),
                battery: None,
                clock: None,
                clock_battery_low: false,
                in_sync: true,
                board_fen: String::new(),
                game_id: None,
                board_no: None,
                round_id: None,
                proposal: None,
                warning: None,
                memory: None,
                read_by: instance_name().to_string(),
            };
            self.desks.insert(
                serial.to_string(),
                Desk {
                    recorder,
                    port: port.to_string(),
                    game_no: 0,
                    sent,
                    sent_result,
                    view,
                    announced: None,
                    board_read_ms: 0,
                    out_since: None,
                    press: None,
                    incidents: Vec::new(),
                },
            );
            let _ = self.jobs.send(Job::Touch {
                serial: serial.to_string(),
                port: port.to_string(),
            });
        }
        // Just inserted above when missing.
        #[allow(clippy::unwrap_used)]
        self.desks.get_mut(serial).unwrap()
    }
}

impl std::fmt::Debug for Hall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hall").finish_non_exhaustive()
    }
}
