// Shared plumbing for every page: JSON fetches, the admin token, the live
// WebSocket with resume, the status badge, and applying a game event.
//
// URLs are relative ("api/..."), so the pages work both at the site root and
// behind a reverse proxy that mounts relay under a path.

/** @typedef {import('../types/ws-messages').Announcement} Announcement */
/** @typedef {import('../types/ws-messages').ServerMessage} ServerMessage */
/** @typedef {import('../types/ws-messages').GameView} GameView */

import { moveNumber } from './format.js';

// ---- server time ---------------------------------------------------------

// Offset between the server's clock and ours. Running clocks are computed
// from the server's `at_ms`, so a laptop whose clock is minutes off would show
// wrong times. The HTTP Date header only has 1 s resolution, so small
// differences are ignored.
let skewMs = 0;

/** The current time on the server's clock, in ms since the epoch. */
export const serverNow = () => Date.now() + skewMs;

function noteServerDate(res, sentAt) {
  const date = Date.parse(res.headers.get('Date') || '');
  if (!Number.isFinite(date)) return;
  const offset = date + 500 - (sentAt + Date.now()) / 2;
  skewMs = Math.abs(offset) > 3000 ? offset : 0;
}

// ---- fetch -----------------------------------------------------------------

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status; // 0 when the server could not be reached
  }
}

async function request(url, options = {}) {
  const sentAt = Date.now();
  let res;
  try {
    res = await fetch(url, { cache: 'no-store', ...options });
  } catch {
    throw new ApiError(0, 'The server cannot be reached.');
  }
  noteServerDate(res, sentAt);
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const body = await res.json();
      if (body && body.error) message = body.error;
    } catch { /* not JSON: keep the status line */ }
    throw new ApiError(res.status, message);
  }
  return res;
}

export async function getJSON(url) {
  const res = await request(url, { headers: { Accept: 'application/json' } });
  return res.json();
}

// ---- admin -----------------------------------------------------------------

const TOKEN_KEY = 'relay.adminToken';

export function getToken() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

export function setToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token lives for this page only */ }
}

/**
 * fetch with `Authorization: Bearer TOKEN`. `body` is sent as JSON; or `text`
 * is sent as it is, with `type` as its Content-Type (an uploaded PGN file); or
 * `bytes`, a file's bytes untouched (a TRF may be Latin-1).
 * @param {string} url
 * @param {{ method?: string, body?: unknown, text?: string, bytes?: ArrayBuffer, type?: string }} [options]
 */
export function adminFetch(url, { method = 'GET', body, text, bytes, type } = {}) {
  const headers = {};
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  } else if (text !== undefined) {
    headers['Content-Type'] = type || 'text/plain; charset=utf-8';
    payload = text;
  } else if (bytes !== undefined) {
    headers['Content-Type'] = type || 'text/plain';
    payload = bytes;
  }
  return request(url, { method, headers, body: payload });
}

export async function adminJSON(url, options) {
  const text = await (await adminFetch(url, options)).text();
  return text ? JSON.parse(text) : null;
}

// ---- live socket -------------------------------------------------------------

const STATUS_TEXT = { live: 'live', reconnecting: 'reconnecting…', offline: 'offline', behind: 'behind' };

/**
 * Shows a socket status on the page's `#live-status` badge; for "behind",
 * `lagMs` says by how much.
 */
export function showStatus(status, lagMs) {
  const badge = document.getElementById('live-status');
  if (!badge) return;
  badge.dataset.status = status;
  badge.textContent = status === 'behind' && lagMs
    ? `behind by ${Math.round(lagMs / 1000)} s`
    : STATUS_TEXT[status] || status;
}

// The server sends a heartbeat every 5 s, stamped with its time. One arriving
// more than BEHIND_MS late means what we see is that much behind the hall (a
// slow link, or a server that cannot keep up); hearing nothing at all for
// SILENT_MS means the connection is dead even if no close has reached us.
const BEHIND_MS = 8000;
const SILENT_MS = 15000;

/**
 * What the page's handling of socket messages (heartbeats aside) costs, in counts and sums
 * only, so it stays small however long the page is open: `handleMs`, the script run for the
 * message (the page's own work, DOM writes included); `paintMs`, from the first message of a
 * burst to the end of the frame that shows it (layout, paint and the boards' redraw, and the
 * wait for the frame). The browser tests read it as `window.relayTiming` (invariant 21).
 */
export const timing = {
  messages: 0, handleMs: 0, handleMaxMs: 0, paints: 0, paintMs: 0, paintMaxMs: 0,
  reset() {
    Object.assign(this, { messages: 0, handleMs: 0, handleMaxMs: 0, paints: 0, paintMs: 0, paintMaxMs: 0 });
  },
};
/** @type {any} */ (window).relayTiming = timing;
let paintFrom = null;

/** Notes a message handled from `start` to now, and the frame that will show it. */
function noteHandled(start) {
  const ms = performance.now() - start;
  timing.messages += 1;
  timing.handleMs += ms;
  timing.handleMaxMs = Math.max(timing.handleMaxMs, ms);
  if (paintFrom != null) return;
  paintFrom = start;
  // A task queued from the frame's callbacks runs once that frame is rendered.
  requestAnimationFrame(() => setTimeout(() => {
    const painted = performance.now() - paintFrom;
    paintFrom = null;
    timing.paints += 1;
    timing.paintMs += painted;
    timing.paintMaxMs = Math.max(timing.paintMaxMs, painted);
  }, 0));
}

/**
 * Opens `path` as a WebSocket and keeps it open: on a close it reconnects with
 * backoff (1 s doubling to 10 s) and asks for `?since=<highest seq seen>`, so
 * the server sends only what was missed (or a fresh snapshot).
 * `onStatus` gets "live", "behind" (with the lag in ms), "reconnecting" or
 * "offline" (the browser says it is offline, or more than three attempts in a
 * row have failed). A socket silent for SILENT_MS is dropped and reopened.
 * `options.since` resumes from a seq already known (e.g. from a JSON fetch).
 * Returns { close(), resync() }; resync() reconnects without `since`, for a
 * page that noticed it missed something.
 * @param {string} path
 * @param {(msg: ServerMessage) => void} onMessage
 * @param {(status: string, lagMs?: number) => void} [onStatus]
 * @param {{ since?: number }} [options]
 */
export function liveSocket(path, onMessage, onStatus = showStatus, options = {}) {
  let seq = options.since ?? null;
  let ws = null;
  let delay = 1000;
  let failures = 0;
  let timer = null;
  let stopped = false;
  // performance.now(), not Date.now(): a wall clock set back or forward must not
  // look like silence.
  let heardAt = performance.now();
  let behind = false;
  /**
   * A snapshot still missing some of its parts.
   * @type {{ msg: Extract<Announcement, { type: 'snapshot' }>, left: number } | null}
   */
  let partial = null;

  function url() {
    const u = new URL(path, location.href);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    if (seq != null) u.searchParams.set('since', String(seq));
    return u.href;
  }

  function connect() {
    clearTimeout(timer);
    timer = null;
    const socket = new WebSocket(url());
    ws = socket;
    partial = null;
    socket.onopen = () => {
      delay = 1000;
      failures = 0;
      heardAt = performance.now();
      behind = false;
      onStatus('live');
    };
    socket.onmessage = (event) => {
      if (ws !== socket) return;
      heardAt = performance.now();
      const start = heardAt;
      if (handle(event) !== 'heartbeat') noteHandled(start);
    };
    /** @param {MessageEvent} event */
    const handle = (event) => {
      /** @type {Announcement} */
      let msg;
      try { msg = JSON.parse(event.data); } catch { return; }
      if (msg.type === 'heartbeat') {
        const lag = serverNow() - msg.at_ms;
        if (lag > BEHIND_MS) {
          behind = true;
          onStatus('behind', lag);
        } else if (behind) {
          behind = false;
          onStatus('live');
        }
        return 'heartbeat';
      }
      // A big snapshot comes in parts: the snapshot, then `more` messages of a round's games
      // or a game's moves. Pages get it whole, and its seq counts only then (a socket lost
      // halfway must not resume after a snapshot it never finished).
      if (msg.type === 'snapshot' && (msg.round || msg.game) && msg.more > 0) {
        partial = { msg, left: msg.more };
        return;
      }
      if (msg.type === 'games' || msg.type === 'moves') {
        if (!partial || msg.seq !== partial.msg.seq) return;
        if (msg.type === 'games' && partial.msg.round && Array.isArray(msg.games)) {
          partial.msg.round.games.push(...msg.games);
        } else if (msg.type === 'moves' && partial.msg.game && Array.isArray(msg.moves)) {
          partial.msg.game.moves.push(...msg.moves);
        } else {
          return;
        }
        partial.left -= 1;
        if (partial.left > 0) return;
        msg = partial.msg;
        delete msg.more;
        partial = null;
      }
      if ('seq' in msg && typeof msg.seq === 'number' && (seq == null || msg.seq > seq)) seq = msg.seq;
      // Running clocks come bundled, a round's readings of the last second in one message;
      // each is handed on as a clock message of its own.
      if (msg.type === 'clocks' && Array.isArray(msg.clocks)) {
        for (const c of msg.clocks) onMessage({ type: 'clock', seq: msg.seq, game_id: c.game_id, clock: c.clock });
        return;
      }
      // Lever presses held for the round's next change ride on it, oldest first; each is
      // handed on as the move_clock message it is, before the change itself.
      if (Array.isArray(msg.presses)) {
        const presses = msg.presses;
        delete msg.presses;
        for (const p of presses) onMessage(p);
      }
      onMessage(msg);
    };
    socket.onclose = () => {
      if (ws !== socket) return; // replaced on purpose by resync()
      ws = null;
      if (!stopped) retry();
    };
  }

  function retry() {
    failures += 1;
    onStatus(navigator.onLine === false || failures > 3 ? 'offline' : 'reconnecting');
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, 10000);
  }

  // A silent socket is given up: drop it and connect again (with `since`).
  setInterval(() => {
    if (stopped || !ws || ws.readyState !== WebSocket.OPEN) return;
    if (performance.now() - heardAt < SILENT_MS) return;
    const dead = ws;
    ws = null;
    try { dead.close(); } catch { /* already closing */ }
    retry();
  }, 1000);

  // Back online: do not wait for the rest of the backoff.
  window.addEventListener('online', () => {
    if (timer) connect();
    else if (ws && ws.readyState === WebSocket.OPEN) onStatus('live');
  });
  window.addEventListener('offline', () => onStatus('offline'));

  onStatus('reconnecting');
  connect();

  return {
    close() {
      stopped = true;
      clearTimeout(timer);
      if (ws) ws.close();
    },
    resync() {
      seq = null;
      const old = ws;
      ws = null;
      if (old) old.close();
      connect();
    },
  };
}

// ---- game events ---------------------------------------------------------------

/**
 * The clock once `move` is made, from the press that ended it: the mover's time is the move's
 * own clock (what the PGN says, a period's bonus at move 40 included: lila#19227), shown at
 * once; the side now running counts down from the board's reading. Readings after it (a
 * `clock` message) are the board's again, an arbiter's correction included.
 * @param {GameView} game
 * @param {import('../types/ws-messages').ClockView} clock
 * @param {import('../types/ws-messages').MoveView | undefined} move
 */
function afterPress(game, clock, move) {
  if (!clock || !move || move.clk_ms == null) return clock;
  const side = moveNumber(move.ply, game.start_fen).white ? 'white' : 'black';
  if (clock.running === side) return clock;
  return { ...clock, [`${side}_ms`]: move.clk_ms };
}

/**
 * Applies one socket event (move, move_clock, truncate, result, clock) to a
 * GameView in place. Returns true if the game changed, false if the event is
 * not about game state, and "gap" if a move arrived whose predecessor we never
 * saw (the caller should resync).
 * @param {GameView} game
 * @param {ServerMessage} msg
 * @returns {boolean | 'gap'}
 */
export function applyGameEvent(game, msg) {
  const moves = game.moves;
  switch (msg.type) {
    case 'move': {
      const move = msg.move;
      const lastPly = moves.length ? moves[moves.length - 1].ply : 0;
      if (move.ply > lastPly + 1) return 'gap';
      game.moves = moves.filter((m) => m.ply < move.ply);
      game.moves.push(move);
      game.fen = move.fen;
      if (game.status === 'pending') game.status = 'live';
      // The lever press that came with the move rides on it.
      if (msg.clock && (!game.result || game.result === '*')) game.clock = afterPress(game, msg.clock, move);
      return true;
    }
    case 'move_clock': {
      // The press that ended the move: its time, and the clock now running.
      const move = moves.find((m) => m.ply === msg.ply);
      if (move) {
        move.clk_ms = msg.clk_ms;
        move.emt_ms = msg.emt_ms;
      }
      if (msg.clock && (!game.result || game.result === '*')) game.clock = afterPress(game, msg.clock, move);
      return Boolean(move || msg.clock);
    }
    case 'truncate':
      // A round snapshot holds only the last move of each game: a takeback past what we
      // hold needs the game again.
      if (moves.length && moves[0].ply > 1 && msg.from_ply <= moves[0].ply) return 'gap';
      game.moves = moves.filter((m) => m.ply < msg.from_ply);
      game.fen = game.moves.length ? game.moves[game.moves.length - 1].fen : game.start_fen;
      return true;
    case 'result':
      game.result = msg.result;
      game.termination = msg.termination ?? null;
      if (msg.status) game.status = msg.status;
      // A game over shows the clocks of its last moves, not a board clock still running.
      if (msg.result && msg.result !== '*') game.clock = null;
      return true;
    case 'clock':
      if (game.result && game.result !== '*') return false;
      game.clock = msg.clock;
      return true;
    default:
      return false;
  }
}
