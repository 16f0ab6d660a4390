//! WebSockets for a round and for a game: a snapshot first, then every change as it is
//! committed, each with the round's change number. A client coming back with `?since=N` gets
//! the changes it missed from the store (or a snapshot when that is shorter); a client too
//! slow to keep up gets a fresh snapshot instead of holding anyone up. Spectators of a delayed
//! round get every message `delay` late.

use super::{ApiError, AppState, arbiter, game_view_at};
use crate::serve::feeds::{Feed, SnapshotOf};
use crate::serve::live::{Event, Pending, Shared, change_message, now_ms};
use crate::serve::wire::ServerMessage;
use axum::extract::ws::Utf8Bytes;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize, Debug)]
pub struct WsQuery {
    since: Option<i64>,
    /// `1`: e-board news too (the console asks for it; spectators have no use for it).
    eboards: Option<u8>,
    /// `all`: the round snapshot carries every move of every game (a platform rebuilding
    /// the games from the socket), not only each game's last one.
    moves: Option<String>,
}

#[derive(Clone, Copy, Debug)]
enum Scope {
    Round(i64),
    Game { round: i64, game: i64 },
}

impl Scope {
    fn round(self) -> i64 {
        match self {
            Scope::Round(r) | Scope::Game { round: r, .. } => r,
        }
    }

    fn wants(self, e: &Event) -> bool {
        match self {
            Scope::Round(r) => e.round_id == r,
            Scope::Game { game, round } => {
                e.game_id == Some(game)
                    || (e.round_id == round
                        && e.clocks
                            .as_ref()
                            .is_some_and(|l| l.iter().any(|(g, _)| *g == game)))
            }
        }
    }
}

/// Bytes read from a client socket at a time (see `open`).
const READ_BUFFER: usize = 4 * 1024;
/// Changes replayed from the store beyond this many: a snapshot is cheaper.
const MAX_REPLAY: usize = 2000;
/// Every live socket gets a heartbeat this often, stamped with the server's time: a page
/// whose heartbeats arrive late knows it is behind, and one that hears nothing knows its
/// connection is dead even when no close ever reaches it (a phone leaving the hall's Wi-Fi).
const HEARTBEAT: Duration = Duration::from_secs(5);
/// A client that does not take a message within this time is dropped.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

type QueryResult = Result<Query<WsQuery>, axum::extract::rejection::QueryRejection>;
type Upgrade = Result<WebSocketUpgrade, WebSocketUpgradeRejection>;

pub async fn round_socket(
    State(s): State<AppState>,
    Path(id): Path<String>,
    q: QueryResult,
    h: HeaderMap,
    ws: Upgrade,
) -> Result<Response, ApiError> {
    let id = super::parse_id(&id, "round")?;
    open(s, Scope::Round(id), q, h, ws).await
}

pub async fn game_socket(
    State(s): State<AppState>,
    Path(id): Path<String>,
    q: QueryResult,
    h: HeaderMap,
    ws: Upgrade,
) -> Result<Response, ApiError> {
    let id = super::parse_id(&id, "game")?;
    // From a feed's view when one holds the game: a crowd on a game page asks the store
    // nothing.
    let round = match s.feeds.round_of(id) {
        Some(r) => r,
        None => s.store.game(id).await?.round_id,
    };
    let scope = Scope::Game { round, game: id };
    open(s, scope, q, h, ws).await
}

/// Checks the request (unknown ids are 404 before anything else), then follows `scope`.
async fn open(
    s: AppState,
    scope: Scope,
    q: QueryResult,
    h: HeaderMap,
    ws: Upgrade,
) -> Result<Response, ApiError> {
    let q = q.map_err(|e| ApiError::bad(format!("bad query: {e}")))?;
    let a = arbiter(&s, &h)?;
    // From memory after the round's first client: a crowd connecting asks the store nothing.
    let delay = s.spectator_delay(scope.round()).await?;
    let delay = if a { 0 } else { delay };
    // Spectators only ever send small control frames. tungstenite zeroes its whole read
    // buffer before each read attempt, and a live socket's read side is polled after every
    // event it forwards, so the default 128 KiB buffer cost 128 KiB of memset per client per
    // event (most of the CPU with thousands of clients; see `relay bench`).
    let ws = ws
        .map_err(not_upgrade)?
        .max_message_size(64 * 1024)
        .read_buffer_size(READ_BUFFER);
    Ok(ws
        .on_upgrade(move |socket| {
            let wants = Wants {
                eboards: q.eboards == Some(1),
                all_moves: q.moves.as_deref() == Some("all"),
            };
            follow(s, scope, q.since, wants, delay, a, socket)
        })
        .into_response())
}

fn not_upgrade(e: WebSocketUpgradeRejection) -> ApiError {
    ApiError::bad(format!("this is a WebSocket endpoint: {e}"))
}

/// The first message of a socket: the round (or game) as the client's view shows it, from
/// the feed's view in memory. Round spectators share the feed's snapshot (each game with its
/// last move only); arbiters and the console (`full`) get every move.
async fn snapshot(
    s: &Shared,
    feed: &Feed,
    scope: Scope,
    arbiter: bool,
    full: bool,
) -> Result<(i64, Utf8Bytes), ApiError> {
    let of = match scope {
        Scope::Round(_) if arbiter || full => SnapshotOf::Full,
        Scope::Round(_) => SnapshotOf::Summary,
        Scope::Game { game, .. } => SnapshotOf::Game(game),
    };
    feed.snapshot(s, of).await
}

/// The messages a live client missed after `since`, from the store; `None` when a snapshot
/// is the better answer (too many, or `since` is not a number this round had). Used only when
/// the feed's ring no longer reaches back that far.
async fn missed(s: &Shared, scope: Scope, since: i64) -> Option<(i64, Vec<Pending>)> {
    let current = s.store.round(scope.round()).await.ok()?.seq;
    if since > current || since < 0 {
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
async fn render(s: &Shared, p: Pending) -> Option<Utf8Bytes> {
    match p {
        Pending::Message(m) => Some(m.encode().into()),
        Pending::Game { seq, game } => {
            let v = game_view_at(s, game, None).await.ok()?;
            Some(
                ServerMessage::Game {
                    seq,
                    game: Box::new(v),
                }
                .encode()
                .into(),
            )
        }
    }
}

async fn send(socket: &mut WebSocket, text: Utf8Bytes) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, socket.send(WsMessage::Text(text))).await,
        Ok(Ok(()))
    )
}

/// Sends messages with one flush at the end.
async fn send_all(socket: &mut WebSocket, texts: Vec<Utf8Bytes>) -> bool {
    if texts.is_empty() {
        return true;
    }
    let write = async {
        for t in texts {
            socket.feed(WsMessage::Text(t)).await?;
        }
        socket.flush().await
    };
    matches!(tokio::time::timeout(SEND_TIMEOUT, write).await, Ok(Ok(())))
}

struct ClientGauge(Arc<Shared>);

impl Drop for ClientGauge {
    fn drop(&mut self) {
        self.0.metrics.ws_clients.fetch_sub(1, Ordering::Relaxed);
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
    last_seq: i64,
}

impl Follower {
    /// Whether `e` goes to this client; notes its change number when it does.
    fn take(&mut self, e: &Event) -> bool {
        if !self.scope.wants(e) || (e.arbiters && !self.wants.eboards) {
            return false;
        }
        if e.change {
            if e.seq <= self.last_seq {
                return false;
            }
            self.last_seq = e.seq;
        }
        true
    }

    /// Sends the snapshot of the client's view and the feed's changes after it.
    async fn start(&mut self, s: &Shared, feed: &Feed, socket: &mut WebSocket) -> bool {
        let full = self.wants.eboards || self.wants.all_moves;
        let (seq, text) = match snapshot(s, feed, self.scope, self.arbiter, full).await {
            Ok(x) => x,
            Err(e) => {
                let _ = send(socket, ServerMessage::Error { error: e.1 }.encode().into()).await;
                return false;
            }
        };
        self.last_seq = seq;
        let mut out = vec![text];
        for e in feed.since(seq).unwrap_or_default() {
            if self.take(&e) {
                out.push(e.text.clone());
            }
        }
        send_all(socket, out).await
    }

    /// Picks up a client coming back with `?since=N` from the feed's ring, else from the
    /// store; `false` when a snapshot is the better answer.
    async fn resume(
        &mut self,
        s: &Shared,
        feed: &Feed,
        since: i64,
        socket: &mut WebSocket,
    ) -> Option<bool> {
        self.last_seq = since;
        if let Some(events) = feed.since(since) {
            let out = events
                .iter()
                .filter(|e| self.take(e))
                .map(|e| e.text.clone())
                .collect();
            return Some(send_all(socket, out).await);
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
    }
}

async fn follow(
    s: Arc<Shared>,
    scope: Scope,
    since: Option<i64>,
    wants: Wants,
    mut delay: i64,
    arbiter: bool,
    mut socket: WebSocket,
) {
    s.metrics.ws_clients.fetch_add(1, Ordering::Relaxed);
    let _gauge = ClientGauge(s.clone());
    let mut closing = s.closing.subscribe();
    let mut round_edits = s.round_edits.subscribe();
    let mut me = Follower {
        scope,
        arbiter,
        wants,
        last_seq: 0,
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
    let mut heartbeat =
        tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Ok(e) => {
                    // Everything else already waiting goes out with it in one write: a busy
                    // round costs a client one system call, not one per message.
                    let mut out = Vec::new();
                    if me.take(&e) {
                        out.push(e.text.clone());
                    }
                    while out.len() < 512 {
                        match rx.try_recv() {
                            Ok(more) => {
                                if me.take(&more) {
                                    out.push(more.text.clone());
                                }
                            }
                            // A lag shows at the next recv(), which answers it.
                            Err(_) => break,
                        }
                    }
                    if !send_all(&mut socket, out).await {
                        return;
                    }
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
            msg = socket.recv() => match msg {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            changed = round_edits.changed(), if !arbiter => {
                if changed.is_err() {
                    break;
                }
                // An arbiter edited a tournament or round: a client whose delay is no longer
                // right starts again from a snapshot of the view it is now owed.
                let now = round_edits.borrow_and_update().get(&scope.round()).copied();
                if let Some(now) = now && now != delay {
                    delay = now;
                    feed = s.feeds.get(scope.round(), delay);
                    rx = feed.subscribe();
                    if !me.start(&s, &feed, &mut socket).await {
                        return;
                    }
                }
            }
            _ = heartbeat.tick() => {
                if !send(&mut socket, ServerMessage::Heartbeat { at_ms: now_ms() }.encode().into()).await {
                    return;
                }
            }
            _ = closing.changed() => break,
        }
    }
    let _ = socket
        .send(WsMessage::Close(Some(axum::extract::ws::CloseFrame {
            code: 1001,
            reason: "relay is shutting down".into(),
        })))
        .await;
}
