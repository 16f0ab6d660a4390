// The push panel, from /health: where this relay pushes to (a cloud relay, Lichess) and how
// that goes, which venues push here, and the games either side holds back (conflicts): a
// venue's game changed here has a button to take the venue's version, a venue's game that
// came for a board another hall's game holds (a clash) a form to place it on a free board.
// The same read tells the games table which hall each game comes from.

import { ApiError, adminFetch, serverNow } from '../api.js';
import { el, formatTimeOfDay, formatDuration } from '../format.js';
import { noteConflicts, settleForm, takeVenueButton } from './alerts.js';
import { showHalls } from './games.js';
import { $, run, showError } from './page.js';
import { refreshGame, refreshRound } from './round.js';
import { venueOf } from './state.js';

// /health is read every 2 s: it is small, needs no token, and is the only place the push
// state is told (the round's socket does not carry it).
const HEALTH_EVERY_MS = 2000;
// A target that answers is asked at least every 10 s (the pusher's heartbeat), so no
// success for 30 s means requests hang even if none has failed yet.
const RECENT_MS = 30000;

const upstreamRows = new Map(); // kind and target → <tr>
const venueRows = new Map(); // origin → <tr>

// /health answers 503 with the same body while the store is down, and the push state is
// wanted most then: so the body is read whatever the status.
async function readHealth() {
  let res;
  try {
    res = await fetch('health', { cache: 'no-store', headers: { Accept: 'application/json' } });
  } catch {
    throw new ApiError(0, 'The server cannot be reached.');
  }
  try {
    return await res.json();
  } catch {
    throw new ApiError(res.status, `${res.status} ${res.statusText}`);
  }
}

const ago = (ms, now) => (ms == null ? 'never' : `${formatDuration(now - ms)} ago`);

/** A conflict's message, with its board in front unless the message starts with it. */
function conflictText(c) {
  const message = c.message || 'not taken';
  return c.board_no && !/^board /i.test(message) ? `board ${c.board_no}: ${message}` : message;
}

/**
 * A clash in words: the board and its round (as the server's message names it), the hall
 * whose game holds the board here, and the venue whose game waits: held back, or (a game
 * the venue renumbered onto that board, as the message says) on its old board here.
 * Reads `venueOf`.
 */
function clashText(venue, c) {
  const round = /\bround ([^\s:;,]+)/.exec(c.message || '');
  const stays = /\bstays on board (\d+)/.exec(c.message || '');
  const holder = venueOf.get(c.cloud_game_id);
  let holds = 'no game holds it any more';
  if (holder) holds = `hall ${holder.name}'s game holds it`;
  else if (c.cloud_game_id) holds = 'a game of this relay holds it';
  const waits = stays
    ? `${venue.name} renumbered its game to it, which stays on board ${stays[1]} here until that board is free or it is placed`
    : `${venue.name}'s game for it is held back until it is placed on a free board`;
  return `board ${c.board_no}${round ? ` of round ${round[1]}` : ''}: ${holds}; ${waits}`;
}

/** The target's state: {state (the badge's style), text, detail}. */
function pushState(t, now) {
  if (t.standing_by) return { state: 'standby', text: 'standing by', detail: 'another relay on this database pushes; this one takes over if it goes' };
  if (t.waiting_until_ms != null && t.waiting_until_ms > now) {
    return { state: 'waiting', text: `waiting until ${formatTimeOfDay(t.waiting_until_ms)}`, detail: t.last_error };
  }
  if (t.last_error != null) return { state: 'down', text: 'down', detail: t.last_error };
  if (t.last_ok_ms == null) return { state: 'starting', text: 'not reached yet' };
  if (now - t.last_ok_ms < RECENT_MS) return { state: 'ok', text: 'ok' };
  return { state: 'stale', text: `no success for ${formatDuration(now - t.last_ok_ms)}` };
}

/**
 * What settles a venue's conflict here: a clash, the form placing its game on a free
 * board; else the button taking the venue's version.
 */
function settleControl(venue, c) {
  if (c.clash) return settleForm(venue.origin, c.game_id, c.board_no);
  return c.cloud_game_id ? takeVenueButton(c.cloud_game_id, c.board_no) : null;
}

// The conflicts cell is rebuilt only when what it says changes, not on every read, so a
// button keeps focus and its disabled state across reads, and a board being typed stays.
// `venue` is given for a venue pushing here (its conflicts are settled here), not for a
// target this relay pushes to (settled there).
function fillConflicts(cell, conflicts, venue) {
  const items = conflicts.map((c) => ({ c, text: venue && c.clash ? clashText(venue, c) : conflictText(c) }));
  const sig = JSON.stringify(items.map(({ c, text }) => [text, c.game_id, c.cloud_game_id, c.clash]));
  if (cell.dataset.sig === sig) return;
  cell.dataset.sig = sig;
  if (!conflicts.length) {
    cell.replaceChildren(el('span', { class: 'muted', text: 'none' }));
    return;
  }
  cell.replaceChildren(el('strong', { text: String(conflicts.length) }),
    el('ul', { class: 'conflicts' }, ...items.map(({ c, text }) => el('li', { 'data-clash': c.clash ? 'yes' : null },
      text, venue ? settleControl(venue, c) : null))));
}

function createRow(rows, key, names) {
  const row = el('tr', {}, ...names.map((name) => el('td', { class: `push-${name}` })));
  rows.set(key, row);
  return row;
}

function renderUpstreamRow(row, t, now) {
  const cell = (name) => row.querySelector(`.push-${name}`);
  const { state, text, detail } = pushState(t, now);
  row.dataset.state = state;
  cell('target').textContent = t.target;
  cell('kind').textContent = t.kind;
  cell('state').replaceChildren(el('span', { class: 'push-badge', 'data-state': state, text }),
    ...(detail ? [el('span', { class: 'push-detail', text: detail })] : []));
  cell('queued').textContent = t.queued;
  const ok = cell('ok');
  ok.textContent = ago(t.last_ok_ms, now);
  ok.title = t.last_ok_ms ? formatTimeOfDay(t.last_ok_ms) : '';
  cell('delivered').textContent = `${t.delivered_changes} ${t.delivered_changes === 1 ? 'change' : 'changes'} `
    + `in ${t.delivered_batches} ${t.delivered_batches === 1 ? 'batch' : 'batches'}`;
  fillConflicts(cell('conflicts'), t.conflicts || [], null);
}

function renderVenueRow(row, v, now) {
  const cell = (name) => row.querySelector(`.push-${name}`);
  const name = cell('name');
  name.textContent = v.name;
  name.title = `origin ${v.origin}`;
  const batch = cell('batch');
  // A hall asks at least every 10 s; silent means its link is down or it stopped.
  row.dataset.link = v.link;
  batch.textContent = `${v.link === 'silent' ? 'link silent: ' : ''}${ago(v.applied_at_ms, now)} (batch ${v.batch})`;
  batch.title = formatTimeOfDay(v.applied_at_ms);
  fillConflicts(cell('conflicts'), v.conflicts || [], v);
}

/** Brings a table's rows to `items`: made, updated, dropped; moved only when the set changes. */
function syncRows(table, rows, items, keyOf, names, render, now) {
  const keys = items.map(keyOf);
  const wanted = new Set(keys);
  for (const key of [...rows.keys()]) if (!wanted.has(key)) rows.delete(key);
  items.forEach((item, i) => render(rows.get(keys[i]) || createRow(rows, keys[i], names), item, now));
  const body = table.tBodies[0];
  const placed = [...body.rows];
  if (placed.length !== keys.length || placed.some((row, i) => row !== rows.get(keys[i]))) {
    body.replaceChildren(...keys.map((key) => rows.get(key)));
  }
}

function showPush(health) {
  const now = serverNow(); // the times in /health are the server's
  const upstream = Array.isArray(health.upstream) ? health.upstream : [];
  const venues = Array.isArray(health.pushed_from) ? health.pushed_from : [];
  // First: the conflicts' texts below name the halls holding boards.
  venueOf.clear();
  for (const v of venues) for (const id of v.games || []) venueOf.set(id, v);
  showHalls(venues.length > 0);
  $('push').hidden = false;
  $('upstream-none').hidden = upstream.length > 0;
  $('upstream').hidden = upstream.length === 0;
  syncRows($('upstream'), upstreamRows, upstream, (t) => `${t.kind} ${t.target}`,
    ['target', 'kind', 'state', 'queued', 'ok', 'delivered', 'conflicts'], renderUpstreamRow, now);
  $('venues-panel').hidden = venues.length === 0;
  syncRows($('venues'), venueRows, venues, (v) => v.origin, ['name', 'batch', 'conflicts'], renderVenueRow, now);

  // Upstream, the game is ours and the target's arbiter has to settle it; from a venue,
  // cloud_game_id is this relay's game, which the arbiter here can settle.
  const current = [];
  for (const t of upstream) {
    for (const c of t.conflicts || []) {
      current.push({ key: `up ${t.kind} ${t.target} ${c.game_id}`, text: `push to ${t.target}: ${conflictText(c)}`, boardNo: c.board_no });
    }
  }
  for (const v of venues) {
    for (const c of v.conflicts || []) {
      if (c.clash) {
        // Keyed by the venue's game: the game holding the board may change.
        current.push({
          key: `clash ${v.origin} ${c.game_id}`, text: `venue ${v.name}: ${clashText(v, c)}`,
          settle: { origin: v.origin, gameId: c.game_id, boardNo: c.board_no },
        });
        continue;
      }
      current.push({
        key: `from ${v.origin} ${c.cloud_game_id}`, text: `venue ${v.name}: ${conflictText(c)}`,
        takeId: c.cloud_game_id, boardNo: c.board_no,
      });
    }
  }
  noteConflicts(current);
}

let healthAsked = 0; // reads sent; an answer older than the one shown is dropped
let healthShown = 0;
let healthReadAt = null;

async function refreshHealth() {
  const n = ++healthAsked;
  try {
    const health = await readHealth();
    if (n < healthShown) return;
    healthShown = n;
    healthReadAt = Date.now();
    $('push-note').textContent = '';
    showPush(health);
  } catch (err) {
    // Kept as last read, and said so: the live badge tells of the server being away.
    if (n < healthShown || healthReadAt == null) return;
    $('push-note').textContent = `(as of ${formatTimeOfDay(healthReadAt)}: ${err.message})`;
  }
}

/**
 * Reads /health now and from then on. The next read is asked for once the last one is
 * answered, so a slow server is not asked again and again.
 */
export async function pollHealth() {
  await refreshHealth();
  setTimeout(pollHealth, HEALTH_EVERY_MS);
}

function takeVenue(event) {
  const button = event.target.closest('button.take-venue');
  if (!button) return;
  const id = Number(button.dataset.gameId);
  const where = button.dataset.board ? `board ${button.dataset.board}` : `game ${id}`;
  if (!window.confirm(`Take the venue's version of ${where}?\n\n`
    + 'The game becomes the venue\'s game as last pushed; what an arbiter changed in it on this relay is replaced.')) return;
  run(button, `Taking the venue's version of ${where}`,
    () => adminFetch(`api/games/${id}/take-venue`, { method: 'POST' }),
    () => Promise.all([refreshHealth(), refreshGame(id)]));
}
$('alert-list').addEventListener('click', takeVenue);
$('venues').addEventListener('click', takeVenue);

// A clash settled: the held-back game goes on the board typed; the venue's later versions
// follow it there. The new game comes into the round with the next reads.
function placeClash(event) {
  const form = event.target.closest('form.settle-form');
  if (!form) return;
  event.preventDefault();
  const board = Number(form.querySelector('.settle-board').value);
  const what = `Placing the game held back from board ${form.dataset.board}`;
  if (!Number.isInteger(board) || board < 1 || board > 99999) {
    showError(what, new Error('give a free board number, from 1 to 99999.'));
    return;
  }
  const body = { origin: form.dataset.origin, game_id: Number(form.dataset.gameId), board_no: board };
  run(form.querySelector('button'), `${what} on board ${board}`,
    () => adminFetch('api/push/settle', { method: 'POST', body }),
    () => Promise.all([refreshHealth(), refreshRound()]));
}
$('alert-list').addEventListener('submit', placeClash);
$('venues').addEventListener('submit', placeClash);
