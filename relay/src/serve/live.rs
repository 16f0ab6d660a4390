//! What the service shares between its parts: the store, the event stream clients follow,
//! the live state that is not stored (running clocks, e-board health), and the JSON views.
//!
//! Events are made by the writer after the store has committed what they announce (or, for
//! running clocks and e-board status, after the raw readings they come from are logged), so a
//! client never sees anything a crash could take back.

use super::wire::{Announcement, Frame, ServerMessage};
use relay_store::{RoundInfo, Store, StoredMove};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::mpsc;

pub fn now_ms() -> i64 {
    relay_store::now_ms()
}

/// The running clock of a game: at server time `at_ms`, White had `white_ms` and Black
/// `black_ms`; `running` counts down from then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ClockView {
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<&'static str>,
    pub at_ms: i64,
}

impl ClockView {
    /// The same clock as it should be shown `shift_ms` later (for a delayed view).
    pub fn shifted(self, shift_ms: i64) -> ClockView {
        ClockView {
            at_ms: self.at_ms + shift_ms,
            ..self
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Proposal {
    pub result: String,
    pub reason: String,
    /// The game's length (plies) when the board proposed it.
    pub at_ply: u32,
    /// Plies played on the board since (players often go on after a flag fell): they are
    /// recorded, and the console says they came after the proposal.
    pub moves_after: u32,
}

/// One e-board as the operator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EboardView {
    pub serial: String,
    pub port: String,
    pub connected: bool,
    pub lost_since_ms: Option<i64>,
    pub last_seen_ms: i64,
    /// Percent, for Bluetooth boards that report it.
    pub battery: Option<u8>,
    /// Whether a clock is connected to this board: `None` until the board has sent a
    /// reading, `Some(false)` when the reading says no clock is connected.
    pub clock: Option<bool>,
    /// The clock says its battery is low.
    pub clock_battery_low: bool,
    pub in_sync: bool,
    /// The placement as read (real squares once the orientation is known).
    pub board_fen: String,
    pub game_id: Option<i64>,
    pub board_no: Option<u32>,
    pub round_id: Option<i64>,
    pub proposal: Option<Proposal>,
    /// What the arbiter must know about this board that is not about its game: two boards
    /// reporting the same serial number, naming both ports. (The second one's `serial` is the
    /// reported one with `@` and its port, so both games are recorded apart.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The relay reading the board (`host:pid`): with a standby on the same ports, the
    /// console shows which of them holds each board.
    #[serde(default)]
    pub read_by: String,
}

/// One thing that happened, ready to send. `text` is the JSON message every client of the
/// live view gets; delayed clients get it `delay` later (clock messages re-stamped).
#[derive(Debug)]
pub struct Event {
    pub round_id: i64,
    pub game_id: Option<i64>,
    pub seq: i64,
    pub at_ms: i64,
    /// The message, typed: feeds keep their round's view up to date with it.
    pub message: ServerMessage,
    /// Lever presses (`move_clock` messages of earlier changes) held by the feed and carried
    /// by this change; they are in `text` too, and each alone in `press_texts` (with its game
    /// and change number) for a game page whose game is not this event's.
    pub presses: Vec<ServerMessage>,
    pub press_texts: Vec<(i64, i64, Frame)>,
    /// The message, encoded and framed once; every client gets these same bytes.
    pub text: Frame,
    /// Only for clients that asked for e-board news (the console): spectators do not
    /// pay for a frame each time a board is touched.
    pub arbiters: bool,
    /// A stored change (its seq is new); running clocks and e-board news only repeat the
    /// round's latest seq.
    pub change: bool,
}

impl Event {
    pub fn new(round_id: i64, game_id: Option<i64>, seq: i64, message: &ServerMessage) -> Event {
        Event {
            round_id,
            game_id,
            seq,
            at_ms: now_ms(),
            text: message.frame(),
            message: message.clone(),
            presses: Vec::new(),
            press_texts: Vec::new(),
            arbiters: false,
            change: true,
        }
    }

    /// E-board news: for the clients that follow e-boards (the console), and no change of
    /// its own (it repeats the round's latest change number).
    pub fn eboard(round_id: i64, seq: i64, eboard: EboardView) -> Event {
        let mut e = Event::new(
            round_id,
            eboard.game_id,
            seq,
            &ServerMessage::Eboard { seq, eboard },
        );
        e.change = false;
        e.arbiters = true;
        e
    }

    /// A `clock` message's clock (a side to move changed with no move to carry it).
    pub fn clock(&self) -> Option<ClockView> {
        match &self.message {
            ServerMessage::Clock { clock, .. } => Some(*clock),
            _ => None,
        }
    }

    /// Whether this is a running-clock bundle with `game`'s clock in it.
    pub fn bundles_clock_of(&self, game: i64) -> bool {
        matches!(&self.message, ServerMessage::Clocks { clocks, .. } if clocks.iter().any(|c| c.game_id == game))
    }

    /// A lever press on its own (a `move_clock` change with nothing carried): what a feed
    /// holds for the next change.
    pub fn is_press(&self) -> bool {
        self.change
            && self.presses.is_empty()
            && matches!(self.message, ServerMessage::MoveClock { .. })
    }

    /// The oldest change number the event brings: a carried press's, or its own.
    pub fn first_seq(&self) -> i64 {
        self.presses
            .iter()
            .filter_map(ServerMessage::seq)
            .fold(self.seq, i64::min)
    }

    /// The same event carrying `presses` (oldest first); encoded again, once.
    pub fn carrying(&self, presses: Vec<ServerMessage>) -> Event {
        let press_texts = presses
            .iter()
            .filter_map(|p| match p {
                ServerMessage::MoveClock { game_id, seq, .. } => Some((*game_id, *seq, p.frame())),
                _ => None,
            })
            .collect();
        let text = Announcement {
            message: self.message.clone(),
            presses,
        };
        Event {
            round_id: self.round_id,
            game_id: self.game_id,
            seq: self.seq,
            at_ms: self.at_ms,
            text: Frame::text(&text.encode()),
            message: text.message,
            presses: text.presses,
            press_texts,
            arbiters: self.arbiters,
            change: self.change,
        }
    }
}

/// The boards' live state, which the store does not hold: each e-board as the operator sees
/// it, each game's running clock, and which e-board is on which game. Written by the writer
/// (and the hall, for an e-board's last-seen time); read by HTTP and the views.
#[derive(Debug, Default)]
pub struct Boards {
    eboards: RwLock<BTreeMap<String, EboardView>>,
    clocks: RwLock<HashMap<i64, ClockView>>,
    /// Which e-board is on which game now (game id → serial).
    bound: RwLock<HashMap<i64, String>>,
    /// The other way: e-board serial → (game id, the hall's game number it holds).
    games_of: RwLock<HashMap<String, (i64, u64)>>,
    /// The round each e-board's news last went to (its view's round changes when it is put
    /// on a game, before the news is told).
    told: RwLock<HashMap<String, i64>>,
}

/// Why an e-board was not forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotForgotten {
    Unknown,
    Connected,
}

/// Reads a lock whose holder panicked as it stands: every write here leaves a whole value.
fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Boards {
    pub fn eboards(&self) -> Vec<EboardView> {
        read(&self.eboards).values().cloned().collect()
    }

    pub fn eboard(&self, serial: &str) -> Option<EboardView> {
        read(&self.eboards).get(serial).cloned()
    }

    /// Keeps an e-board's announced view; the board as read and the last-seen time stay as
    /// they are when the hall has since noted later ones (an announcement reaches the writer
    /// after the readings it came from are logged, which may be after newer readings).
    pub fn put_eboard(&self, mut view: EboardView) {
        let mut map = write(&self.eboards);
        if let Some(old) = map.get(&view.serial)
            && old.last_seen_ms > view.last_seen_ms
        {
            view.last_seen_ms = old.last_seen_ms;
            view.board_fen.clone_from(&old.board_fen);
        }
        map.insert(view.serial.clone(), view);
    }

    /// Changes a known e-board's view; `false` when it is not known.
    pub fn edit_eboard(&self, serial: &str, f: impl FnOnce(&mut EboardView)) -> bool {
        match write(&self.eboards).get_mut(serial) {
            Some(v) => {
                f(v);
                true
            }
            None => false,
        }
    }

    /// Notes that `serial`'s news goes to `round`; the round it went to before when that
    /// was another.
    pub fn tell_round(&self, serial: &str, round: i64) -> Option<i64> {
        write(&self.told)
            .insert(serial.to_string(), round)
            .filter(|old| *old != round)
    }

    /// Forgets an e-board that is not connected.
    pub fn forget_eboard(&self, serial: &str) -> Result<(), NotForgotten> {
        let mut map = write(&self.eboards);
        match map.get(serial) {
            None => Err(NotForgotten::Unknown),
            Some(e) if e.connected => Err(NotForgotten::Connected),
            Some(_) => {
                map.remove(serial);
                write(&self.told).remove(serial);
                Ok(())
            }
        }
    }

    pub fn clock(&self, game: i64) -> Option<ClockView> {
        read(&self.clocks).get(&game).copied()
    }

    pub fn set_clock(&self, game: i64, clock: ClockView) {
        write(&self.clocks).insert(game, clock);
    }

    /// Every game's running clock, for building many views at once.
    pub fn all_clocks(&self) -> HashMap<i64, ClockView> {
        read(&self.clocks).clone()
    }

    /// The serial of the e-board on `game`.
    pub fn eboard_on(&self, game: i64) -> Option<String> {
        read(&self.bound).get(&game).cloned()
    }

    /// Which e-board is on which game, for building many views at once.
    pub fn all_bound(&self) -> HashMap<i64, String> {
        read(&self.bound).clone()
    }

    /// The game (and the hall's game number) an e-board is on.
    pub fn game_of(&self, serial: &str) -> Option<(i64, u64)> {
        read(&self.games_of).get(serial).copied()
    }

    /// Puts an e-board on a game (off any other).
    pub fn bind(&self, serial: &str, game: i64, game_no: u64, board_no: u32, round: i64) {
        {
            let mut bound = write(&self.bound);
            bound.retain(|_, s| s != serial);
            bound.insert(game, serial.to_string());
        }
        write(&self.games_of).insert(serial.to_string(), (game, game_no));
        if let Some(v) = write(&self.eboards).get_mut(serial) {
            v.game_id = Some(game);
            v.board_no = Some(board_no);
            v.round_id = Some(round);
        }
    }
}

/// Store and board health for `/health`.
#[derive(Debug, Default)]
pub struct Health {
    pub store_ok: AtomicBool,
    /// When the store stopped answering (0 = it answers).
    pub store_down_since_ms: AtomicI64,
    pub last_store_error: Mutex<Option<String>>,
    /// Jobs (moves, readings) waiting for the store.
    pub pending_writes: AtomicU64,
    /// The ports this relay wants and whether it reads each now (another relay on the same
    /// PostgreSQL may hold one: see `claims`); set once the ports are watched.
    pub claims: std::sync::OnceLock<Arc<super::claims::PortClaims>>,
    /// Each push target's state (see `upstream`).
    pub upstream: Mutex<Vec<super::upstream::TargetStatus>>,
}

/// Counters for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    pub messages: AtomicU64,
    pub garbage: AtomicU64,
    pub moves_committed: AtomicU64,
    pub changes_committed: AtomicU64,
    /// The writer's group commits, and the time spent in them (microseconds).
    pub group_commits: AtomicU64,
    pub group_commit_us: AtomicU64,
    pub store_errors: AtomicU64,
    pub raw_logged: AtomicU64,
    pub http_requests: AtomicU64,
    pub ws_clients: AtomicI64,
    pub ws_snapshots: AtomicU64,
    /// WebSocket clients closed because they answered nothing (stopped reading).
    pub silent_closed: AtomicU64,
    /// Changes read from the change log (committed by another relay, or filling a hole).
    pub changes_followed: AtomicU64,
}

/// An arbiter's change to a game, computed by the HTTP layer and applied by the hall (to the
/// board's recorder) and the writer (to the store), in that order.
#[derive(Debug)]
pub struct GameEdit {
    pub game_id: i64,
    pub action: EditAction,
    /// The moves the game has afterwards.
    pub moves: Vec<StoredMove>,
    /// The game's edit count the change was made on (`None`: whatever it is).
    pub edits: Option<i64>,
    pub reply: tokio::sync::oneshot::Sender<Result<i64, String>>,
}

/// What arbiters ask of the hall.
#[derive(Debug)]
pub enum HallCommand {
    Edit(GameEdit),
    /// This relay is about to read `port`, which another relay may have been reading: the
    /// boards last seen on it are forgotten and every e-board's game without a board here is
    /// read again from the store (see `claims`). `reply` once the hall has what to resume.
    TakeOver {
        port: String,
        reply: tokio::sync::oneshot::Sender<()>,
    },
    /// Another relay changed the game this e-board plays (see `writer::Job::Foreign`): the
    /// recorder carries on from the stored `moves` and `result`.
    Adopt {
        serial: String,
        game_id: i64,
        moves: Vec<relay_store::StoredMove>,
        result: String,
    },
    /// The games read for a take-over, to resume from (see [`HallCommand::TakeOver`]).
    Resumed {
        resume: HashMap<String, super::hall::Resume>,
        reply: tokio::sync::oneshot::Sender<()>,
    },
    /// The game on an e-board goes on from the position on the board, `white` to move or not.
    ContinueFromBoard {
        serial: String,
        white_to_move: bool,
        reply: tokio::sync::oneshot::Sender<Result<i64, String>>,
    },
}

#[derive(Debug, Clone)]
pub enum EditAction {
    Truncate {
        from_ply: u32,
    },
    Replace {
        what: String,
    },
    Result {
        result: String,
        termination: Option<String>,
        status: String,
    },
}

/// A rendered answer kept for a second while its round does not change.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The round's change number it was built at.
    pub seq: i64,
    pub built_ms: i64,
    pub text: Arc<String>,
    pub etag: String,
}

impl Cached {
    pub fn fresh(&self, seq: i64) -> bool {
        self.seq == seq && now_ms() - self.built_ms < 1000
    }
}

/// Bounds on what clients may cost, fixed at start-up.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long a WebSocket client may answer nothing before it is closed.
    pub client_silence: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            client_silence: std::time::Duration::from_secs(60),
        }
    }
}

/// Everything the parts of the service share: the store, the feeds, the boards' live state,
/// health and counters as parts of their own; the rest through methods.
#[derive(Debug)]
pub struct Shared {
    pub store: Store,
    /// Every round's feeds: what spectators follow.
    pub feeds: super::feeds::Feeds,
    /// Committed changes go to the feeds through this, in change-number order.
    pub order: super::follow::Order,
    pub boards: Boards,
    pub health: Health,
    pub metrics: Metrics,
    /// Bounds set at start-up.
    pub limits: Limits,
    admin_token: Option<String>,
    edits: mpsc::UnboundedSender<HallCommand>,
    /// The writer's queue (for arbiter actions that need no recorder).
    jobs: mpsc::UnboundedSender<super::writer::Job>,
    started_at_ms: i64,
    /// The last live PGN of each round.
    pgn_cache: Mutex<HashMap<i64, Cached>>,
    /// Set when the service shuts down: live sockets close cleanly.
    closing: tokio::sync::watch::Sender<bool>,
    /// The public delay (ms) of each round as of the last arbiter edit that touched it, so
    /// that open sockets can compare it with theirs without asking the store (a spectator
    /// connected before a delay was set must not go on seeing live moves).
    round_edits: tokio::sync::watch::Sender<HashMap<i64, i64>>,
    /// Each round's public delay (ms) as last read, so sockets opening need not ask the
    /// store; forgotten at every edit of rounds or tournaments.
    delays: Mutex<HashMap<i64, i64>>,
    /// The token venue relays push with (`--accept-push-token`), set once at start-up.
    push_token: std::sync::OnceLock<String>,
    /// Counts committed changes and e-board news handed to the feeds: what pushes to other
    /// services wait on.
    news: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    pub fn new(
        store: Store,
        admin_token: Option<String>,
        edits: mpsc::UnboundedSender<HallCommand>,
        jobs: mpsc::UnboundedSender<super::writer::Job>,
        limits: Limits,
        order: super::follow::Order,
    ) -> Shared {
        Shared {
            store,
            feeds: Default::default(),
            order,
            admin_token,
            boards: Default::default(),
            health: Default::default(),
            metrics: Default::default(),
            limits,
            edits,
            jobs,
            started_at_ms: now_ms(),
            pgn_cache: Default::default(),
            closing: tokio::sync::watch::channel(false).0,
            round_edits: tokio::sync::watch::channel(Default::default()).0,
            delays: Default::default(),
            push_token: Default::default(),
            news: tokio::sync::watch::channel(0).0,
        }
    }

    /// Takes pushes from venue relays that send this token.
    pub fn accept_pushes(&self, token: String) {
        let _ = self.push_token.set(token);
    }

    pub fn push_token(&self) -> Option<&str> {
        self.push_token.get().map(String::as_str)
    }

    /// Changes each time a committed change or e-board news goes to a feed.
    pub fn news(&self) -> tokio::sync::watch::Receiver<u64> {
        self.news.subscribe()
    }

    pub fn admin_token(&self) -> Option<&str> {
        self.admin_token.as_deref()
    }

    /// Hands an arbiter's command to the hall; `false` when the hall has stopped.
    pub fn to_hall(&self, cmd: HallCommand) -> bool {
        self.edits.send(cmd).is_ok()
    }

    /// Hands a job to the writer; `false` when the writer has stopped.
    pub fn to_writer(&self, job: super::writer::Job) -> bool {
        self.jobs.send(job).is_ok()
    }

    pub fn uptime_s(&self) -> i64 {
        (now_ms() - self.started_at_ms) / 1000
    }

    /// The round's live PGN as last built.
    pub fn cached_pgn(&self, round: i64) -> Option<Cached> {
        self.pgn_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&round)
            .cloned()
    }

    pub fn cache_pgn(&self, round: i64, c: Cached) {
        self.pgn_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(round, c);
    }

    /// Live sockets close cleanly: the service is shutting down.
    pub fn close_clients(&self) {
        let _ = self.closing.send(true);
    }

    /// Changes to `true` when the service shuts down.
    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// The public delays (ms) of the rounds arbiters' edits touched, as they change.
    pub fn round_edits(&self) -> tokio::sync::watch::Receiver<HashMap<i64, i64>> {
        self.round_edits.subscribe()
    }

    /// After an arbiter's edit of a tournament or round: cached live views are rebuilt and
    /// open sockets learn the `(round, delay ms)` of the rounds it touched.
    pub fn round_edited(&self, delays: impl IntoIterator<Item = (i64, i64)>) {
        self.feeds.forget_views();
        self.delays
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.pgn_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.round_edits.send_modify(|m| m.extend(delays));
    }

    /// Hands a committed change (or running clock, or e-board news) to its round's live feed.
    /// Committed changes go out in change-number order (see `follow::Order`): one whose
    /// predecessor, committed elsewhere, has not gone out yet waits for it.
    pub fn publish(&self, e: Event) {
        if !e.change {
            self.push_to_feed(e);
            return;
        }
        for e in self.order.offer(e) {
            self.push_to_feed(e);
        }
    }

    /// Keeps an e-board's view and tells its round's feed. An e-board that moved on to another
    /// round (its next game) is told to the round it left too: that round's view takes it off
    /// its old game, and a console following that round learns where it went.
    /// `seq_of` gives a round's latest change number (e-board news has none of its own).
    pub fn announce_eboard(&self, view: EboardView, seq_of: impl Fn(i64) -> i64) {
        let left = view
            .round_id
            .and_then(|round| self.boards.tell_round(&view.serial, round));
        self.boards.put_eboard(view.clone());
        if let Some(old) = left {
            self.push_to_feed(Event::eboard(old, seq_of(old), view.clone()));
        }
        if let Some(round) = view.round_id {
            self.push_to_feed(Event::eboard(round, seq_of(round), view));
        }
    }

    /// Hands an event whose turn it is to its round's live feed.
    pub fn push_to_feed(&self, e: Event) {
        if e.change || matches!(e.message, super::wire::ServerMessage::Eboard { .. }) {
            self.news.send_modify(|n| *n = n.wrapping_add(1));
        }
        self.feeds.live(e.round_id).push(Arc::new(e));
    }

    /// The delay spectators of a round get, in ms, from memory when known (an unknown round
    /// is an error).
    pub async fn spectator_delay(&self, round: i64) -> Result<i64, relay_store::StoreError> {
        if let Some(d) = self
            .delays
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&round)
        {
            return Ok(*d);
        }
        let info = self.store.round(round).await?;
        let d = self.delay_ms(&info).await?;
        self.delays
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(round, d);
        Ok(d)
    }

    /// The delay spectators of a round get, in ms (round's own, else the tournament's).
    pub async fn delay_ms(&self, round: &RoundInfo) -> Result<i64, relay_store::StoreError> {
        let secs = match round.delay_secs {
            Some(d) => d,
            None => self.store.tournament_delay(round.tournament_id).await?,
        };
        Ok(i64::from(secs) * 1000)
    }
}

/// A message waiting to be sent: the message, or a game replaced wholesale whose view is
/// built when it is sent (as of that moment, which for a delayed view is its own moment).
#[derive(Debug)]
pub enum Pending {
    Message(Box<ServerMessage>),
    Game { seq: i64, game: i64 },
}

/// A stored change as the message a client gets (`only_game`: a game page's client).
pub fn change_message(only_game: Option<i64>, c: &relay_store::Change) -> Option<Pending> {
    let game = c.game_id?;
    if only_game.is_some_and(|g| g != game) {
        return None;
    }
    let record = match c.record() {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(seq = c.seq, kind = %c.kind, error = %e, "a stored change does not read; the game is sent whole");
            relay_store::ChangeRecord::Game
        }
    };
    Some(match ServerMessage::from_change(c.seq, game, record) {
        Some(m) => Pending::Message(Box::new(m)),
        None => Pending::Game { seq: c.seq, game },
    })
}
