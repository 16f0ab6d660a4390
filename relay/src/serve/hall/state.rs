//! The hall's state: a desk per e-board, which desk each serial on each port is, the
//! moments boards are due to be judged, and the readings waiting for the black box.

use super::desk::{Desk, Desks, IdMap};
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

/// What the hall sends the writer: jobs in order, and the black box's readings, which wait
/// to go together (before the next move or e-board news and at least every `RAWS_EVERY`)
/// instead of one job, and one wake-up of the writer, per reading: 1000 boards send about
/// 2000 a second.
#[derive(Debug)]
pub(super) struct ToWriterQueue {
    jobs: ToWriter,
    raws: Vec<RawEntry>,
}

impl ToWriterQueue {
    /// Sends `job` now; readings waiting stay waiting.
    pub(super) fn send(&self, job: Job) {
        let _ = self.jobs.send(job);
    }

    /// Sends the readings waiting, then `job`: a board's change is stored with (or after)
    /// the readings behind it.
    pub(super) fn send_after_readings(&mut self, job: Job) {
        self.send_readings();
        self.send(job);
    }

    /// Keeps a reading for the black box until the next hand-over.
    pub(super) fn keep_reading(&mut self, raw: RawEntry) {
        self.raws.push(raw);
    }

    pub(super) fn readings_waiting(&self) -> bool {
        !self.raws.is_empty()
    }

    /// Hands the waiting readings to the writer as one job, in the order they were read.
    pub(super) fn send_readings(&mut self) {
        if !self.raws.is_empty() {
            let raws = std::mem::take(&mut self.raws);
            self.send(Job::Raws(raws));
        }
    }
}

/// When each touched board is due to be judged, earliest first. A board touched again has
/// several entries, and only the last finds it still (a desk judged early judges nothing).
#[derive(Debug, Default)]
pub(super) struct DueQueue(BinaryHeap<Reverse<(u64, String)>>);

impl DueQueue {
    /// `serial` is due to be judged at `at_ms` (ms since the epoch).
    pub(super) fn at(&mut self, at_ms: u64, serial: &str) {
        self.0.push(Reverse((at_ms, serial.to_string())));
    }

    /// The earliest moment a board is due (ms since the epoch).
    pub(super) fn next_ms(&self) -> Option<u64> {
        self.0.peek().map(|Reverse((at, _))| *at)
    }

    /// The next board due by `now_ms`, taken off the queue.
    pub(super) fn pop_due(&mut self, now_ms: u64) -> Option<String> {
        if self.next_ms()? > now_ms {
            return None;
        }
        self.0.pop().map(|Reverse((_, serial))| serial)
    }
}

pub struct Hall {
    /// The boards' live state, which the hall notes an e-board's last reading in.
    pub(super) boards: Arc<Boards>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) cfg: RecorderConfig,
    pub(super) desks: Desks,
    pub(super) ids: IdMap,
    /// Stored games a desk not opened yet carries on from.
    pub(super) resume: HashMap<String, Resume>,
    pub(super) writer: ToWriterQueue,
    pub(super) due: DueQueue,
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
            desks: Desks::default(),
            ids: IdMap::default(),
            resume,
            writer: ToWriterQueue {
                jobs,
                raws: Vec::new(),
            },
            due: DueQueue::default(),
        }
    }

    /// The desk of `serial`, opened on `port` when it has none yet: its recorder carries on
    /// from the stored game when there is one, and the writer is told the e-board was seen.
    pub(super) fn desk(&mut self, serial: &str, port: &str) -> &mut Desk {
        let (cfg, resume, writer) = (&self.cfg, &mut self.resume, &self.writer);
        self.desks.open(serial, || {
            let (recorder, sent) = match resume.remove(serial) {
                Some(r) => {
                    tracing::info!(%serial, plies = r.moves.len(), "carrying on with the stored game");
                    (
                        Recorder::resume(cfg.clone(), r.game, r.orientation),
                        r.moves,
                    )
                }
                None => (Recorder::new(cfg.clone()), Vec::new()),
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
            writer.send(Job::Touch {
                serial: serial.to_string(),
                port: port.to_string(),
            });
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
            }
        })
    }
}

impl std::fmt::Debug for Hall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hall").finish_non_exhaustive()
    }
}
