//! WebSockets for a round and for a game: a snapshot first, then every change as it is
//! committed, each with the round's change number. A client coming back with `?since=N` gets
//! the changes it missed from the store (or a snapshot when that is shorter); a client too
//! slow to keep up gets a fresh snapshot instead of holding anyone up. Spectators of a delayed
//! round get every message `delay` late.

use super::http::{ApiError, AppState, arbiter, cutoff, game_json, round_json};
use super::live::{Cached, Event, Shared, now_ms};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize, Debug)]
pub struct WsQuery {
    since: Option<i64>,
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
    let id = super::http::parse_id(&id, "round")?;
    s.store.round(id).await?;
    open(s, Scope::Round(id), q, h, ws).await
}

pub async fn game_socket(
    State(s): State<AppState>,
    Path(id): Path<String>,
    q: QueryResult,
    h: HeaderMap,
    ws: Upgrade,
) -> Result<Response, ApiError> {
    let id = super::http::parse_id(&id, "game")?;
    let g = s.store.game(id).await?;
    let scope = Scope::Game {
        round: g.round_id,
        game: id,
    };
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
    let r = s.store.round(scope.round()).await?;
    let a = arbiter(&s, &h)?;
    let (_, delay) = cutoff(&s, &r, a).await?;
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
        .on_upgrade(move |socket| follow(s, scope, q.since, delay, a, socket))
        .into_response())
}

fn not_upgrade(e: WebSocketUpgradeRejection) -> ApiError {
    ApiError::bad(format!("this is a WebSocket endpoint: {e}"))
}

async fn snapshot(s: &Shared, scope: Scope, arbiter: bool) -> Result<(i64, String), ApiError> {
    s.metrics.ws_snapshots.fetch_add(1, Ordering::Relaxed);
    match scope {
        Scope::Round(r) => {
            let info = s.store.round(r).await?;
            let live = arbiter || cutoff(s, &info, false).await?.0.is_none();
            let cached = |seq: i64| {
                s.snapshots
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&r)
                    .cloned()
                    .filter(|c| c.fresh(seq))
            };
            if live && let Some(c) = cached(info.seq) {
                return Ok((c.seq, c.text.as_str().to_owned()));
            }
            // One build at a time: a crowd connecting at once reads the round once, and
            // never starves the database of the connections the rest of the service needs.
            let _turn = s.snapshot_build.lock().await;
            let info = s.store.round(r).await?;
            if live && let Some(c) = cached(info.seq) {
                return Ok((c.seq, c.text.as_str().to_owned()));
            }
            let v = round_json(s, r, arbiter).await?;
            let seq = v["seq"].as_i64().unwrap_or(0);
            let text = json!({"type": "snapshot", "seq": seq, "round": v}).to_string();
            if live {
                s.snapshots
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(
                        r,
                        Cached {
                            seq,
                            built_ms: now_ms(),
                            text: Arc::new(text.clone()),
                            etag: String::new(),
                        },
                    );
            }
            Ok((seq, text))
        }
        Scope::Game { round, game } => {
            let info = s.store.round(round).await?;
            let seq = match cutoff(s, &info, arbiter).await?.0 {
                Some(c) => s.store.seq_at(round, c).await?,
                None => info.seq,
            };
            let v = game_json(s, game, arbiter).await?;
            Ok((
                seq,
                json!({"type": "snapshot", "seq": seq, "game": v}).to_string(),
            ))
        }
    }
}

/// A stored change as the message a client of `scope` gets; `Pending::Game` for a game
/// replaced wholesale (its view is built when it is sent, as of that moment).
async fn change_message(scope: Scope, c: &relay_store::Change) -> Option<Pending> {
    let game = c.game_id?;
    if let Scope::Game { game: g, .. } = scope
        && g != game
    {
        return None;
    }
    let p: Value = serde_json::from_str(&c.payload).unwrap_or(Value::Null);
    let seq = c.seq;
    let msg = match c.kind.as_str() {
        "move" => json!({"type": "move", "seq": seq, "game_id": game, "move": p}),
        "move_clock" => {
            json!({"type": "move_clock", "seq": seq, "game_id": game, "ply": p["ply"], "clk_ms": p["clk_ms"], "emt_ms": p["emt_ms"]})
        }
        "truncate" => {
            json!({"type": "truncate", "seq": seq, "game_id": game, "from_ply": p["from_ply"]})
        }
        "result" => {
            json!({"type": "result", "seq": seq, "game_id": game, "result": p["result"], "termination": p["termination"], "status": p["status"]})
        }
        _ => return Some(Pending::Game { seq, game }),
    };
    Some(Pending::Text(msg.to_string()))
}

/// A message waiting to be sent.
#[derive(Debug)]
enum Pending {
    Text(String),
    Game { seq: i64, game: i64 },
}

impl Pending {
    async fn render(self, s: &Shared, arbiter: bool) -> Option<String> {
        match self {
            Pending::Text(t) => Some(t),
            Pending::Game { seq, game } => {
                let v = game_json(s, game, arbiter).await.ok()?;
                Some(json!({"type": "game", "seq": seq, "game": v}).to_string())
            }
        }
    }
}

/// The messages a live client missed after `since`, from the store; `None` when a snapshot
/// is the better answer (too many, or `since` is not a number this round had).
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
    let mut out = Vec::new();
    for c in &changes {
        if let Some(m) = change_message(scope, c).await {
            out.push(m);
        }
    }
    // Changes committed after `current` was read may be among them: they are not sent again.
    let last = changes.last().map_or(current, |c| c.seq.max(current));
    Some((last, out))
}

async fn send(socket: &mut WebSocket, text: String) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, socket.send(WsMessage::Text(text.into()))).await,
        Ok(Ok(()))
    )
}

/// Sends messages with one flush at the end.
async fn send_all(socket: &mut WebSocket, texts: Vec<String>) -> bool {
    let write = async {
        for t in texts {
            socket.feed(WsMessage::Text(t.into())).await?;
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

/// Messages a delayed client holds at most; beyond, it is dropped (it reconnects and starts
/// from a snapshot).
const MAX_HELD: usize = 100_000;
/// A delayed client keeps one running-clock message per game this often (the page counts
/// the seconds between them itself).
const HELD_CLOCK_EVERY_MS: i64 = 10_000;

/// Queues, each at its time, what happened after `last_seq` for a client `delay` ms behind
/// (the changes between its view's moment and now); returns the last change number queued.
async fn hold_since(
    s: &Shared,
    scope: Scope,
    delay: i64,
    mut last_seq: i64,
    held: &mut VecDeque<(i64, Pending)>,
) -> i64 {
    if let Ok(changes) = s
        .store
        .changes_since(scope.round(), last_seq, MAX_HELD as u32)
        .await
    {
        for c in &changes {
            last_seq = c.seq;
            if let Some(m) = change_message(scope, c).await {
                held.push_back((c.at_ms + delay, m));
            }
        }
    }
    last_seq
}

/// Sends a fresh snapshot (and, for a delayed client, queues what follows it); the change
/// number the client is at, or `None` when the client is gone or the store failed.
async fn restart(
    s: &Shared,
    scope: Scope,
    arbiter: bool,
    delay: i64,
    socket: &mut WebSocket,
    held: &mut VecDeque<(i64, Pending)>,
) -> Option<i64> {
    let (seq, text) = snapshot(s, scope, arbiter).await.ok()?;
    if !send(socket, text).await {
        return None;
    }
    Some(if delay > 0 {
        hold_since(s, scope, delay, seq, held).await
    } else {
        seq
    })
}

async fn follow(
    s: Arc<Shared>,
    scope: Scope,
    since: Option<i64>,
    mut delay: i64,
    arbiter: bool,
    mut socket: WebSocket,
) {
    s.metrics.ws_clients.fetch_add(1, Ordering::Relaxed);
    let _gauge = ClientGauge(s.clone());
    // Subscribe before reading the store: nothing committed in between is missed (anything
    // seen twice is recognised by its change number).
    let mut rx = s.events.subscribe();
    let mut closing = s.closing.subscribe();
    let mut last_seq;
    // Delayed spectators: messages wait here until their time.
    let mut held: VecDeque<(i64, Pending)> = VecDeque::new();
    let mut held_clock: HashMap<i64, (i64, Option<&'static str>)> = HashMap::new();
    let resumed = match since {
        Some(n) if delay == 0 => missed(&s, scope, n).await,
        _ => None,
    };
    match resumed {
        Some((last, msgs)) => {
            for m in msgs {
                let Some(text) = m.render(&s, arbiter).await else {
                    continue;
                };
                if !send(&mut socket, text).await {
                    return;
                }
            }
            last_seq = last;
        }
        None => match snapshot(&s, scope, arbiter).await {
            Ok((seq, text)) => {
                if !send(&mut socket, text).await {
                    return;
                }
                last_seq = seq;
            }
            Err(e) => {
                let _ = send(
                    &mut socket,
                    json!({"type": "error", "error": e.1}).to_string(),
                )
                .await;
                return;
            }
        },
    }
    if delay > 0 {
        last_seq = hold_since(&s, scope, delay, last_seq, &mut held).await;
    }
    let mut round_edits = s.round_edits.subscribe();
    let mut heartbeat =
        tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let next_release = held
            .front()
            .map(|(t, _)| Duration::from_millis(u64::try_from(*t - now_ms()).unwrap_or(0)));
        tokio::select! {
            ev = rx.recv() => match ev {
                Ok(e) => {
                    if !scope.wants(&e) || (e.change && e.seq <= last_seq) {
                        continue;
                    }
                    if e.change {
                        last_seq = e.seq;
                    }
                    if delay > 0 {
                        // Bundled readings: one every 10 s is plenty for a delayed page.
                        if e.clocks.is_some() {
                            let last = held_clock.get(&-1).copied();
                            if last.is_some_and(|(at, _)| e.at_ms - at < HELD_CLOCK_EVERY_MS) {
                                continue;
                            }
                            held_clock.insert(-1, (e.at_ms, None));
                        }
                        if let (Some(c), Some(g)) = (e.clock, e.game_id) {
                            let last = held_clock.get(&g).copied();
                            if last.is_some_and(|(at, running)| e.at_ms - at < HELD_CLOCK_EVERY_MS && running == c.running) {
                                continue;
                            }
                            held_clock.insert(g, (e.at_ms, c.running));
                        }
                        if held.len() >= MAX_HELD {
                            break;
                        }
                        held.push_back((e.at_ms + delay, Pending::Text(e.delayed_text(delay))));
                    } else {
                        // Everything else already waiting goes out with it in one write: a
                        // busy round costs a client one system call, not one per message.
                        let mut out = vec![e.text.clone()];
                        while out.len() < 512 {
                            match rx.try_recv() {
                                Ok(more) => {
                                    if !scope.wants(&more) || (more.change && more.seq <= last_seq) {
                                        continue;
                                    }
                                    if more.change {
                                        last_seq = more.seq;
                                    }
                                    out.push(more.text.clone());
                                }
                                // A lag shows at the next recv(), which answers it.
                                Err(_) => break,
                            }
                        }
                        if !send_all(&mut socket, out).await {
                            return;
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    // Too slow to follow every change: start again from a snapshot.
                    held.clear();
                    held_clock.clear();
                    match restart(&s, scope, arbiter, delay, &mut socket, &mut held).await {
                        Some(seq) => last_seq = seq,
                        None => return,
                    }
                }
                Err(RecvError::Closed) => break,
            },
            msg = socket.recv() => match msg {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            _ = tokio::time::sleep(next_release.unwrap_or(Duration::from_secs(3600))), if next_release.is_some() => {
                while held.front().is_some_and(|(t, _)| *t <= now_ms()) {
                    let Some((_, m)) = held.pop_front() else { break };
                    let Some(text) = m.render(&s, arbiter).await else { continue };
                    if !send(&mut socket, text).await {
                        return;
                    }
                }
            }
            changed = round_edits.changed(), if !arbiter => {
                if changed.is_err() {
                    break;
                }
                // An arbiter edited a tournament or round: a client whose delay is no longer
                // right starts again from a snapshot of the view it is now owed.
                let now = round_edits.borrow_and_update().get(&scope.round()).copied();
                if let Some(now) = now && now != delay {
                    delay = now;
                    held.clear();
                    held_clock.clear();
                    match restart(&s, scope, arbiter, delay, &mut socket, &mut held).await {
                        Some(seq) => last_seq = seq,
                        None => return,
                    }
                }
            }
            _ = heartbeat.tick() => {
                if !send(&mut socket, json!({"type": "heartbeat", "at_ms": now_ms()}).to_string()).await {
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
