//! The hall: one reader thread per serial port (the same sessions `relay sniff` uses), and one
//! task that owns every e-board's recorder. It never waits for the database: what the
//! recorders conclude goes to the writer's queue as jobs, and the writer commits and announces.

use super::alarm::Alarm;
use super::claims::PortClaims;
use super::health::Metrics;
use super::instance::instance_name;
use super::jobs::{
    EditAction, GameEdit, HallCommand, Job, Resume, Snapshot, ToWriter, orientation_name,
};
use super::live::Boards;
use super::views::{ClockView, EboardView, Proposal};
use boards::protocol::{ClockMessage, LineMode, Message};
use boards::transport::{PortEvent, SessionConfig};
use relay_core::game::Game;
use relay_core::recorder::{Outcome, Recorder, RecorderConfig};
use relay_store::{RawEntry, StoredMove, now_ms};
use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;

/// What the reader threads hand to the hall.
#[derive(Debug)]
pub struct PortInput {
    pub path: String,
    pub event: PortEvent,
}

/// Starts reader threads for the ports given (paths, `dir/prefix*` patterns or `auto`) and
/// keeps looking for new ones every second: boards come and go in a hall.
pub fn watch_ports(
    patterns: Vec<String>,
    mode: LineMode,
    tx: mpsc::UnboundedSender<PortInput>,
    stop: Arc<AtomicBool>,
    claims: Arc<PortClaims>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let in_use: Arc<Mutex<HashSet<String>>> = Arc::default();
        let mut started: HashSet<String> = HashSet::new();
        while !stop.load(Ordering::Relaxed) {
            let auto = patterns.iter().any(|p| p == "auto");
            let globs: Vec<String> = patterns.iter().filter(|p| *p != "auto").cloned().collect();
            let mut found = boards::transport::ports::expand(&globs);
            if auto {
                found.extend(
                    boards::transport::ports::list(&[])
                        .into_iter()
                        .filter(|p| p.looks_like_dgt)
                        .map(|p| p.path),
                );
            }
            for path in found {
                // Known paths are passed over before anything asks the file system: the
                // whole list is looked at every second, and with 1000 boards resolving each
                // path again was a thousand `readlink`s a second.
                if started.contains(&path) {
                    continue;
                }
                let canonical = std::fs::canonicalize(&path)
                    .map_or_else(|_| path.clone(), |p| p.display().to_string());
                if started.contains(&canonical) {
                    continue;
                }
                // A session follows its board through unplugs itself; a port claimed by one
                // is never opened twice.
                if in_use
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(&canonical)
                {
                    continue;
                }
                started.insert(path.clone());
                started.insert(canonical);
                tracing::info!(port = %path, "reading port");
                let (tx, stop, in_use) = (tx.clone(), stop.clone(), in_use.clone());
                let claims = claims.clone();
                // Not joined: the hall knows a reader is done when its sender is gone.
                std::thread::spawn(move || {
                    // Read while this relay holds the port; wait while another does.
                    let mut said = false;
                    while !stop.load(Ordering::Relaxed) {
                        let Some(session_stop) = claims.session(&path) else {
                            if !said {
                                tracing::info!(port = %path, "another relay reads this port; waiting to take over");
                                said = true;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                            continue;
                        };
                        said = false;
                        let mut cfg = SessionConfig::new(&path, mode);
                        cfg.in_use = Some(in_use.clone());
                        let name = path.clone();
                        boards::transport::run(
                            cfg,
                            &mut |event| {
                                let _ = tx.send(PortInput {
                                    path: name.clone(),
                                    event,
                                });
                            },
                            &session_stop,
                        );
                    }
                    // Done: let go of everything shared, then wait (see READER_LINGER).
                    drop(tx);
                    drop(claims);
                    drop(in_use);
                    std::thread::park_timeout(READER_LINGER);
                });
            }
            for _ in 0..10 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    })
}

/// How long a port's reader thread stays parked after the service stopped, its sender already
/// dropped, before it ends. Ending at once, a thousand of them gave back their stacks one by
/// one under the process's one memory-map lock and the hall and the writer waited behind them
/// for 15-20 s; parked, they end with the process (in a process that goes on, as in tests, a
/// minute later).
const READER_LINGER: Duration = Duration::from_secs(60);

/// How long a board must stay unexplained before it is reported out of sync.
const OUT_OF_SYNC_AFTER_MS: i64 = 2_000;
/// How often every board is looked at besides the moments they are due to be judged: for a
/// board out of sync long enough to say so, and as a safety net.
const TICK_ALL: Duration = Duration::from_millis(250);
/// How long a reading waits in the hall, at most, before it goes to the writer for the black
/// box (moves and e-board news take the waiting readings with them at once).
const RAWS_EVERY: Duration = Duration::from_millis(100);
/// How often, at most, the hall takes in what the ports read (see [`Hall::run`]).
const PORTS_EVERY: Duration = Duration::from_millis(10);

/// One e-board and its recorder.
struct Desk {
    recorder: Recorder,
    port: String,
    /// Counts the games the recorder started; the writer puts a new one in a new game.
    game_no: u64,
    /// The moves as last sent to the writer (SAN, UCI, FEN, clocks, when accepted).
    sent: Vec<StoredMove>,
    sent_result: String,
    view: EboardView,
    /// The view as last announced, to announce only changes.
    announced: Option<EboardView>,
    /// When the last board (not clock) message arrived.
    board_read_ms: i64,
    /// Since when the recorder has found the board out of sync (a piece held in the hand
    /// looks the same for a moment; only a lasting one is reported).
    out_since: Option<i64>,
    /// A clock reading held while a board change waits to be judged (at most the settle
    /// time): the lever press usually ends the move being judged, and then rides on its
    /// message (one frame per move, not two).
    press: Option<ClockView>,
}

/// Hands `raws` (the hall's waiting readings) to the writer as one job; nothing when there
/// are none. Takes the two fields, not the hall, so it can run while a desk is borrowed.
fn hand_raws(jobs: &ToWriter, raws: &mut Vec<RawEntry>) {
    if !raws.is_empty() {
        let _ = jobs.send(Job::Raws(std::mem::take(raws)));
    }
}

/// A port as a short name that can stand in an e-board id and a URL: its file name
/// (`/dev/ttyUSB1` → `ttyUSB1`, `COM3`), with the directory's when the name is a bare number
/// (`/dev/pts/3` → `pts-3`).
fn port_tag(port: &str) -> String {
    let path = std::path::Path::new(port);
    let name = path
        .file_name()
        .map_or_else(|| port.to_string(), |n| n.to_string_lossy().to_string());
    let name = match path.parent().and_then(|p| p.file_name()) {
        Some(dir) if name.chars().all(|c| c.is_ascii_digit()) => {
            format!("{}-{name}", dir.to_string_lossy())
        }
        _ => name,
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// How many plies the recorder's game has.
fn plies(r: &Recorder) -> u32 {
    r.game().map_or(0, |g| g.moves.len() as u32)
}

fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

pub struct Hall {
    /// The boards' live state, which the hall notes an e-board's last reading in.
    boards: Arc<Boards>,
    metrics: Arc<Metrics>,
    cfg: RecorderConfig,
    desks: HashMap<String, Desk>,
    /// Which desk (e-board id) a serial number reported on a port belongs to, by port then
    /// serial: the serial itself, or `serial@port` when another connected board already
    /// reports it. (Looked up for every message, so without building a key.)
    ids: HashMap<String, HashMap<String, String>>,
    resume: HashMap<String, Resume>,
    jobs: ToWriter,
    /// When each touched board is due to be judged (earliest first; a board touched again
    /// has several entries, and only the last finds it still).
    due: BinaryHeap<Reverse<(u64, String)>>,
    /// Readings for the black box not yet handed to the writer: they go together, before
    /// the next move or e-board news and at least every [`RAWS_EVERY`], instead of one job
    /// (and one wake-up of the writer) per reading; 1000 boards send about 2000 a second.
    raws: Vec<RawEntry>,
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

    /// Runs until the port channel closes (every reader stopped).
    pub async fn run(
        mut self,
        mut ports: mpsc::UnboundedReceiver<PortInput>,
        mut edits: mpsc::UnboundedReceiver<HallCommand>,
    ) {
        // A still board is judged the moment its settle time has passed (`due`); every board
        // is looked at on a slower tick as well, for what has no moment of its own (a board
        // out of sync for long enough to say so).
        let mut tick = tokio::time::interval(TICK_ALL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut raws_tick = tokio::time::interval(RAWS_EVERY);
        raws_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Readings are taken in turns, at most one every PORTS_EVERY, each taking everything
        // read meanwhile: 1000 boards send about 3000 messages a second, and waking for each
        // (a reader thread unparking a runtime worker) cost more than reading it. A board is
        // judged from when its messages were received, not when they were taken in, so the
        // wait adds nothing to a move's time.
        let mut ports_open_at = tokio::time::Instant::now();
        // Boards are judged when their settle time ends, to the microsecond (see `alarm`);
        // tokio's timer, a little later, is the net under it.
        let alarm = Alarm::start();
        let net = if alarm.is_running() {
            Duration::from_millis(2)
        } else {
            Duration::ZERO
        };
        loop {
            let ports_open = tokio::time::Instant::now() >= ports_open_at;
            let next_due = self.due.peek().map(|Reverse((at, _))| {
                let since_epoch = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                std::time::Instant::now() + Duration::from_millis(*at).saturating_sub(since_epoch)
            });
            alarm.set(next_due);
            let net_at = next_due.map(|t| tokio::time::Instant::from_std(t) + net);
            tokio::select! {
                _ = alarm.rung(), if next_due.is_some() => self.judge_due(),
                _ = tokio::time::sleep_until(net_at.unwrap_or_else(tokio::time::Instant::now)), if net_at.is_some() => self.judge_due(),
                _ = tokio::time::sleep_until(ports_open_at), if !ports_open => {}
                input = ports.recv(), if ports_open => match input {
                    Some(i) => {
                        self.on_port(i);
                        while let Ok(i) = ports.try_recv() {
                            self.on_port(i);
                        }
                        ports_open_at = tokio::time::Instant::now() + PORTS_EVERY;
                    }
                    None => break,
                },
                Some(cmd) = edits.recv() => match cmd {
                    HallCommand::Edit(edit) => self.on_edit(edit),
                    HallCommand::ContinueFromBoard { serial, white_to_move, reply } => {
                        let answer = self.continue_from_board(&serial, white_to_move);
                        let _ = reply.send(answer);
                    }
                    HallCommand::TakeOver { port, reply } => self.take_over(&port, reply),
                    HallCommand::Adopt { serial, game_id, moves, result } => {
                        self.adopt(&serial, game_id, &moves, &result);
                        let _ = self.jobs.send(Job::Adopted { serial });
                    }
                    HallCommand::Resumed { resume, reply } => {
                        for (serial, r) in resume {
                            if !self.desks.contains_key(&serial) {
                                self.resume.insert(serial, r);
                            }
                        }
                        let _ = reply.send(());
                    }
                },
                // The loop ends when every reader has stopped and its readings are taken
                // in: nothing read is left behind at shutdown.
                _ = tick.tick() => self.tick_all(),
                _ = raws_tick.tick(), if !self.raws.is_empty() => self.send_raws(),
            }
        }
        // Shutdown: what the recorders still hold (a last still board) is written too.
        let serials: Vec<String> = self.desks.keys().cloned().collect();
        for serial in serials {
            if let Some(d) = self.desks.get_mut(&serial) {
                let outs = d.recorder.flush();
                self.after(&serial, &outs);
            }
        }
        self.send_raws();
    }

    /// Hands the waiting readings to the writer, in the order they were read.
    fn send_raws(&mut self) {
        hand_raws(&self.jobs, &mut self.raws);
    }

    /// Before reading `port`, which another relay may have been reading: its boards' desks
    /// are stale, so they go, and the writer reads from the store every game it has no board
    /// here for (the others are this relay's own, stored by it); the hall resumes from what
    /// it reads (`HallCommand::Resumed`), and then `reply` lets the port be opened.
    fn take_over(&mut self, port: &str, reply: tokio::sync::oneshot::Sender<()>) {
        self.desks.retain(|_, d| d.port != port);
        self.ids.remove(port);
        let keep: Vec<String> = self.desks.keys().cloned().collect();
        let _ = self.jobs.send(Job::Reload { keep, reply });
    }

    /// The e-board id of `serial` as reported on `port`. Serial numbers are unique in
    /// principle, but a repaired board, a clone or a misconfigured Bluetooth adapter can repeat
    /// one: a second connected board with the same serial gets `serial@port` (the same id
    /// after a restart, so its stored game is carried on), both games are recorded, and the
    /// log and the console say so, naming the ports.
    fn id_of(&mut self, serial: &str, port: &str) -> String {
        if let Some(id) = self.mapped(serial, port) {
            return id.clone();
        }
        let second = format!("{serial}@{}", port_tag(port));
        let id = if self.desks.contains_key(&second) || self.resume.contains_key(&second) {
            second
        } else {
            match self.desks.get(serial) {
                Some(d) if d.port != port && d.view.connected => second,
                _ => serial.to_string(),
            }
        };
        if id != serial {
            let first_port = self
                .desks
                .get(serial)
                .map_or_else(|| "another port".to_string(), |d| d.port.clone());
            tracing::warn!(
                %serial,
                first = %first_port,
                second = %port,
                id = %id,
                "two e-boards report the same serial number; both are recorded, the second as {id}"
            );
            let text = format!(
                "serial {serial} is reported by two e-boards: on {first_port} and on {port} \
                 (recorded as {id})"
            );
            self.map_id(serial, port, &id);
            self.desk(&id, port).view.warning = Some(text.clone());
            self.announce(&id);
            if let Some(d) = self.desks.get_mut(serial) {
                d.view.warning = Some(text);
                self.announce(serial);
            }
            return id;
        }
        self.map_id(serial, port, &id);
        id
    }

    fn mapped(&self, serial: &str, port: &str) -> Option<&String> {
        self.ids.get(port).and_then(|m| m.get(serial))
    }

    fn map_id(&mut self, serial: &str, port: &str, id: &str) {
        self.ids
            .entry(port.to_string())
            .or_default()
            .insert(serial.to_string(), id.to_string());
    }

    /// The e-board id of an event that names a serial (one already mapped, or the serial).
    fn known_id(&self, serial: &str, port: &str) -> String {
        self.mapped(serial, port)
            .cloned()
            .unwrap_or_else(|| serial.to_string())
    }

    fn desk(&mut self, serial: &str, port: &str) -> &mut Desk {
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
            let sent_result = recorder
                .game()
                .map_or("*".to_string(), |g| g.result.to_string());
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

    fn on_port(&mut self, input: PortInput) {
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
                let serial = self.id_of(&serial, &path);
                self.metrics.messages.fetch_add(1, Ordering::Relaxed);
                let at_ms = epoch_ms(at);
                // A bus reply of several records comes with its first message only.
                if !raw.is_empty() {
                    self.raws.push(RawEntry {
                        port: path.clone(),
                        serial: Some(serial.clone()),
                        received_at_ms: at_ms as i64,
                        bytes: raw,
                    });
                }
                let d = self.desk(&serial, &path);
                d.view.last_seen_ms = at_ms as i64;
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
            PortEvent::Garbage { bytes } => {
                self.metrics.garbage.fetch_add(1, Ordering::Relaxed);
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

    /// Judges the boards whose settle time has passed.
    fn judge_due(&mut self) {
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

    fn tick_all(&mut self) {
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
    fn after(&mut self, serial: &str, outs: &[Outcome]) {
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        let mut sync = false;
        for o in outs {
            match o {
                Outcome::NewGame { .. } => {
                    d.game_no += 1;
                    d.sent.clear();
                    d.sent_result = "*".into();
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
                        running: running.map(|c| match c {
                            relay_core::recorder::ColorName::White => "white",
                            relay_core::recorder::ColorName::Black => "black",
                        }),
                        at_ms: now_ms(),
                    });
                }
                Outcome::ResultProposed { result, reason } => {
                    let reason = serde_json::to_value(reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    // The same signal again (a result changed by the moves since) keeps the
                    // moment it was first given.
                    let at_ply = match &d.view.proposal {
                        Some(p) if p.reason == reason => p.at_ply,
                        _ => plies(&d.recorder),
                    };
                    d.view.proposal = Some(Proposal {
                        result: result.to_string(),
                        reason,
                        at_ply,
                        moves_after: 0,
                    });
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
    fn announce(&mut self, serial: &str) {
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
            let _ = self.jobs.send(Job::Eboard(view));
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

    /// An arbiter says the game goes on from what the board shows (a game joined in the
    /// middle, or one the recorder lost track of).
    fn continue_from_board(&mut self, serial: &str, white_to_move: bool) -> Result<i64, String> {
        let Some(d) = self.desks.get_mut(serial) else {
            return Err(format!("e-board {serial} has not been seen"));
        };
        let turn = if white_to_move {
            shakmaty::Color::White
        } else {
            shakmaty::Color::Black
        };
        let outs = d.recorder.continue_from_board(turn)?;
        tracing::info!(%serial, "arbiter: game continues from the board's position");
        // The same game goes on (not a new one): its start changes and its moves start over.
        d.sent.clear();
        d.sent_result = "*".into();
        let rest: Vec<Outcome> = outs
            .into_iter()
            .filter(|o| !matches!(o, Outcome::NewGame { .. }))
            .collect();
        if let Some(snap) = snapshot(serial, d) {
            let _ = self.jobs.send(Job::Sync(Box::new(snap)));
        }
        self.after(serial, &rest);
        Ok(0)
    }

    /// An arbiter changed a game: if an e-board is on it, its recorder carries on from the
    /// changed game; then the writer stores the change.
    fn on_edit(&mut self, edit: GameEdit) {
        // The recorder is touched only if its game is the edited one (a new game set up on
        // the board may not be stored yet).
        let cfg = self.cfg.clone();
        if let Some(serial) = self.boards.eboard_on(edit.game_id)
            && let Some(d) = self.desk_playing(&serial, edit.game_id)
        {
            match &edit.action {
                EditAction::Result { result, .. } => {
                    // Only the result changes; moves the recorder has stay as they are.
                    if let Some(game) = d.recorder.game() {
                        let r = result.parse().unwrap_or(game.result);
                        d.recorder.set_result(r);
                        d.sent_result = r.to_string();
                    }
                }
                // The board may still show what the arbiter removed; the recorder will say
                // so (out of sync) until the board is put right.
                _ => d.carry_on_from(cfg, &edit.moves, None),
            }
            d.view.proposal = None;
        }
        let _ = self.jobs.send(Job::Edit(edit));
    }

    /// Another relay's arbiter changed the game `serial` plays: its recorder carries on from
    /// the stored game (as after an edit made here, but nothing is sent to be stored).
    fn adopt(&mut self, serial: &str, game_id: i64, moves: &[StoredMove], result: &str) {
        let cfg = self.cfg.clone();
        if let Some(d) = self.desk_playing(serial, game_id) {
            d.carry_on_from(cfg, moves, Some(result));
            d.view.proposal = None;
        }
    }

    /// The desk of `serial` when its recorder's game is `game_id` (a new game set up on the
    /// board may not be stored yet, and is not that game).
    fn desk_playing(&mut self, serial: &str, game_id: i64) -> Option<&mut Desk> {
        let on = self.boards.game_of(serial);
        self.desks
            .get_mut(serial)
            .filter(|d| on == Some((game_id, d.game_no)) && d.recorder.game().is_some())
    }
}

impl Desk {
    /// The recorder carries on from `moves` (and `result`, else the game's own), as the
    /// store has them now: what was sent to be stored is those moves.
    fn carry_on_from(&mut self, cfg: RecorderConfig, moves: &[StoredMove], result: Option<&str>) {
        let Some(game) = self.recorder.game().cloned() else {
            return;
        };
        let orientation = self.recorder.orientation().unwrap_or_default();
        let mut g = rebuild(&game, moves).unwrap_or(game);
        if let Some(r) = result.and_then(|r| r.parse().ok()) {
            g.result = r;
        }
        self.recorder = Recorder::resume(cfg, g, orientation);
        self.sent = moves.to_vec();
        self.sent_result = self
            .recorder
            .game()
            .map_or("*".into(), |g| g.result.to_string());
    }
}

/// The recorder's game with its moves replaced by `moves` (checked legal one by one).
fn rebuild(game: &Game, moves: &[StoredMove]) -> Option<Game> {
    let mut g = game.clone();
    g.moves.clear();
    let (played, damaged) =
        relay_core::game::play_uci(&g.start, moves.iter().map(|m| m.uci.as_str()));
    if damaged.is_some() {
        return None;
    }
    for (mv, m) in played.into_iter().zip(moves) {
        g.push(
            mv,
            m.clk_ms.map(relay_core::clock_time::ClockTime),
            m.emt_ms.map(relay_core::clock_time::ClockTime),
        );
    }
    Some(g)
}

/// The recorder's game as the writer should store it, reusing what was already sent.
fn snapshot(serial: &str, d: &mut Desk) -> Option<Snapshot> {
    let game = d.recorder.game()?;
    let mode = game.castling_mode;
    // The first move that differs from what was sent (or lost its clock).
    let same = game
        .moves
        .iter()
        .zip(&d.sent)
        .take_while(|(m, s)| m.uci(mode).to_string() == s.uci)
        .count();
    d.sent.truncate(same);
    let mut pos = game.position_at(same);
    let now = now_ms();
    for (i, m) in game.moves.iter().enumerate().skip(same) {
        pos.play_unchecked(m.mv);
        d.sent.push(StoredMove {
            ply: (i + 1) as u32,
            san: m.san.to_string(),
            uci: m.uci(mode).to_string(),
            clk_ms: m.clk.map(|c| c.millis()),
            emt_ms: m.emt.map(|c| c.millis()),
            accepted_at_ms: now,
            fen_after: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
        });
    }
    for (m, s) in game.moves.iter().zip(d.sent.iter_mut()) {
        s.clk_ms = m.clk.map(|c| c.millis());
        s.emt_ms = m.emt.map(|c| c.millis());
    }
    d.sent_result = game.result.to_string();
    let start_fen = game
        .has_custom_start()
        .then(|| game.start_fen().to_string());
    Some(Snapshot {
        serial: serial.to_string(),
        port: d.port.clone(),
        game_no: d.game_no,
        start_fen,
        chess960: mode == shakmaty::CastlingMode::Chess960,
        orientation: d.recorder.orientation().map(orientation_name),
        moves: d.sent.clone(),
        result: d.sent_result.clone(),
        termination: None,
        read_at_ms: d.board_read_ms,
        press: d.press.take(),
    })
}

impl std::fmt::Debug for Hall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hall").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn port_tags_are_short_and_url_safe() {
        assert_eq!(super::port_tag("/dev/ttyUSB1"), "ttyUSB1");
        assert_eq!(super::port_tag("/dev/pts/3"), "pts-3");
        assert_eq!(super::port_tag("COM3"), "COM3");
        assert_eq!(super::port_tag("/tmp/links/dgt 2"), "dgt-2");
    }
}
