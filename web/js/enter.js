// The move-entry page: an operator types the moves of a board without an e-board on a phone or
// tablet, as they are made in the hall. `enter.html?game=ID#token=OPERATOR_TOKEN` (the token in
// the fragment, which no server log sees; it is kept on the device after the first visit).
//
// The device is the truth while the link is away: every move, takeback and result goes into a
// queue kept in localStorage with the game as the device has it, and is sent in order, one at
// a time, retried until the relay answers. Each request names its ply, so a resend after a
// lost answer is stored once. Legal moves only: the rules are chessops's (web/vendor/chessops).

import { Chessground } from '../vendor/chessground/chessground.min.js';
import { Chess, chessgroundDests, makeFen, makeSan, parseFen, parseSan, parseSquare } from '../vendor/chessops/chessops.min.js';
import { formatClock, formatResult, moveLabel, playerParts } from './format.js';

const TOKEN_KEY = 'relay.operatorToken';
const RETRY_MS = 2000;

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const gameId = Number(new URLSearchParams(location.search).get('game'));
const stateKey = `relay.entry.${gameId}`;

// The token from the link, kept for the next visit and taken out of the address bar.
const fromLink = new URLSearchParams(location.hash.slice(1)).get('token');
if (fromLink) {
  try { localStorage.setItem(TOKEN_KEY, fromLink); } catch { /* storage off: this page only */ }
  history.replaceState(null, '', location.pathname + location.search);
}
let token = fromLink || '';
try { token = token || localStorage.getItem(TOKEN_KEY) || ''; } catch { /* storage off */ }

/**
 * What the device holds: the game as typed here and what the relay has not confirmed yet.
 * @type {{ startFen: string, moves: { san: string, clk_ms: number | null }[], result: string,
 *          queue: ({ kind: 'move', ply: number, san: string, clk_ms: number | null }
 *                | { kind: 'takeback', ply: number } | { kind: 'result', result: string })[] }}
 */
let state = { startFen: '', moves: [], result: '*', queue: [] };
let sending = false;
let stopped = ''; // a refusal the operator must look at; nothing more is sent until a reload

function save() {
  try { localStorage.setItem(stateKey, JSON.stringify(state)); } catch { /* storage off */ }
}

function message(text) {
  const m = $('message');
  m.hidden = !text;
  m.textContent = text;
}

function status() {
  const badge = $('live-status');
  const waiting = state.queue.length;
  if (stopped) {
    badge.dataset.status = 'offline';
    badge.textContent = 'refused';
  } else if (waiting === 0) {
    badge.dataset.status = 'live';
    badge.textContent = 'all sent';
  } else {
    badge.dataset.status = sending ? 'behind' : 'offline';
    badge.textContent = `${waiting} waiting to be sent`;
  }
}

/** The position after the moves typed so far (their SAN replayed from the start). */
function position() {
  const pos = Chess.fromSetup(parseFen(state.startFen).unwrap()).unwrap();
  for (const m of state.moves) {
    const mv = parseSan(pos, m.san);
    if (!mv) break;
    pos.play(mv);
  }
  return pos;
}

let ground;

function draw() {
  const pos = position();
  const over = state.result !== '*';
  const turn = pos.turn;
  ground.set({
    fen: makeFen(pos.toSetup()),
    turnColor: turn,
    check: pos.isCheck(),
    movable: { color: over ? undefined : turn, dests: over ? new Map() : chessgroundDests(pos), free: false },
  });
  const list = $('moves');
  list.replaceChildren(...state.moves.map((m, i) => {
    const li = document.createElement('li');
    li.textContent = `${moveLabel(i + 1, m.san, state.startFen)}${m.clk_ms != null ? ` (${formatClock(m.clk_ms)})` : ''}`;
    return li;
  }));
  if (over) {
    const li = document.createElement('li');
    li.textContent = formatResult(state.result);
    list.append(li);
  }
  status();
}

/** "1:29:55", "89:55" or "5400" (seconds) to ms; null for nothing or nonsense. */
function typedClock(text) {
  const t = text.trim();
  if (!t) return null;
  const parts = t.split(':').map(Number);
  if (parts.some((p) => !Number.isFinite(p) || p < 0)) return null;
  const secs = parts.reduce((acc, p) => acc * 60 + p, 0);
  return Math.round(secs * 1000);
}

function enqueue(op) {
  state.queue.push(op);
  save();
  draw();
  pump();
}

function onMove(orig, dest) {
  const pos = position();
  const from = parseSquare(orig);
  const to = parseSquare(dest);
  const piece = pos.board.get(from);
  const promotes = piece?.role === 'pawn' && (to >> 3 === 7 || to >> 3 === 0);
  const promotion = promotes ? /** @type {HTMLSelectElement} */ ($('promote')).value : undefined;
  const mv = /** @type {import('../vendor/chessops/chessops.min.js').NormalMove} */ ({ from, to, promotion });
  // chessground moves the king two squares or onto its rook; chessops knows both.
  if (!pos.isLegal(mv)) { draw(); return; }
  const san = makeSan(pos, mv);
  const clockInput = /** @type {HTMLInputElement} */ ($('clock'));
  const clk = typedClock(clockInput.value);
  clockInput.value = '';
  state.moves.push({ san, clk_ms: clk });
  enqueue({ kind: 'move', ply: state.moves.length, san, clk_ms: clk });
}

function takeBack() {
  if (!state.moves.length || state.result !== '*') return;
  const ply = state.moves.length;
  state.moves.pop();
  enqueue({ kind: 'takeback', ply });
}

function setResult() {
  const r = /** @type {HTMLSelectElement} */ ($('result')).value;
  if (!r) return;
  state.result = r;
  enqueue({ kind: 'result', result: r });
}

/** Sends the queue's first change; true when the relay took it (or had it already). */
async function sendOne(op) {
  const path = op.kind === 'move' ? 'moves' : op.kind === 'takeback' ? 'takeback' : 'result';
  const body = op.kind === 'move'
    ? { san: op.san, ply: op.ply, ...(op.clk_ms != null ? { clk_ms: op.clk_ms } : {}) }
    : op.kind === 'takeback' ? { ply: op.ply } : { result: op.result };
  let res;
  try {
    res = await fetch(`api/games/${gameId}/${path}`, {
      method: 'POST',
      cache: 'no-store',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  } catch {
    return false; // no link: try again later
  }
  if (res.ok) return true;
  if (res.status >= 500) return false; // the relay is busy or its database away: again later
  let why = `${res.status}`;
  try { why = (await res.json()).error || why; } catch { /* not JSON */ }
  stopped = why;
  message(`The relay refused the change (${why}). Nothing more is sent until the page is reloaded.`);
  return false;
}

async function pump() {
  if (sending || stopped) return;
  sending = true;
  status();
  while (state.queue.length && !stopped) {
    if (await sendOne(state.queue[0])) {
      state.queue.shift();
      save();
      status();
    } else if (!stopped) {
      status();
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
  sending = false;
  status();
}

async function start() {
  if (!gameId || !token) {
    message('Open this page with the link the arbiter gave you (enter.html?game=…#token=…).');
    return;
  }
  let saved = null;
  try { saved = JSON.parse(localStorage.getItem(stateKey) || 'null'); } catch { saved = null; }
  let game = null;
  try {
    const res = await fetch(`api/games/${gameId}/moves`, { cache: 'no-store', headers: { Authorization: `Bearer ${token}` } });
    if (res.ok) game = await res.json();
    else if (res.status < 500) {
      let why = `${res.status}`;
      try { why = (await res.json()).error || why; } catch { /* not JSON */ }
      message(why);
      if (!saved) return;
    }
  } catch { /* no link: what the device holds */ }
  if (saved && (saved.queue.length || !game)) {
    state = saved; // changes the relay has not had yet: the device's game stands
  } else if (game) {
    state = {
      startFen: game.start_fen,
      moves: game.moves.map((m) => ({ san: m.san, clk_ms: m.clk_ms ?? null })),
      result: game.result,
      queue: [],
    };
    save();
  } else {
    message('The relay cannot be reached and this device has no copy of the game yet.');
    return;
  }
  if (game) {
    const w = playerParts(game.white);
    const b = playerParts(game.black);
    $('players').textContent = `Board ${game.board_no}: ${w.name} – ${b.name}`;
    document.title = `Board ${game.board_no} · move entry · relay`;
  }
  ground = Chessground($('board'), {
    coordinates: true,
    movable: { free: false, showDests: true, events: { after: onMove } },
    draggable: { enabled: true },
    premovable: { enabled: false },
    animation: { enabled: true, duration: 120 },
  });
  $('takeback').addEventListener('click', takeBack);
  $('set-result').addEventListener('click', setResult);
  window.addEventListener('online', () => pump());
  draw();
  pump();
}

start();
