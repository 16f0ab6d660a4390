//! WebSockets for a round and for a game: a snapshot first, then every change as it is
//! committed, each with the round's change number. A client coming back with `?since=N` gets
//! the changes it missed from the store (or a snapshot when that is shorter); a client too
//! slow to keep up gets a fresh snapshot instead of holding anyone up. Spectators of a delayed
//! round get every message `delay` late.
//!
//! The feed's messages are framed once ([`Frame`]) and written as they are onto each client's
//! connection, all that is waiting in one `writev` ([`Wire`]); tokio-tungstenite reads the
//! client's side and writes the control frames (pongs, pings, closes).

use super::error::ApiError;
use super::extract::{Path, Query, Reader};
use crate::serve::events::{Event, Pending, change_message};
use crate::serve::feeds::{Feed, SnapshotOf};
use crate::serve::id::{GameId, RoundId, Seq};
use crate::serve::metrics::{DELIVERY_SAMPLE, Metrics, seconds_between};
use crate::serve::service::Shared;
use crate::serve::wire::{Frame, ServerMessage};
use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, State};
use axum::http::{HeaderValue, Method, StatusCode, header, request};
use axum::response::Response;
use futures_util::{SinkExt, Stream, StreamExt};
use hyper_util::rt::TokioIo;
use relay_store::now_ms;
use schemars::JsonSchema;
use serde::Deserialize;
use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::broadcast::error::RecvError;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message as WsMessage};

/// What a client asks of its socket.
#[derive(Deserialize, Debug, JsonSchema)]
pub struct WsQuery {
    /// The last change number the client has: it gets what came after (or a snapshot when
    /// that is shorter).
    since: Option<Seq>,
    /// `1`: e-board news too (the console asks for it; spectators have no use for it).
    eboards: Option<u8>,
    /// `all`: the round snapshot carries every move of every game (a platform rebuilding
    /// the games from the socket), not only each game's last one.
    moves: Option<String>,
}

#[derive(Clone, Copy, Debug)]
enum Scope {
    Round(RoundId),
    Game { round: RoundId, game: GameId },
}

impl Scope {
    fn round(self) -> RoundId {
        match self {
            Scope::Round(r) | Scope::Game { round: r, .. } => r,
        }
    }

    fn wants(self, e: &Event) -> bool {
        match self {
            Scope::Round(r) => e.round_id == r,
            Scope::Game { game, round } => {
                e.game_id == Some(game)
                    || (e.round_id == round && (e.bundles_clock_of(game) || e.evaluates(game)))
            }
        }
    }
}

/// Bytes read from a client socket at a time (see `open`). Spectators send pongs and a close,
/// a few bytes each; tungstenite makes room for a larger frame when its header says so. Each
/// client holds this buffer for its whole life: 1 KiB was a quarter of a spectator's memory,
/// 256 bytes a ninth.
const READ_BUFFER: usize = 64;
/// Slices one `writev` takes at most (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;
/// Changes replayed from the store beyond this many: a snapshot is cheaper.
const MAX_REPLAY: usize = 2000;
/// Every live socket gets a heartbeat this often, stamped with the server's time: a page
/// whose heartbeats arrive late knows it is behind, and one that hears nothing knows its
/// connection is dead even when no close ever reaches it (a phone leaving the hall's Wi-Fi).
const HEARTBEAT: Duration = Duration::from_secs(5);
/// How early a heartbeat goes out with the feed's frames rather than alone later.
const HEARTBEAT_RIDE: Duration = Duration::from_secs(1);
/// A client that does not take a message within this time is dropped.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// What the socket logic needs of a client's connection: a stream of what the client sends,
/// a way to write the feed's frames, and control messages. [`Wire`] is the real one; tests
/// use channels.
pub trait ClientSocket: Stream<Item = Result<WsMessage, WsError>> + Unpin + Send {
    /// Writes `frames` whole and in order.
    fn write_frames(
        &mut self,
        frames: &[Frame],
    ) -> impl Future<Output = std::io::Result<()>> + Send;
    /// Sends a ping or a close.
    fn control(&mut self, m: WsMessage) -> impl Future<Output = Result<(), WsError>> + Send;
}

/// A client's WebSocket connection.
#[derive(Debug)]
pub struct Wire {
    ws: WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>,
}

impl Stream for Wire {
    type Item = Result<WsMessage, WsError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.ws).poll_next(cx)
    }
}

impl ClientSocket for Wire {
    async fn write_frames(&mut self, frames: &[Frame]) -> std::io::Result<()> {
        // What the library still holds (a pong it owes, partly written) goes out first, and
        // the frames below are written whole before it writes again: frames never interleave.
        self.ws.flush().await.map_err(std::io::Error::other)?;
        write_whole(self.ws.get_mut(), frames).await
    }

    async fn control(&mut self, m: WsMessage) -> Result<(), WsError> {
        self.ws.send(m).await
    }
}

/// Writes every byte of `frames`, as many frames to a system call as it takes.
async fn write_whole(w: &mut (impl AsyncWrite + Unpin), frames: &[Frame]) -> std::io::Result<()> {
    for chunk in frames.chunks(IOV_MAX) {
        let mut slices: Vec<IoSlice<'_>> = chunk.iter().map(|f| IoSlice::new(f.bytes())).collect();
        let mut left = &mut slices[..];
        while !left.is_empty() {
            let n = w.write_vectored(left).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut left, n);
        }
    }
    Ok(())
}

/// A request to open a WebSocket, checked as RFC 6455 (4.2.1) asks, holding hyper's handle on
/// the connection that the `101` answer hands over.
#[derive(Debug)]
pub struct Upgrade {
    key: HeaderValue,
    on_upgrade: hyper::upgrade::OnUpgrade,
}

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, _: &S) -> Result<Self, ApiError> {
        let bad = |why: &str| ApiError::bad(format!("this is a WebSocket endpoint: {why}"));
        let lists = |name: header::HeaderName, token: &str| {
            parts.headers.get_all(name).iter().any(|v| {
                v.to_str()
                    .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
            })
        };
        if parts.method != Method::GET {
            return Err(bad("the request must be a GET"));
        }
        if !lists(header::CONNECTION, "upgrade") || !lists(header::UPGRADE, "websocket") {
            return Err(bad("no `Connection: upgrade` and `Upgrade: websocket`"));
        }
        if parts
            .headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_none_or(|v| v != "13")
        {
            return Err(bad("`Sec-WebSocket-Version` must be 13"));
        }
        let key = parts
            .headers
            .get(header::SEC_WEBSOCKET_KEY)
            .cloned()
            .ok_or_else(|| bad("no `Sec-WebSocket-Key`"))?;
        let on_upgrade = parts
            .extensions
            .remove::<hyper::upgrade::OnUpgrade>()
            .ok_or_else(|| bad("this connection cannot be upgraded"))?;
        Ok(Upgrade { key, on_upgrade })
    }
}

impl Upgrade {
    /// The `101` answer; once hyper hands the connection over, `then` runs with it.
    fn accept<F, Fut>(self, config: WebSocketConfig, then: F) -> Result<Response, ApiError>
    where
        F: FnOnce(Wire) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let accept = HeaderValue::from_str(&derive_accept_key(self.key.as_bytes()))
            .map_err(|e| ApiError::bad(format!("bad Sec-WebSocket-Key: {e}")))?;
        let on_upgrade = self.on_upgrade;
        // The client's life is a task of its own, spawned once the connection is handed
        // over: awaited inside this one, it would carry what this one captured (the upgrade,
        // the config, the closure) for all its life, and the task would round up to the next
        // 128 bytes (tokio aligns a task to its cache line): 1280 bytes a client, not 1024.
        tokio::spawn(async move {
            let Ok(io) = on_upgrade.await else {
                return;
            };
            let ws = WebSocketStream::from_raw_socket(TokioIo::new(io), Role::Server, Some(config))
                .await;
            tokio::spawn(then(Wire { ws }));
        });
        let mut res = Response::new(Body::empty());
        *res.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let h = res.headers_mut();
        h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
        Ok(res)
    }
}

type MaybeUpgrade = Result<Upgrade, ApiError>;

/// The socket follows the whole of an application's state (the feeds, the store, the
/// boards' views, the shutdown signal), so it takes [`Shared`] whole.
pub async fn round_socket(
    State(s): State<Arc<Shared>>,
    Path(id): Path<RoundId>,
    Query(q): Query<WsQuery>,
    reader: Reader,
    ws: MaybeUpgrade,
) -> Result<Response, ApiError> {
    open(s, Scope::Round(id), q, reader, ws).await
}

pub async fn game_socket(
    State(s): State<Arc<Shared>>,
    Path(id): Path<GameId>,
    q: Result<Query<WsQuery>, ApiError>,
    reader: Reader,
    ws: MaybeUpgrade,
) -> Result<Response, ApiError> {
    // From a feed's view when one holds the game: a crowd on a game page asks the store
    // nothing.
    let round = match s.feeds.round_of(id) {
        Some(r) => r,
        None => s.store.game(id).await?.round_id,
    };
    // An unknown game is 404 before a bad query is 400.
    let Query(q) = q?;
    let scope = Scope::Game { round, game: id };
    open(s, scope, q, reader, ws).await
}

/// Checks the request (unknown ids are 404 before the upgrade is looked at), then follows
/// `scope`.
async fn open(
    s: Arc<Shared>,
    scope: Scope,
    q: WsQuery,
    reader: Reader,
    ws: MaybeUpgrade,
) -> Result<Response, ApiError> {
    let a = reader.arbiter;
    // From memory after the round's first client: a crowd connecting asks the store nothing.
    let delay = s.lookup.spectator_delay(scope.round()).await?;
    let delay = if a { 0 } else { delay };
    // Spectators only ever send small control frames. tungstenite zeroes its whole read
    // buffer before each read attempt, and a live socket's read side is polled after every
    // event it forwards, so the default 128 KiB buffer cost 128 KiB of memset per client per
    // event (most of the CPU with thousands of clients; see `relay bench`). It writes only
    // control frames (the feed's frames go round it), each at once.
    let config = WebSocketConfig::default()
        .max_message_size(Some(64 * 1024))
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0);
    ws?.accept(config, move |socket| {
        let wants = Wants {
            eboards: q.eboards == Some(1),
            all_moves: q.moves.as_deref() == Some("all"),
        };
        follow(s, scope, q.since, wants, delay, a, socket)
    })
}

/// The messages a live client missed after `since`, from the store; `None` when a snapshot
/// is the better answer (too many, or `since` is not a number this round had). Used only when
/// the feed's ring no longer reaches back that far.
async fn missed(s: &Shared, scope: Scope, since: Seq) -> Option<(Seq, Vec<Pending>)> {
    let current = s.store.round(scope.round()).await.ok()?.seq;
    if since > current || since < Seq::default() {
        return None;
    }
    let changes = s
        .store
        .changes_since(scope.round(), since, MAX_REPLAY as u32 + 1)
        .await
        .ok()?;
    if changes.len() > MAX_REPLAY {
        return None;
    }
    let only = match scope {
        Scope::Game { game, .. } => Some(game),
        Scope::Round(_) => None,
    };
    let out = changes
        .iter()
        .filter_map(|c| change_message(only, c))
        .collect();
    // Changes committed after `current` was read may be among them: they are not sent again.
    let last = changes.last().map_or(current, |c| c.seq.max(current));
    Some((last, out))
}

/// A live client's missed message (only live clients resume from the store).
async fn render(s: &Shared, p: Pending) -> Option<Frame> {
    match p {
        Pending::Message(m) => Some(m.frame()),
        Pending::Game { seq, game } => {
            let v = s.lookup.game_view_at(game, None).await.ok()?;
            Some(
                ServerMessage::Game {
                    seq,
                    game: Box::new(v),
                }
                .frame(),
            )
        }
    }
}

/// Writes `frames`, all that is waiting, in one go (as few system calls as the socket takes).
async fn send_all(socket: &mut impl ClientSocket, frames: &[Frame]) -> bool {
    if frames.is_empty() {
        return true;
    }
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, socket.write_frames(frames)).await,
        Ok(Ok(()))
    )
}

async fn send(socket: &mut impl ClientSocket, frame: Frame) -> bool {
    send_all(socket, std::slice::from_ref(&frame)).await
}

/// A close frame, sent with a short wait (the client may be gone). Boxed (see
/// [`write_out`]): a client closes once.
fn close<'a>(
    socket: &'a mut impl ClientSocket,
    code: CloseCode,
    reason: &'a str,
) -> Pin<Box<impl Future<Output = ()> + Send + 'a>> {
    Box::pin(async move {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            socket.control(WsMessage::Close(Some(frame))),
        )
        .await;
    })
}

/// A ping, for a client that has been quiet (a reading client answers at once).
async fn send_ping(socket: &mut impl ClientSocket) -> bool {
    let ping = socket.control(WsMessage::Ping(Bytes::new()));
    matches!(tokio::time::timeout(SEND_TIMEOUT, ping).await, Ok(Ok(())))
}

/// Writes `out` in one go, with the client's heartbeat when `beat_now` (and a ping after it
/// when the client has been quiet), the heartbeat's `timer` then set for the next one.
/// `false`: the client is gone, or was closed for answering no pings.
///
/// Its future (440 bytes: the send, its timeout's timer, a close or a ping) is boxed here,
/// for the moment it runs, as are a client's other rare or brief futures ([`close`],
/// [`Follower::start`], [`Follower::resume`]): awaited in place, each made every client's
/// task that much larger for all its life, though a write usually completes at its first
/// poll.
fn write_out<'a>(
    s: &'a Shared,
    socket: &'a mut impl ClientSocket,
    mut out: Vec<Frame>,
    beat: &'a mut Beat,
    timer: Pin<&'a mut tokio::time::Sleep>,
    beat_now: bool,
) -> Pin<Box<impl Future<Output = bool> + Send + 'a>> {
    Box::pin(async move {
        let mut ping = false;
        if beat_now {
            match beat.beat(tokio::time::Instant::now(), &mut out) {
                Some(p) => ping = p,
                None => {
                    s.metrics.silent_closed.inc();
                    close(
                        socket,
                        CloseCode::Policy,
                        "no answer to pings: the client stopped reading",
                    )
                    .await;
                    return false;
                }
            }
        }
        if !send_all(socket, &out).await || (ping && !send_ping(socket).await) {
            return false;
        }
        if beat_now {
            timer.reset(beat.due);
        }
        true
    })
}

/// A client's heartbeat: when the next is due, and when the client was last heard.
#[derive(Debug)]
struct Beat {
    due: tokio::time::Instant,
    last_heard: tokio::time::Instant,
    silence_limit: Duration,
}

impl Beat {
    fn new(silence_limit: Duration) -> Beat {
        let now = tokio::time::Instant::now();
        Beat {
            due: now + HEARTBEAT,
            last_heard: now,
            silence_limit,
        }
    }

    fn heard(&mut self) {
        self.last_heard = tokio::time::Instant::now();
    }

    /// The heartbeat at `now`, added to `out`, and the next one set a [`HEARTBEAT`] on.
    /// `Some(true)`: the client has been quiet for a third of the silence limit and is
    /// pinged too, at every heartbeat until it answers; `None`: it has been silent for the
    /// whole limit and is to be closed.
    fn beat(&mut self, now: tokio::time::Instant, out: &mut Vec<Frame>) -> Option<bool> {
        let quiet = now.saturating_duration_since(self.last_heard);
        if quiet >= self.silence_limit {
            return None;
        }
        out.push(ServerMessage::Heartbeat { at_ms: now_ms() }.frame());
        self.due = now + HEARTBEAT;
        Some(quiet >= self.silence_limit / 3)
    }
}

struct ClientGauge(Arc<Shared>);

impl Drop for ClientGauge {
    fn drop(&mut self) {
        self.0.metrics.ws_clients.dec();
    }
}

/// What a client asked for beyond the spectators' defaults.
#[derive(Clone, Copy, Debug)]
struct Wants {
    /// E-board news (`?eboards=1`, the console; it gets every move too).
    eboards: bool,
    /// Every move in the round snapshot (`?moves=all`).
    all_moves: bool,
}

/// What one client follows and where it is.
struct Follower {
    scope: Scope,
    arbiter: bool,
    wants: Wants,
    /// The last change number it was sent.
    last_seq: Seq,
    /// Whether this client's deliveries are timed for `/metrics` (one client in
    /// `DELIVERY_SAMPLE`), and the publication times of the moves taken and not yet written.
    timed: bool,
    moves_at: Vec<i64>,
}

impl Follower {
    /// Adds to `out` what of `e` goes to this client, noting its change number; whether
    /// `e`'s own frame went in.
    fn take(&mut self, e: &Event, out: &mut Vec<Frame>) -> bool {
        if e.arbiters && !self.wants.eboards {
            return false;
        }
        if !self.scope.wants(e) {
            // A game page's own lever press may ride on another game's change.
            if let Scope::Game { game, .. } = self.scope {
                for (g, seq, text) in &e.press_texts {
                    if *g == game && *seq > self.last_seq {
                        self.last_seq = *seq;
                        out.push(text.clone());
                    }
                }
            }
            return false;
        }
        if e.change {
            if e.seq <= self.last_seq {
                return false;
            }
            self.last_seq = e.seq;
        }
        out.push(e.text.clone());
        true
    }

    /// [`Follower::take`] for an event as it is fanned out (not caught up on from the ring
    /// or the store): a move going to a timed client is timed once written.
    fn take_live(&mut self, e: &Event, out: &mut Vec<Frame>) {
        if self.take(e, out) && self.timed && matches!(e.message, ServerMessage::Move { .. }) {
            self.moves_at.push(e.at_ms);
        }
    }

    /// The moves just written reached this client: timed from their publication.
    fn delivered(&mut self, metrics: &Metrics) {
        if self.moves_at.is_empty() {
            return;
        }
        let now = now_ms();
        for at in self.moves_at.drain(..) {
            metrics.move_delivery.observe(seconds_between(at, now));
        }
    }

    /// Sends the snapshot of the client's view and the feed's changes after it. Boxed (see
    /// [`write_out`]; 1.7 KB: the snapshot's build and its send): it runs once at the start
    /// and again only after a lag or an edit of the delay.
    fn start<'a>(
        &'a mut self,
        s: &'a Shared,
        feed: &'a Feed,
        socket: &'a mut impl ClientSocket,
    ) -> Pin<Box<impl Future<Output = bool> + Send + 'a>> {
        Box::pin(async move {
            // From the feed's view in memory: round spectators share the feed's snapshot (each
            // game with its last move only); arbiters and the console get every move.
            let of = match self.scope {
                Scope::Round(_) if self.arbiter || self.wants.eboards || self.wants.all_moves => {
                    SnapshotOf::Full
                }
                Scope::Round(_) => SnapshotOf::Summary,
                Scope::Game { game, .. } => SnapshotOf::Game(game),
            };
            let (seq, parts) = match feed.snapshot(&s.lookup, &s.metrics, of).await {
                Ok(x) => x,
                Err(e) => {
                    let error = ApiError::from(e).to_string();
                    let _ = send(socket, ServerMessage::Error { error }.frame()).await;
                    return false;
                }
            };
            self.last_seq = seq;
            let mut out: Vec<Frame> = parts.iter().cloned().collect();
            for e in feed.since(seq).unwrap_or_default() {
                self.take(&e, &mut out);
            }
            send_all(socket, &out).await
        })
    }

    /// Picks up a client coming back with `?since=N` from the feed's ring, else from the
    /// store; `None` when a snapshot is the better answer. Boxed, as [`Follower::start`].
    fn resume<'a>(
        &'a mut self,
        s: &'a Shared,
        feed: &'a Feed,
        since: Seq,
        socket: &'a mut impl ClientSocket,
    ) -> Pin<Box<impl Future<Output = Option<bool>> + Send + 'a>> {
        Box::pin(async move {
            self.last_seq = since;
            if let Some(events) = feed.since(since) {
                let mut out = Vec::new();
                for e in &events {
                    self.take(e, &mut out);
                }
                return Some(send_all(socket, &out).await);
            }
            let (last, msgs) = missed(s, self.scope, since).await?;
            for m in msgs {
                let Some(text) = render(s, m).await else {
                    continue;
                };
                if !send(socket, text).await {
                    return Some(false);
                }
            }
            self.last_seq = last;
            Some(true)
        })
    }
}

/// Waits for the next change of `rx`, then hands the receiver back with the outcome.
async fn next_change<T>(
    mut rx: tokio::sync::watch::Receiver<T>,
) -> (
    Result<(), tokio::sync::watch::error::RecvError>,
    tokio::sync::watch::Receiver<T>,
) {
    let changed = rx.changed().await;
    (changed, rx)
}

/// Follows `scope` for one client until it leaves or the service stops.
///
/// A plain function returning the task's future, not an `async fn`: an `async fn` moves its
/// arguments into locals of its body and its future keeps room for both, so the socket
/// (328 bytes) and the rest were held twice by every client's task for its whole life. Its
/// rare or brief futures box themselves for the same reason (see [`write_out`]).
#[allow(clippy::manual_async_fn)]
fn follow(
    s: Arc<Shared>,
    scope: Scope,
    since: Option<Seq>,
    wants: Wants,
    mut delay: i64,
    arbiter: bool,
    mut socket: impl ClientSocket,
) -> impl Future<Output = ()> + Send {
    async move {
        s.metrics.ws_clients.inc();
        let _gauge = ClientGauge(s.clone());
        // Subscribed before the snapshot, so nothing in between is missed, and waited for by
        // futures that live across the loop's turns: `changed()` made afresh at every turn put
        // the client on each watch channel's list of waiters and took it off again, under that
        // channel's lock, which every client of the service shares: twice per channel per write.
        let mut closing = Box::pin(next_change(s.closing()));
        let mut round_edits = Box::pin(next_change(s.lookup.round_edits()));
        // Every DELIVERY_SAMPLE-th client of the service has its deliveries timed.
        static CLIENTS: AtomicU64 = AtomicU64::new(0);
        let mut me = Follower {
            scope,
            arbiter,
            wants,
            last_seq: Seq::default(),
            timed: CLIENTS
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(DELIVERY_SAMPLE),
            moves_at: Vec::new(),
        };
        // Subscribed before the snapshot is taken: nothing published in between is missed
        // (anything seen twice is recognised by its change number).
        let mut feed = s.feeds.get(scope.round(), delay);
        let mut rx = feed.subscribe();
        let resumed = match since {
            Some(n) if delay == 0 => me.resume(&s, &feed, n, &mut socket).await,
            _ => None,
        };
        let ok = match resumed {
            Some(ok) => ok,
            None => me.start(&s, &feed, &mut socket).await,
        };
        if !ok {
            return;
        }
        // A client's WebSocket stack answers a ping as soon as it reads, so a client that
        // answers nothing for the silence limit has stopped reading and is closed (its kernel
        // buffers would take hours of heartbeats to fill, so a stalled send alone would not tell).
        let mut beat = Beat::new(s.limits.client_silence);
        let heartbeat = tokio::time::sleep_until(beat.due);
        tokio::pin!(heartbeat);
        loop {
            tokio::select! {
                ev = rx.recv() => match ev {
                    Ok(e) => {
                        // Everything else already waiting goes out with it in one write: a busy
                        // round costs a client one system call, not one per message.
                        let mut out = Vec::new();
                        me.take_live(&e, &mut out);
                        while out.len() < 512 {
                            match rx.try_recv() {
                                Ok(more) => me.take_live(&more, &mut out),
                                // A lag shows at the next recv(), which answers it.
                                Err(_) => break,
                            }
                        }
                        // A heartbeat nearly due rides along: in a busy round it costs no write
                        // of its own.
                        let due = !out.is_empty()
                            && beat.due <= tokio::time::Instant::now() + HEARTBEAT_RIDE;
                        let written =
                            write_out(&s, &mut socket, out, &mut beat, heartbeat.as_mut(), due);
                        if !written.await {
                            return;
                        }
                        me.delivered(&s.metrics);
                    }
                    Err(RecvError::Lagged(_)) => {
                        // Too slow to follow every change: start again from a snapshot.
                        rx = feed.subscribe();
                        if !me.start(&s, &feed, &mut socket).await {
                            return;
                        }
                    }
                    Err(RecvError::Closed) => break,
                },
                msg = socket.next() => match msg {
                    Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                    Some(Ok(_)) => beat.heard(),
                },
                (changed, mut edits) = &mut round_edits, if !arbiter => {
                    if changed.is_err() {
                        break;
                    }
                    // An arbiter edited a tournament or round: a client whose delay is no longer
                    // right starts again from a snapshot of the view it is now owed.
                    let now = edits.borrow_and_update().get(&scope.round()).copied();
                    round_edits.set(next_change(edits));
                    if let Some(now) = now && now != delay {
                        delay = now;
                        feed = s.feeds.get(scope.round(), delay);
                        rx = feed.subscribe();
                        if !me.start(&s, &feed, &mut socket).await {
                            return;
                        }
                    }
                }
                () = &mut heartbeat => {
                    // Nothing went out for a heartbeat's time: it goes alone.
                    let written =
                        write_out(&s, &mut socket, Vec::new(), &mut beat, heartbeat.as_mut(), true);
                    if !written.await {
                        return;
                    }
                }
                _ = &mut closing => break,
            }
        }
        close(&mut socket, CloseCode::Away, "relay is shutting down").await;
    }
}

#[cfg(test)]
mod tests {
    //! The socket logic over channels in place of a network connection, with the real hall,
    //! writer, feeds and SQLite store behind it.

    use super::*;
    use crate::serve::{Carry, Core, Stores};
    use axum::body::Body;
    use axum::http::{Request, header};
    use relay_store::{GameId, RoundId, Seq};
    use relay_store::{Pairing, Store};
    use serde_json::Value;
    use tokio::sync::mpsc;
    use tower::ServiceExt;

    /// A client's connection as two channels: what the service sends comes out of the
    /// receiver handed to the test, what the test sends comes in through `incoming`.
    struct Channels {
        out: mpsc::UnboundedSender<WsMessage>,
        incoming: mpsc::UnboundedReceiver<WsMessage>,
    }

    impl ClientSocket for Channels {
        async fn write_frames(&mut self, frames: &[Frame]) -> std::io::Result<()> {
            for f in frames {
                self.out
                    .send(WsMessage::text(f.json()))
                    .map_err(std::io::Error::other)?;
            }
            Ok(())
        }

        async fn control(&mut self, m: WsMessage) -> Result<(), WsError> {
            self.out.send(m).map_err(|_| WsError::ConnectionClosed)
        }
    }

    impl Stream for Channels {
        type Item = Result<WsMessage, WsError>;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            self.incoming.poll_recv(cx).map(|m| m.map(Ok))
        }
    }

    struct Client {
        from_service: mpsc::UnboundedReceiver<WsMessage>,
        to_service: mpsc::UnboundedSender<WsMessage>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Client {
        fn follow(core: &Core, round: RoundId, since: Option<i64>) -> Client {
            Client::follow_with(core, round, since, false)
        }

        /// `eboards`: the console's `?eboards=1`.
        fn follow_with(core: &Core, round: RoundId, since: Option<i64>, eboards: bool) -> Client {
            let (out, from_service) = mpsc::unbounded_channel();
            let (to_service, incoming) = mpsc::unbounded_channel();
            let wants = Wants {
                eboards,
                all_moves: false,
            };
            let socket = Channels { out, incoming };
            let task = tokio::spawn(follow(
                core.shared.clone(),
                Scope::Round(round),
                since.map(relay_store::Seq::from),
                wants,
                0,
                false,
                socket,
            ));
            Client {
                from_service,
                to_service,
                task,
            }
        }

        /// The next message other than a heartbeat (`None`: a close frame).
        async fn next(&mut self) -> Option<Value> {
            loop {
                let m = tokio::time::timeout(Duration::from_secs(5), self.from_service.recv())
                    .await
                    .expect("a message within 5 s")
                    .expect("the socket task is alive");
                match m {
                    WsMessage::Text(t) => {
                        let v: Value = serde_json::from_str(t.as_str()).expect("JSON");
                        if v["type"] != "heartbeat" {
                            return Some(v);
                        }
                    }
                    WsMessage::Close(_) => return None,
                    _ => {}
                }
            }
        }
    }

    const TOKEN: &str = "socket-test";

    async fn start() -> (Core, i64, Vec<i64>) {
        start_in("main").await
    }

    /// A service on a store of its own (`name` keeps tests running at once apart).
    async fn start_in(name: &str) -> (Core, i64, Vec<i64>) {
        let dir = std::env::temp_dir().join(format!("relay-ws-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let url = format!("sqlite:{}", dir.join("relay.db").display());
        let readers = Store::open(&url).await.expect("store");
        let round = readers
            .create_auto_round("Relay test", "2026-11-24")
            .await
            .expect("round");
        let pairings: Vec<Pairing> = (1..=2)
            .map(|b| Pairing {
                board_no: b,
                ..Default::default()
            })
            .collect();
        let games = readers
            .set_pairings(round.id, &pairings)
            .await
            .expect("pairings")
            .into_iter()
            .map(|(g, _)| g.get())
            .collect();
        let core = Core::start(
            Stores::open(readers, &url).await.expect("store"),
            Some(TOKEN.into()),
            round.clone(),
            Carry::default(),
            Default::default(),
            Default::default(),
            1,
        )
        .expect("the writer's and the hall's threads");
        (core, round.id.get(), games)
    }

    async fn play(core: &Core, game: GameId, ply: u32, san: &str) {
        let body = serde_json::json!({"ply": ply, "san": san}).to_string();
        let req = Request::builder()
            .method("POST")
            .uri(format!("/api/games/{game}/move"))
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .expect("request");
        let res = super::super::app(core.shared.clone(), None, None)
            .oneshot(req)
            .await
            .expect("router");
        assert_eq!(res.status(), axum::http::StatusCode::OK);
    }

    /// The last move a change message carries (an arbiter's move comes as the whole game).
    fn last_san(m: &Value) -> Option<&str> {
        match m["type"].as_str()? {
            "move" => m["move"]["san"].as_str(),
            "game" => m["game"]["moves"].as_array()?.last()?["san"].as_str(),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_spectator_gets_the_snapshot_then_each_change_once_and_a_close_at_shutdown() {
        let (core, round, games) = start().await;
        let mut a = Client::follow(&core, RoundId::from(round), None);
        let snap = a.next().await.expect("snapshot");
        assert_eq!(snap["type"], "snapshot");
        assert_eq!(snap["round"]["games"].as_array().map(Vec::len), Some(2));
        let seq0 = snap["seq"].as_i64().expect("seq");

        play(&core, GameId::from(games[0]), 1, "e4").await;
        let m = a.next().await.expect("change");
        assert_eq!(last_san(&m), Some("e4"), "{m}");
        let seq1 = m["seq"].as_i64().expect("seq");
        assert!(seq1 > seq0);

        // A client coming back after the snapshot gets what it missed from the ring, and no
        // snapshot; one already up to date gets nothing until the next change.
        play(&core, GameId::from(games[1]), 1, "d4").await;
        let mut back = Client::follow(&core, RoundId::from(round), Some(seq0));
        let first = back.next().await.expect("missed change");
        assert_eq!(
            (last_san(&first), first["seq"].as_i64()),
            (Some("e4"), Some(seq1))
        );
        let second = back.next().await.expect("missed change");
        assert_eq!(last_san(&second), Some("d4"), "{second}");
        let mut current = Client::follow(&core, RoundId::from(round), second["seq"].as_i64());
        assert_eq!(last_san(&a.next().await.expect("change")), Some("d4"));
        play(&core, GameId::from(games[0]), 2, "e5").await;
        for c in [&mut a, &mut back, &mut current] {
            let m = c.next().await.expect("change");
            assert_eq!(last_san(&m), Some("e5"), "{m}");
        }

        // A client that says goodbye is let go; at shutdown the rest get a close frame.
        let _ = back.to_service.send(WsMessage::Close(None));
        tokio::time::timeout(Duration::from_secs(5), back.task)
            .await
            .expect("the socket task ends")
            .expect("no panic");
        core.shared.shut_down();
        assert_eq!(a.next().await, None);
        assert_eq!(current.next().await, None);
    }

    /// An open socket learns of an arbiter's edit of its round's delay, each time, from the
    /// wait that lives across its loop's turns: it starts again from the snapshot it is now
    /// owed, and the service's closing still reaches it afterwards.
    #[tokio::test]
    async fn a_spectator_follows_each_edit_of_its_rounds_delay() {
        let (core, round, games) = start_in("delay-edit").await;
        let mut a = Client::follow(&core, RoundId::from(round), None);
        assert_eq!(a.next().await.expect("snapshot")["type"], "snapshot");

        core.shared
            .publisher
            .round_edited([(RoundId::from(round), 60_000)]);
        let delayed = a.next().await.expect("snapshot");
        assert_eq!(delayed["type"], "snapshot", "{delayed}");
        play(&core, GameId::from(games[0]), 1, "e4").await;
        let early = tokio::time::timeout(Duration::from_millis(300), a.from_service.recv()).await;
        assert!(
            !matches!(&early, Ok(Some(WsMessage::Text(t))) if t.as_str().contains("\"san\":\"e4\"")),
            "a move reached a spectator 60 s behind at once: {early:?}"
        );

        core.shared
            .publisher
            .round_edited([(RoundId::from(round), 0)]);
        let live = a.next().await.expect("snapshot");
        assert_eq!(live["type"], "snapshot", "{live}");
        assert!(live.to_string().contains("\"e4\""), "{live}");
        play(&core, GameId::from(games[0]), 2, "e5").await;
        assert_eq!(last_san(&a.next().await.expect("change")), Some("e5"));

        core.shared.shut_down();
        assert_eq!(a.next().await, None);
    }

    /// Only moves fanned out to a timed client are timed: the moves it catches up on from the
    /// ring or the store (maybe minutes old) would read as a fan-out that long.
    #[test]
    fn only_fanned_out_moves_are_timed() {
        let mv = |seq: Seq| {
            let m = ServerMessage::Move {
                seq,
                game_id: GameId::from(1),
                mv: crate::serve::views::MoveView::bare(seq.get() as u32, "e4", ""),
                read_at_ms: None,
                clock: None,
            };
            Event::new(RoundId::from(1), Some(GameId::from(1)), seq, &m)
        };
        let mut me = Follower {
            scope: Scope::Round(RoundId::from(1)),
            arbiter: false,
            wants: Wants {
                eboards: false,
                all_moves: false,
            },
            last_seq: Seq::default(),
            timed: true,
            moves_at: Vec::new(),
        };
        let mut out = Vec::new();
        me.take(&mv(Seq::from(1)), &mut out);
        assert!(me.moves_at.is_empty(), "a move caught up on is not timed");
        me.take_live(&mv(Seq::from(2)), &mut out);
        me.take_live(&mv(Seq::from(2)), &mut out);
        assert_eq!(me.moves_at.len(), 1, "a fanned-out move once, not again");
        assert_eq!(out.len(), 2);
        me.timed = false;
        me.take_live(&mv(Seq::from(3)), &mut out);
        assert_eq!(me.moves_at.len(), 1, "an untimed client times nothing");
    }

    fn eboard_in(round: RoundId, game: GameId) -> crate::serve::views::EboardView {
        crate::serve::views::EboardView {
            serial: "00042".into(),
            port: "/dev/ttyUSB0".into(),
            connected: true,
            lost_since_ms: None,
            last_seen_ms: 1,
            battery: None,
            clock: Some(true),
            clock_battery_low: false,
            in_sync: true,
            board_fen: "8/8/8/8/8/8/8/8".into(),
            game_id: Some(game),
            board_no: Some(1),
            round_id: Some(round),
            proposal: None,
            warning: None,
            memory: None,
            read_by: String::new(),
        }
    }

    /// An e-board that moves on to another round is told to the round it left: a console
    /// following that round learns where the e-board went (and can follow it there), and the
    /// round's spectators hear nothing of it.
    #[tokio::test]
    async fn an_eboard_moving_to_another_round_is_told_to_the_round_it_left() {
        let (core, round, games) = start_in("eboard-moves").await;
        let mut console = Client::follow_with(&core, RoundId::from(round), None, true);
        let mut spectator = Client::follow(&core, RoundId::from(round), None);
        assert_eq!(console.next().await.expect("snapshot")["type"], "snapshot");
        assert_eq!(
            spectator.next().await.expect("snapshot")["type"],
            "snapshot"
        );

        let seq = |_| Seq::from(0);
        core.shared
            .publisher
            .announce_eboard(eboard_in(RoundId::from(round), GameId::from(games[0])), seq);
        let m = console.next().await.expect("e-board news");
        assert_eq!(
            (m["type"].as_str(), m["eboard"]["round_id"].as_i64()),
            (Some("eboard"), Some(round)),
            "{m}"
        );

        // Its next game is in the next round (no such round needs to be stored for the feed).
        let next = round + 1;
        core.shared
            .publisher
            .announce_eboard(eboard_in(RoundId::from(next), GameId::from(999)), seq);
        let m = console
            .next()
            .await
            .expect("e-board news of the round it left");
        assert_eq!(
            (m["type"].as_str(), m["eboard"]["round_id"].as_i64()),
            (Some("eboard"), Some(next)),
            "{m}"
        );
        // Once gone, its news goes to its new round only.
        let mut again = eboard_in(RoundId::from(next), GameId::from(999));
        again.in_sync = false;
        core.shared.publisher.announce_eboard(again, seq);
        play(&core, GameId::from(games[1]), 1, "d4").await;
        let m = console.next().await.expect("a move");
        assert_eq!(
            last_san(&m),
            Some("d4"),
            "only the move, not the e-board: {m}"
        );
        let m = spectator.next().await.expect("a move");
        assert_eq!(
            last_san(&m),
            Some("d4"),
            "spectators get no e-board news: {m}"
        );
    }

    #[test]
    fn a_heartbeat_pings_a_quiet_client_and_gives_up_on_a_silent_one() {
        let limit = Duration::from_secs(60);
        let mut beat = Beat::new(limit);
        let start = beat.last_heard;
        assert_eq!(beat.due, start + HEARTBEAT);
        let mut out = Vec::new();
        // Heard from lately: a heartbeat, no ping, the next one a heartbeat on.
        let at = start + Duration::from_secs(4);
        assert_eq!(beat.beat(at, &mut out), Some(false));
        assert_eq!(out.len(), 1);
        assert!(out[0].json().contains(r#""type":"heartbeat""#));
        assert_eq!(beat.due, at + HEARTBEAT);
        // Quiet for a third of the limit: pinged with it.
        assert_eq!(beat.beat(start + limit / 3, &mut out), Some(true));
        assert_eq!(out.len(), 2);
        // Silent for the whole limit: nothing more is sent, the client is to be closed.
        assert_eq!(beat.beat(start + limit, &mut out), None);
        assert_eq!(out.len(), 2);
    }
}
