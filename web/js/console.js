// Arbiter console: the e-boards at a glance with alerts for new problems, and
// the round's games with the arbiter's actions (confirm or set a result,
// truncate, audit trail, final PGN).
//
// Reading is public; actions send the admin token. Rows are kept per id and
// updated in place, so a live update never wipes a number being typed.

import {
  getJSON, adminFetch, adminJSON, getToken, setToken, liveSocket, applyGameEvent, showStatus,
} from './api.js';
import { renderBoard, parsePlacement } from './board.js';
import {
  el, formatResult, formatTimeOfDay, formatDuration, lastMoveLabel, moveLabel, playerText,
} from './format.js';

const $ = (id) => document.getElementById(id);
let roundId = new URLSearchParams(location.search).get('round');
let socket = null;

const games = new Map(); // game id → GameView (this round)
const gameRows = new Map(); // game id → <tr>
const otherGames = new Map(); // game id → GameView of another round, for an e-board's position
const eboards = new Map(); // serial → EboardView
const eboardRows = new Map(); // serial → <tr>

const read = (url) => (getToken() ? adminJSON(url) : getJSON(url));

// ---- errors and the token ---------------------------------------------------

function showError(what, err) {
  let text = `${what}: ${err.message}`;
  if (err.status === 401) text += ' Enter the admin token above.';
  if (err.status === 403) text += ' The token was refused.';
  if (err.status === 401 || err.status === 403) $('token').focus();
  $('error').textContent = text;
  $('error').hidden = false;
}

function tokenState() {
  $('token-state').textContent = getToken() ? 'Token saved in this browser.' : 'The actions below need the token.';
}

$('token').value = getToken();
$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setToken($('token').value.trim());
  $('error').hidden = true;
  tokenState();
});
$('token-forget').addEventListener('click', () => {
  setToken('');
  $('token').value = '';
  tokenState();
});

// ---- sound ----------------------------------------------------------------------

// Browsers only allow audio after the user has interacted with the page, so
// the AudioContext is made (or resumed) on the first click or key press.
let audio = null;
let lastBeep = 0;

function unlockAudio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!audio && Context) audio = new Context();
  if (audio && audio.state === 'suspended') audio.resume();
}
document.addEventListener('pointerdown', unlockAudio);
document.addEventListener('keydown', unlockAudio);

function beep() {
  if (!audio || audio.state !== 'running' || !$('sound').checked) return;
  if (Date.now() - lastBeep < 1500) return; // one beep for a burst of problems
  lastBeep = Date.now();
  const t = audio.currentTime;
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.frequency.value = 880;
  gain.gain.setValueAtTime(0.0001, t);
  gain.gain.exponentialRampToValueAtTime(0.3, t + 0.02);
  gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.25);
  osc.connect(gain).connect(audio.destination);
  osc.start(t);
  osc.stop(t + 0.3);
}

// ---- problems and alerts --------------------------------------------------------

const PROBLEM_TEXT = {
  lost: 'lost', out_of_sync: 'out of sync', battery_low: 'battery low', no_clock: 'no clock', proposal: 'result proposed',
};
const BATTERY_LOW = 20; // percent
const REASON_TEXT = { kings_in_centre: 'kings in the centre', magic_piece: 'magic piece', time_forfeit: 'time forfeit' };

function problemsOf(board) {
  const problems = [];
  if (!board.connected) problems.push('lost');
  if (board.in_sync === false) problems.push('out_of_sync');
  if (board.battery != null && board.battery <= BATTERY_LOW) problems.push('battery_low');
  if (board.clock === false) problems.push('no_clock');
  if (board.proposal) problems.push('proposal');
  return problems;
}

const known = new Map(); // serial → Set of problem keys already alerted
let alerts = []; // not yet acknowledged: {serial, boardNo, key, at, resolved}

/** Compares a board's problems with what was known and raises the new ones. */
function noteProblems(board) {
  const current = new Set(problemsOf(board));
  const before = known.get(board.serial) || new Set();
  known.set(board.serial, current);
  for (const alert of alerts) {
    if (alert.serial === board.serial && !current.has(alert.key)) alert.resolved = true;
  }
  const fresh = [...current].filter((key) => !before.has(key));
  for (const key of fresh) {
    alerts.push({ serial: board.serial, boardNo: board.board_no, key, at: Date.now(), resolved: false });
  }
  if (fresh.length) {
    beep();
    renderAlerts();
  }
}

function renderAlerts() {
  const shown = alerts.slice(-10).reverse().map((a) => el('li', {
    text: `${formatTimeOfDay(a.at)}: e-board ${a.serial}${a.boardNo ? ` (board ${a.boardNo})` : ''} ${PROBLEM_TEXT[a.key]}${a.resolved ? ' (since resolved)' : ''}`,
  }));
  if (alerts.length > 10) shown.push(el('li', { text: `and ${alerts.length - 10} more` }));
  $('alert-list').replaceChildren(...shown);
  $('alert-banner').hidden = alerts.length === 0;
  for (const [serial, row] of eboardRows) row.classList.toggle('alert-new', alerts.some((a) => a.serial === serial));
}

$('alert-ack').addEventListener('click', () => {
  alerts = [];
  renderAlerts();
});

// ---- e-boards ---------------------------------------------------------------------

function gameFen(id) {
  const game = games.get(id) || otherGames.get(id);
  if (game) return game.fen;
  // A game of another round: fetch it once, then draw the row again.
  otherGames.set(id, { fen: null });
  read(`api/games/${id}`).then((g) => {
    otherGames.set(id, g);
    const board = [...eboards.values()].find((b) => b.game_id === id);
    if (board) renderEboard(board);
  }).catch(() => {});
  return null;
}

/** The board as read next to the game's position, differing squares marked. */
function positionPair(board) {
  const fen = board.game_id != null ? gameFen(board.game_id) : null;
  const marks = [];
  if (fen) {
    const seen = parsePlacement(board.board_fen);
    const expected = parsePlacement(fen);
    for (let r = 0; r < 8; r++) {
      for (let f = 0; f < 8; f++) if (seen[r][f] !== expected[r][f]) marks.push('abcdefgh'[f] + (8 - r));
    }
  }
  const figure = (caption, placement) => el('figure', {},
    renderBoard(placement, { size: 140, marks, label: `${caption}: e-board ${board.serial}` }),
    el('figcaption', { text: caption }));
  return el('div', { class: 'pair' },
    figure('on the board', board.board_fen),
    fen ? figure('in the game', fen) : el('p', { class: 'muted', text: 'game position not loaded' }));
}

function renderEboard(board) {
  let row = eboardRows.get(board.serial);
  if (!row) {
    row = el('tr', { 'data-serial': board.serial });
    eboardRows.set(board.serial, row);
  }
  const problems = problemsOf(board);
  row.dataset.problems = problems.join(' ');
  row.classList.toggle('problem', problems.length > 0);
  row.classList.toggle('serious', problems.includes('lost') || problems.includes('out_of_sync'));
  row.classList.toggle('alert-new', alerts.some((a) => a.serial === board.serial));

  const now = Date.now();
  let connection = 'connected';
  if (!board.connected) {
    connection = board.lost_since_ms
      ? `lost since ${formatTimeOfDay(board.lost_since_ms)} (${formatDuration(now - board.lost_since_ms)})`
      : 'not connected';
  }
  const proposal = board.proposal
    ? `${formatResult(board.proposal.result)} (${REASON_TEXT[board.proposal.reason] || board.proposal.reason})`
    : '';
  row.replaceChildren(
    el('td', {}, el('strong', { text: board.serial }), el('br'), el('span', { class: 'muted', text: board.port || '' })),
    el('td', {}, board.game_id != null
      ? el('a', { href: `game.html?id=${board.game_id}`, text: board.board_no != null ? `Board ${board.board_no}` : 'game' })
      : el('span', { class: 'muted', text: 'no game' })),
    el('td', { text: connection }),
    el('td', { text: board.battery == null ? '–' : `${board.battery}%` }),
    el('td', { text: board.clock ? 'yes' : 'missing' }),
    el('td', {}, board.in_sync === false ? el('span', {}, 'out of sync', positionPair(board)) : 'in sync'),
    el('td', { text: proposal }));
}

function upsertEboard(board) {
  eboards.set(board.serial, board);
  noteProblems(board);
  renderEboard(board);
  if (board.game_id != null && games.has(board.game_id)) renderGameRow(games.get(board.game_id));
}

function placeEboards() {
  const sorted = [...eboards.values()].sort((a, b) => (a.board_no ?? 1e9) - (b.board_no ?? 1e9) || a.serial.localeCompare(b.serial));
  $('eboards').tBodies[0].replaceChildren(...sorted.map((b) => eboardRows.get(b.serial)));
}

async function refreshEboards() {
  try {
    const list = await read('api/eboards');
    const serials = new Set(list.map((b) => b.serial));
    for (const serial of [...eboards.keys()]) {
      if (serials.has(serial)) continue;
      eboards.delete(serial);
      eboardRows.delete(serial);
      known.delete(serial);
    }
    for (const board of list) upsertEboard(board);
    placeEboards();
  } catch (err) {
    showError('Loading the e-boards', err);
  }
}

// ---- games -------------------------------------------------------------------------

function proposalFor(gameId) {
  for (const board of eboards.values()) if (board.game_id === gameId && board.proposal) return board.proposal;
  return null;
}

function createGameRow(game) {
  const button = (cls, text, data = {}) => el('button', { type: 'button', class: cls, text, ...data });
  const row = el('tr', { 'data-game-id': game.id },
    el('td', { class: 'board-no' }), el('td', { class: 'white' }), el('td', { class: 'black' }),
    el('td', { class: 'plies' }), el('td', { class: 'result' }), el('td', { class: 'status' }),
    el('td', {}, el('div', { class: 'actions' },
      el('span', { class: 'confirm-slot' }),
      button('set-result', '1-0', { 'data-result': '1-0' }),
      button('set-result', '0-1', { 'data-result': '0-1' }),
      button('set-result', '½-½', { 'data-result': '1/2-1/2' }),
      el('input', { type: 'number', class: 'truncate-ply', min: 1, placeholder: 'ply', 'aria-label': 'Truncate from ply' }),
      button('truncate', 'Truncate'),
      button('show-audit', 'Audit'),
      el('a', { href: `api/games/${game.id}/pgn`, download: `game-${game.id}.pgn`, text: 'PGN' }))));
  gameRows.set(game.id, row);
  return row;
}

function renderGameRow(game) {
  const row = gameRows.get(game.id) || createGameRow(game);
  const cell = (cls) => row.querySelector(`.${cls}`);
  row.dataset.status = game.status;
  cell('board-no').textContent = game.board_no;
  cell('white').textContent = playerText(game.white);
  cell('black').textContent = playerText(game.black);
  const plies = game.moves.length;
  cell('plies').textContent = plies ? `${plies} ${plies === 1 ? 'ply' : 'plies'}, ${lastMoveLabel(game)}` : '–';
  cell('result').textContent = formatResult(game.result);
  cell('status').textContent = game.status;
  cell('result').dataset.result = game.result;
  cell('truncate-ply').max = game.moves.length;

  // The confirm button exists only while there is something to confirm; it is
  // rebuilt only when its text changes, so it keeps focus across updates.
  const proposal = proposalFor(game.id);
  let text = '';
  if (game.status !== 'confirmed') {
    if (proposal) text = `Confirm ${formatResult(proposal.result)} (${REASON_TEXT[proposal.reason] || proposal.reason})`;
    else if (game.status === 'finished' && game.result !== '*') text = `Confirm ${formatResult(game.result)}`;
  }
  const slot = cell('confirm-slot');
  if (slot.textContent !== text) {
    slot.replaceChildren(text ? el('button', { type: 'button', class: 'confirm-result primary', text }) : '');
  }
}

function upsertGame(game, place = true) {
  if (String(game.round_id) !== String(roundId)) return;
  games.set(game.id, game);
  const isNew = !gameRows.has(game.id);
  renderGameRow(game);
  if (isNew && place) placeGames();
  for (const board of eboards.values()) if (board.game_id === game.id && board.in_sync === false) renderEboard(board);
}

function placeGames() {
  const sorted = [...games.values()].sort((a, b) => a.board_no - b.board_no);
  $('games').tBodies[0].replaceChildren(...sorted.map((g) => gameRows.get(g.id)));
}

function setRound(round) {
  $('games-title').textContent = `Games: ${round.tournament}, Round ${round.number}${round.final ? ' (final)' : ''}`;
  // Rows of games still in the round stay, with whatever is typed in them.
  const ids = new Set(round.games.map((g) => g.id));
  for (const id of [...games.keys()]) {
    if (ids.has(id)) continue;
    games.delete(id);
    gameRows.delete(id);
  }
  for (const game of round.games) upsertGame(game, false);
  placeGames();
}

async function refreshGame(id) {
  try { upsertGame(await read(`api/games/${id}`)); } catch { /* the socket will catch up */ }
}

// ---- actions ---------------------------------------------------------------------

async function act(button, what, request, gameId) {
  button.disabled = true;
  try {
    await request();
    $('error').hidden = true;
    await Promise.all([refreshGame(gameId), refreshEboards()]);
  } catch (err) {
    showError(what, err);
  } finally {
    button.disabled = false;
  }
}

$('games').addEventListener('click', (event) => {
  const button = event.target.closest('button');
  const row = button && button.closest('tr[data-game-id]');
  if (!row) return;
  const id = Number(row.dataset.gameId);
  const game = games.get(id);
  const where = `board ${game.board_no}`;

  if (button.classList.contains('confirm-result')) {
    act(button, `Confirming ${where}`, () => adminFetch(`api/games/${id}/confirm`, { method: 'POST' }), id);
  } else if (button.classList.contains('set-result')) {
    const result = button.dataset.result;
    if (!window.confirm(`Set the result of ${where} to ${formatResult(result)}?`)) return;
    act(button, `Setting the result of ${where}`,
      () => adminFetch(`api/games/${id}/result`, { method: 'POST', body: { result, termination: null } }), id);
  } else if (button.classList.contains('truncate')) {
    const ply = Number(row.querySelector('.truncate-ply').value);
    const move = game.moves.find((m) => m.ply === ply);
    if (!Number.isInteger(ply) || !move) {
      showError(`Truncating ${where}`, new Error(`give a ply between 1 and ${game.moves.length}.`));
      return;
    }
    const label = moveLabel(move.ply, move.san, game.start_fen);
    if (!window.confirm(`Remove ${label} and every later move on ${where}?`)) return;
    act(button, `Truncating ${where}`, () => adminFetch(`api/games/${id}/truncate`, { method: 'POST', body: { ply } }), id);
  } else if (button.classList.contains('show-audit')) {
    showAudit(game);
  }
});

async function showAudit(game) {
  try {
    const entries = await adminJSON(`api/games/${game.id}/audit`);
    $('audit-title').textContent = `Audit trail: board ${game.board_no}, ${playerText(game.white)} – ${playerText(game.black)}`;
    $('audit-rows').replaceChildren(...(entries.length ? entries.map((e) => el('tr', {},
      el('td', { text: new Date(e.at_ms).toLocaleString() }),
      el('td', { text: e.actor }),
      el('td', { text: e.action }),
      el('td', {}, el('code', { text: e.detail ?? '' })))) : [el('tr', {}, el('td', { colspan: 4, text: 'Nothing recorded.' }))]));
    $('audit').hidden = false;
    $('audit').scrollIntoView({ behavior: 'smooth' });
  } catch (err) {
    showError('Loading the audit trail', err);
  }
}

// The final PGN is admin-only (undelayed), so it is fetched with the token
// and handed to the browser as a Blob URL.
$('download-round-pgn').addEventListener('click', async (event) => {
  const button = event.currentTarget;
  if (!roundId) return;
  button.disabled = true;
  try {
    const blob = await (await adminFetch(`api/rounds/${roundId}/pgn`)).blob();
    const url = URL.createObjectURL(blob);
    const link = el('a', { href: url, download: `round-${roundId}-final.pgn` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (err) {
    showError('Downloading the round PGN', err);
  } finally {
    button.disabled = false;
  }
});

// ---- live -----------------------------------------------------------------------

function onMessage(msg) {
  if (msg.type === 'snapshot' && msg.round) return setRound(msg.round);
  if (msg.type === 'game' && msg.game) return upsertGame(msg.game);
  if (msg.type === 'eboard' && msg.eboard) {
    upsertEboard(msg.eboard);
    return placeEboards();
  }
  const game = games.get(msg.game_id);
  if (!game) return;
  const changed = applyGameEvent(game, msg);
  if (changed === 'gap') socket.resync();
  else if (changed && msg.type !== 'clock') upsertGame(game);
}

async function start() {
  tokenState();
  if (!getToken()) $('token').focus();
  try {
    const tournaments = await getJSON('api/tournaments');
    const rounds = tournaments.flatMap((t) => t.rounds.map((r) => ({ t, r })));
    if (!roundId && rounds.length) roundId = String(Math.max(...rounds.map(({ r }) => r.id)));
    const select = $('round-select');
    select.replaceChildren(...rounds.map(({ t, r }) => el('option', { value: r.id, text: `${t.name}: Round ${r.number}` })));
    select.value = roundId;
    select.addEventListener('change', () => { location.search = `?round=${select.value}`; });
  } catch (err) {
    showError('Loading the tournaments', err);
  }

  // The round first: the e-boards table draws its games' positions.
  let since;
  if (roundId) {
    try {
      const round = await read(`api/rounds/${roundId}`);
      setRound(round);
      since = round.seq;
    } catch (err) {
      showError('Loading the round', err);
    }
  } else {
    $('games-title').textContent = 'Games: no round yet';
  }
  await refreshEboards();
  setInterval(refreshEboards, 15000); // also keeps "lost since (… min)" current
  if (roundId) socket = liveSocket(`api/rounds/${roundId}/ws`, onMessage, showStatus, { since });
}

start();
