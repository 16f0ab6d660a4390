// Arbiter console: the e-boards at a glance with alerts for new problems, and
// the round's games with the arbiter's actions (confirm or set a result,
// truncate, replace a move or the whole game, audit trail, final PGN); an
// e-board can be put on a board of the round or made to go on from its
// position; the round's pairings, delay and "final" mark are set below.
// Above them, the push state from /health: where this relay pushes to, which
// venues push here, and the games either side holds back (conflicts).
//
// Reading is public; actions send the admin token. Rows are kept per id and
// updated in place, so a live update never wipes a number being typed.

import {
  ApiError, getJSON, adminFetch, adminJSON, getToken, setToken, liveSocket, applyGameEvent, showStatus, serverNow,
} from './api.js';
import { renderBoard, parsePlacement } from './board.js';
import {
  el, formatResult, formatTimeOfDay, formatDuration, lastMoveLabel, moveLabel, playerText,
} from './format.js';

const $ = (id) => document.getElementById(id);
let roundId = new URLSearchParams(location.search).get('round');
// Opened without ?round=, the console follows the newest round: when an e-board moves on to
// a newer round (the next game on a board with no pairings, or the next round's pairings),
// the console goes with it. A round picked by hand stays.
const followNewest = !roundId;
let socket = null;

const games = new Map(); // game id → GameView (this round)
const gameRows = new Map(); // game id → <tr>
const otherGames = new Map(); // game id → GameView of another round, for an e-board's position
const eboards = new Map(); // serial → EboardView
const eboardRows = new Map(); // serial → <tr>

const read = (url) => (getToken() ? adminJSON(url) : getJSON(url));

// ---- errors and the token ---------------------------------------------------

function errorText(what, err) {
  let text = `${what}: ${err.message}`;
  if (err.status === 401) text += ' Enter the admin token above.';
  if (err.status === 403) text += ' The token was refused.';
  if (err.status === 413) text += ' The upload is too large.';
  return text;
}

function showError(what, err) {
  if (err.status === 401 || err.status === 403) $('token').focus();
  $('error').textContent = errorText(what, err);
  $('error').hidden = false;
}

/** A message under one of the round's forms (errors there stay next to the form). */
function formMessage(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle('error-text', isError);
}

// The server takes request bodies up to 8 MiB.
const MAX_UPLOAD = 8 * 1024 * 1024;

/** The text of a chosen file, or an Error that says why not. */
async function fileText(file) {
  if (file.size > MAX_UPLOAD) throw new Error(`${file.name} is larger than 8 MB, more than the server takes.`);
  try {
    return await file.text();
  } catch {
    throw new Error(`${file.name} could not be read.`);
  }
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
  same_serial: 'same serial as another board',
};
const BATTERY_LOW = 20; // percent
const REASON_TEXT = { kings_in_centre: 'kings in the centre', magic_piece: 'magic piece', time_forfeit: 'time forfeit' };

function problemsOf(board) {
  const problems = [];
  if (!board.connected) problems.push('lost');
  if (board.in_sync === false) problems.push('out_of_sync');
  if ((board.battery != null && board.battery <= BATTERY_LOW) || board.clock_battery_low) problems.push('battery_low');
  if (board.clock === false) problems.push('no_clock');
  if (board.proposal) problems.push('proposal');
  if (board.warning) problems.push('same_serial');
  return problems;
}

const known = new Map(); // serial → Set of problem keys already alerted
// Not yet acknowledged: an e-board's {serial, boardNo, key, at, resolved}, or a push
// conflict's {conflict (its key), text, takeId, boardNo, at, resolved}.
let alerts = [];

/** Compares a board's problems with what was known and raises the new ones. */
function noteProblems(board) {
  const current = new Set(problemsOf(board));
  const before = known.get(board.serial) || new Set();
  known.set(board.serial, current);
  let resolved = false;
  for (const alert of alerts) {
    if (alert.serial === board.serial && !alert.resolved && !current.has(alert.key)) {
      alert.resolved = true;
      resolved = true;
    }
  }
  const fresh = [...current].filter((key) => !before.has(key));
  for (const key of fresh) {
    alerts.push({ serial: board.serial, boardNo: board.board_no, key, at: Date.now(), resolved: false });
  }
  if (fresh.length) beep();
  if (fresh.length || resolved) renderAlerts();
}

function alertItem(a) {
  const since = a.resolved ? ' (since resolved)' : '';
  if (a.conflict) {
    return el('li', {}, `${formatTimeOfDay(a.at)}: ${a.text}${since}`,
      a.takeId && !a.resolved ? takeVenueButton(a.takeId, a.boardNo) : null);
  }
  return el('li', {
    text: `${formatTimeOfDay(a.at)}: e-board ${a.serial}${a.boardNo ? ` (board ${a.boardNo})` : ''} ${PROBLEM_TEXT[a.key]}${since}`,
  });
}

function renderAlerts() {
  const shown = alerts.slice(-10).reverse().map(alertItem);
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

/** Whether the arbiter may have to say "go on from the board": lost track, or no game. */
const needsContinue = (board) => board.in_sync === false || (board.game_id == null && board.connected);

const inRound = (board) => roundId != null && board.round_id != null && String(board.round_id) === String(roundId);

// The row's cells are made once and filled on every update; the actions cell
// is never rebuilt, so a board number being typed or a focused control stays.
function createEboardRow(serial) {
  const cells = ['serial', 'game', 'connection', 'battery', 'clock', 'position', 'proposal']
    .map((name) => el('td', { class: `eb-${name}` }));
  const assign = el('form', { class: 'assign-form inline-form' },
    el('input', {
      type: 'number', class: 'assign-board', min: 1, max: 10000, step: 1, required: true, placeholder: 'board',
      'aria-label': `Board number in the selected round for e-board ${serial}`,
    }),
    el('button', { type: 'submit', class: 'assign', text: 'Put on board' }));
  const resume = el('form', { class: 'continue-form inline-form', hidden: true },
    el('select', { class: 'continue-turn', required: true, 'aria-label': `Side to move on e-board ${serial}` },
      el('option', { value: '', text: 'Side to move…' }),
      el('option', { value: 'white', text: 'White to move' }),
      el('option', { value: 'black', text: 'Black to move' })),
    el('button', { type: 'submit', class: 'continue', text: 'Continue from board' }));
  const row = el('tr', { 'data-serial': serial },
    ...cells, el('td', { class: 'eb-actions' }, el('div', { class: 'actions stacked' }, assign, resume)));
  eboardRows.set(serial, row);
  return row;
}

function renderEboard(board) {
  const row = eboardRows.get(board.serial) || createEboardRow(board.serial);
  const cell = (name) => row.querySelector(`.eb-${name}`);
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
    ? `${formatResult(board.proposal.result)} (${REASON_TEXT[board.proposal.reason] || board.proposal.reason})` +
      (board.proposal.moves_after > 0
        ? `, ${board.proposal.moves_after} ${board.proposal.moves_after === 1 ? 'ply' : 'plies'} played after it (from ply ${board.proposal.at_ply + 1})`
        : '')
    : '';
  cell('serial').replaceChildren(
    el('strong', { text: board.serial }), el('br'), el('span', { class: 'muted', text: board.port || '' }),
    ...(board.read_by ? [el('br'), el('span', { class: 'muted eb-reader', text: `read by ${board.read_by}` })] : []),
    ...(board.warning ? [el('br'), el('span', { class: 'eb-warning', role: 'alert', text: board.warning })] : []));
  cell('game').replaceChildren(board.game_id != null
    ? el('a', { href: `game.html?id=${board.game_id}`, text: board.board_no != null ? `Board ${board.board_no}` : 'game' })
    : el('span', { class: 'muted', text: 'no game' }));
  cell('connection').textContent = connection;
  // The board's own charge (Bluetooth boards report it) and the clock's battery warning.
  const charge = board.battery == null ? [] : [`${board.battery}%`];
  if (board.clock_battery_low) charge.push('clock battery low');
  cell('battery').textContent = charge.length ? charge.join(', ') : '–';
  // null: the board has not sent a clock reading yet.
  cell('clock').textContent = board.clock == null ? '…' : board.clock ? 'yes' : 'missing';
  cell('position').replaceChildren(board.in_sync === false ? el('span', {}, 'out of sync', positionPair(board)) : 'in sync');
  cell('proposal').textContent = proposal;

  const number = row.querySelector('.assign-board');
  number.placeholder = inRound(board) && board.board_no != null ? String(board.board_no) : 'board';
  for (const control of row.querySelectorAll('.assign-form input, .assign-form button')) control.disabled = !roundId;
  row.querySelector('.continue-form').hidden = !needsContinue(board);
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
    for (const board of list) await followEboard(board);
  } catch (err) {
    showError('Loading the e-boards', err);
  }
}

// ---- e-board actions -------------------------------------------------------------------

$('eboards').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const row = form.closest('tr[data-serial]');
  const board = row && eboards.get(row.dataset.serial);
  if (!board) return;
  if (form.classList.contains('assign-form')) assignEboard(form, board);
  else if (form.classList.contains('continue-form')) continueFromBoard(form, board);
});

async function assignEboard(form, board) {
  if (!roundId) return;
  const input = form.querySelector('.assign-board');
  const boardNo = Number(input.value);
  const what = `Putting e-board ${board.serial} on board ${input.value}`;
  if (!Number.isInteger(boardNo) || boardNo < 1 || boardNo > 10000) {
    showError(what, new Error('give a board number from 1 to 10000.'));
    return;
  }
  // Ask first when this would take the e-board off a game or another e-board off this board.
  const notes = [];
  if (board.game_id != null) {
    const now = board.board_no != null ? `board ${board.board_no}` : 'a game';
    if (!(inRound(board) && board.board_no === boardNo)) notes.push(`It is on ${now}${inRound(board) ? '' : ' of another round'} now.`);
  }
  const other = [...eboards.values()].find((b) => b.serial !== board.serial && inRound(b) && b.board_no === boardNo);
  if (other) notes.push(`E-board ${other.serial} is on board ${boardNo} now.`);
  if (notes.length && !window.confirm(`Put e-board ${board.serial} on board ${boardNo} of ${roundName()}?\n\n${notes.join(' ')}`)) return;
  const done = await run(form.querySelector('button'), what,
    () => adminFetch(`api/rounds/${roundId}/boards/${boardNo}`, { method: 'PUT', body: { serial: board.serial } }),
    () => Promise.all([refreshRound(), refreshEboards()]));
  if (done) input.value = '';
}

async function continueFromBoard(form, board) {
  const select = form.querySelector('.continue-turn');
  const turn = select.value;
  if (turn !== 'white' && turn !== 'black') {
    select.focus();
    return;
  }
  const side = turn === 'white' ? 'White' : 'Black';
  const where = board.board_no != null ? ` (board ${board.board_no})` : '';
  const before = board.game_id != null
    ? 'The moves recorded so far are kept only in a comment: the game starts again from this position.'
    : 'The e-board has no game now: one starts from this position.';
  const question = `Continue e-board ${board.serial}${where} from the position on the board, ${side} to move?\n\n`
    + `The game goes on from the pieces as they stand on the e-board now. ${before} `
    + 'No castling rights are carried over. Check that the pieces are right before you go on.';
  if (!window.confirm(question)) return;
  const done = await run(form.querySelector('button'), `Continuing e-board ${board.serial}`,
    () => adminFetch(`api/eboards/${encodeURIComponent(board.serial)}/continue`, { method: 'POST', body: { turn } }),
    () => Promise.all([refreshRound(), refreshEboards()]));
  if (done) select.value = '';
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
      el('form', { class: 'replace-form inline-form' },
        el('input', {
          type: 'number', class: 'replace-ply', min: 1, step: 1, required: true, placeholder: 'ply',
          'aria-label': 'Ply of the move to replace',
        }),
        el('input', {
          type: 'text', class: 'replace-san', required: true, placeholder: 'Nf3', autocomplete: 'off',
          spellcheck: 'false', maxlength: 10, 'aria-label': 'New move, in SAN (like Nf3)',
        }),
        el('button', { type: 'submit', class: 'replace-move', text: 'Replace move' })),
      button('upload-pgn', 'Upload PGN…', { title: 'Replace the whole game by a PGN file' }),
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
  cell('replace-ply').max = game.moves.length + 1;

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
  if (isNew && place) schedulePlaceGames();
  for (const board of eboards.values()) if (board.game_id === game.id && board.in_sync === false) renderEboard(board);
}

// Loading pairings announces every game of the round at once, a message each: placing
// 700 rows for each of 700 messages froze the page for many seconds. New rows are placed
// once the burst has been read.
let placing = null;
function schedulePlaceGames() {
  if (!placing) placing = setTimeout(() => { placing = null; placeGames(); }, 16);
}

function placeGames() {
  const sorted = [...games.values()].sort((a, b) => a.board_no - b.board_no);
  $('games').tBodies[0].replaceChildren(...sorted.map((g) => gameRows.get(g.id)));
}

let currentRound = null; // the selected round as last read: number, delay_secs, final

const roundName = () => (currentRound ? `Round ${currentRound.number}` : 'this round');

function setRound(round) {
  currentRound = round;
  showRoundSettings(round);
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

async function refreshRound() {
  if (!roundId) return;
  try { setRound(await read(`api/rounds/${roundId}`)); } catch (err) { showError('Loading the round', err); }
}

async function refreshGame(id) {
  try { upsertGame(await read(`api/games/${id}`)); } catch { /* the socket will catch up */ }
}

// ---- actions ---------------------------------------------------------------------

/** Runs an admin request with its button disabled; then `after`. True if it worked. */
async function run(button, what, request, after) {
  button.disabled = true;
  try {
    await request();
    $('error').hidden = true;
  } catch (err) {
    showError(what, err);
    return false;
  } finally {
    button.disabled = false;
  }
  await after();
  return true;
}

function act(button, what, request, gameId) {
  return run(button, what, request, () => Promise.all([refreshGame(gameId), refreshEboards()]));
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
  } else if (button.classList.contains('upload-pgn')) {
    choosePgn(button, id);
  } else if (button.classList.contains('show-audit')) {
    showAudit(game);
  }
});

// Replace one move: Enter in either field or the button submits.
$('games').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const row = form.closest('tr[data-game-id]');
  if (!row || !form.classList.contains('replace-form')) return;
  const id = Number(row.dataset.gameId);
  const game = games.get(id);
  const where = `board ${game.board_no}`;
  const ply = Number(form.querySelector('.replace-ply').value);
  const san = form.querySelector('.replace-san').value.trim();
  const last = game.moves.length;
  if (!Number.isInteger(ply) || ply < 1 || ply > last + 1) {
    showError(`Replacing a move on ${where}`, new Error(`give a ply between 1 and ${last + 1}.`));
    return;
  }
  if (!san) {
    showError(`Replacing a move on ${where}`, new Error('give the new move in SAN, like Nf3.'));
    return;
  }
  const old = game.moves.find((m) => m.ply === ply);
  const next = moveLabel(ply, san, game.start_fen);
  const question = old
    ? `Replace ${moveLabel(old.ply, old.san, game.start_fen)} on ${where} by ${next}?\n\nThe later moves are kept as long as they are still legal.`
    : `Add ${next} as the next move on ${where}?`;
  if (!window.confirm(question)) return;
  act(form.querySelector('.replace-move'), `Replacing ply ${ply} on ${where}`,
    () => adminFetch(`api/games/${id}/move`, { method: 'POST', body: { ply, san } }), id)
    .then((done) => { if (done) form.reset(); });
});

/** Upload PGN: a file picker opened from the button, then a confirmation. */
function choosePgn(button, id) {
  const picker = el('input', { type: 'file', accept: '.pgn,application/x-chess-pgn,text/plain' });
  picker.addEventListener('change', async () => {
    const file = picker.files[0];
    const game = games.get(id);
    if (!file || !game) return;
    const where = `board ${game.board_no}`;
    let text;
    try {
      text = await fileText(file);
    } catch (err) {
      showError(`Uploading the PGN of ${where}`, err);
      return;
    }
    const question = `Replace the whole game on ${where} (${playerText(game.white)} – ${playerText(game.black)}, `
      + `${game.moves.length} plies now) by the game in ${file.name}?\n\n`
      + 'The PGN must start from the same position as the game; its moves replace every recorded move.';
    if (!window.confirm(question)) return;
    act(button, `Uploading the PGN of ${where}`,
      () => adminFetch(`api/games/${id}/pgn`, { method: 'PUT', text, type: 'application/x-chess-pgn' }), id);
  });
  picker.click();
}

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

// ---- round settings: delay and final ------------------------------------------------

let delayEdited = false; // a delay typed but not saved is not overwritten by an update
$('delay-secs').addEventListener('input', () => { delayEdited = true; });

function showRoundSettings(round) {
  $('round-admin').hidden = false;
  const delay = Number(round.delay_secs) || 0;
  if (!delayEdited && document.activeElement !== $('delay-secs')) $('delay-secs').value = delay;
  $('delay-current').textContent = delay
    ? `Now ${delay} s${delay >= 60 ? ` (${formatDuration(delay * 1000)})` : ''}: spectators see the games this long after the moves.`
    : 'Now none: spectators see the moves as they are made.';
  $('final-state').textContent = round.final ? 'This round is marked final.' : 'This round is not marked final.';
  $('final-toggle').textContent = round.final ? 'Reopen round' : 'Mark round final';
}

async function editRound(button, change, done) {
  const msg = $('round-settings-msg');
  button.disabled = true;
  try {
    await adminFetch(`api/rounds/${roundId}`, { method: 'PATCH', body: change });
    if ('delay_secs' in change) delayEdited = false;
    await refreshRound();
    formMessage(msg, done);
  } catch (err) {
    formMessage(msg, errorText('Saving the round settings', err), true);
  } finally {
    button.disabled = false;
  }
}

$('round-settings').addEventListener('submit', (event) => {
  event.preventDefault();
  if (!roundId) return;
  const delay = Number($('delay-secs').value);
  if ($('delay-secs').value === '' || !Number.isInteger(delay) || delay < 0 || delay > 3600) {
    formMessage($('round-settings-msg'), 'Give the delay in whole seconds, from 0 to 3600.', true);
    $('delay-secs').focus();
    return;
  }
  editRound($('delay-save'), { delay_secs: delay }, `Delay of ${roundName()} set to ${delay} s.`);
});

$('final-toggle').addEventListener('click', () => {
  if (!roundId || !currentRound) return;
  const final = !currentRound.final;
  const question = final
    ? `Mark ${roundName()} final?\n\nA final round is finished: relay no longer takes it as the round being played, `
      + 'and e-boards are not resumed in it after a restart.'
    : `Reopen ${roundName()}? It is then no longer marked final.`;
  if (!window.confirm(question)) return;
  editRound($('final-toggle'), { final }, final ? `${roundName()} is marked final.` : `${roundName()} is open again.`);
});

// ---- pairings ----------------------------------------------------------------------

/** "json" or "pgn": by the file's name, else by the text (a PGN starts with a tag, "[Event …"). */
function pairingsFormat(text, name) {
  if (/\.json$/i.test(name)) return 'json';
  if (/\.pgn$/i.test(name)) return 'pgn';
  return /^\s*\[\s*[{\]]/.test(text) ? 'json' : 'pgn';
}

$('pairings-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!roundId) return;
  const msg = $('pairings-msg');
  const button = $('pairings-upload');
  const file = $('pairings-file').files[0];
  let text;
  try {
    text = file ? await fileText(file) : $('pairings-text').value;
  } catch (err) {
    formMessage(msg, err.message, true);
    return;
  }
  if (!text.trim()) {
    formMessage(msg, 'Choose a pairings file or paste the pairings first.', true);
    return;
  }
  const chosen = $('pairings-format').value;
  const format = chosen === 'auto' ? pairingsFormat(text, file ? file.name : '') : chosen;
  if (format === 'json') {
    // Checked here too, for a quicker and clearer answer than the server's.
    let list;
    try { list = JSON.parse(text); } catch (err) {
      formMessage(msg, `The pairings are not valid JSON: ${err.message}`, true);
      return;
    }
    if (!Array.isArray(list)) {
      formMessage(msg, 'The JSON must be a list of boards: [{"board_no":1,"white":{…},"black":{…}}, …].', true);
      return;
    }
  }
  if (games.size && !window.confirm(`Load these pairings into ${roundName()}?\n\n`
    + 'The players of boards already in the round are replaced by the ones in the pairings.')) return;
  button.disabled = true;
  formMessage(msg, 'Loading the pairings…');
  try {
    const answer = await adminJSON(`api/rounds/${roundId}/pairings`, {
      method: 'PUT', text, type: format === 'json' ? 'application/json' : 'application/x-chess-pgn',
    });
    const count = answer && Array.isArray(answer.games) ? answer.games.length : 0;
    $('pairings-file').value = '';
    $('pairings-text').value = '';
    await refreshRound();
    formMessage(msg, `Pairings loaded from ${format.toUpperCase()}: ${count} ${count === 1 ? 'board' : 'boards'}.`);
  } catch (err) {
    formMessage(msg, errorText('Loading the pairings', err), true);
  } finally {
    button.disabled = false;
  }
});

// ---- push: upstream targets and venues ----------------------------------------------

// /health is read every 2 s: it is small, needs no token, and is the only place the push
// state is told (the round's socket does not carry it).
const HEALTH_EVERY_MS = 2000;
// A target that answers is asked at least every 10 s (the pusher's heartbeat), so no
// success for 30 s means requests hang even if none has failed yet.
const RECENT_MS = 30000;

const upstreamRows = new Map(); // kind and target → <tr>
const venueRows = new Map(); // origin → <tr>
let knownConflicts = new Set(); // keys of the conflicts already alerted

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

function takeVenueButton(gameId, boardNo) {
  return el('button', {
    type: 'button', class: 'take-venue', 'data-game-id': gameId, 'data-board': boardNo || null,
    text: 'Take the venue\'s version',
  });
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

// The conflicts cell is rebuilt only when its conflicts change, not on every read, so a
// "Take the venue's version" button keeps focus and its disabled state across reads.
function fillConflicts(cell, conflicts, takeable) {
  const sig = JSON.stringify(conflicts);
  if (cell.dataset.sig === sig) return;
  cell.dataset.sig = sig;
  if (!conflicts.length) {
    cell.replaceChildren(el('span', { class: 'muted', text: 'none' }));
    return;
  }
  cell.replaceChildren(el('strong', { text: String(conflicts.length) }),
    el('ul', { class: 'conflicts' }, ...conflicts.map((c) => el('li', {}, conflictText(c),
      takeable && c.cloud_game_id ? takeVenueButton(c.cloud_game_id, c.board_no) : null))));
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
  fillConflicts(cell('conflicts'), t.conflicts || [], false);
}

function renderVenueRow(row, v, now) {
  const cell = (name) => row.querySelector(`.push-${name}`);
  const name = cell('name');
  name.textContent = v.name;
  name.title = `origin ${v.origin}`;
  const batch = cell('batch');
  batch.textContent = `${ago(v.applied_at_ms, now)} (batch ${v.batch})`;
  batch.title = formatTimeOfDay(v.applied_at_ms);
  fillConflicts(cell('conflicts'), v.conflicts || [], true);
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

/** Compares the conflicts with those already alerted and raises the new ones. */
function noteConflicts(current) {
  const keys = new Set(current.map((c) => c.key));
  let resolved = false;
  for (const alert of alerts) {
    if (alert.conflict && !alert.resolved && !keys.has(alert.conflict)) {
      alert.resolved = true;
      resolved = true;
    }
  }
  const fresh = current.filter((c) => !knownConflicts.has(c.key));
  knownConflicts = keys;
  for (const c of fresh) {
    alerts.push({ conflict: c.key, text: c.text, takeId: c.takeId, boardNo: c.boardNo, at: Date.now(), resolved: false });
  }
  if (fresh.length) beep();
  if (fresh.length || resolved) renderAlerts();
}

function showPush(health) {
  const now = serverNow(); // the times in /health are the server's
  const upstream = Array.isArray(health.upstream) ? health.upstream : [];
  const venues = Array.isArray(health.pushed_from) ? health.pushed_from : [];
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

// The next read is asked for once the last one is answered, so a slow server is not
// asked again and again.
async function pollHealth() {
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

// ---- live -----------------------------------------------------------------------

function onMessage(msg) {
  if (msg.type === 'snapshot' && msg.round) return setRound(msg.round);
  if (msg.type === 'game' && msg.game) return upsertGame(msg.game);
  if (msg.type === 'eboard' && msg.eboard) {
    upsertEboard(msg.eboard);
    placeEboards();
    return followEboard(msg.eboard);
  }
  const game = games.get(msg.game_id);
  if (!game) return;
  const changed = applyGameEvent(game, msg);
  if (changed === 'gap') socket.resync();
  else if (changed && msg.type !== 'clock') upsertGame(game);
}

/** Fills the round picker; with no round chosen, picks the newest. */
async function loadRounds() {
  try {
    const tournaments = await getJSON('api/tournaments');
    const rounds = tournaments.flatMap((t) => t.rounds.map((r) => ({ t, r })));
    if (!roundId && rounds.length) roundId = String(Math.max(...rounds.map(({ r }) => r.id)));
    const select = $('round-select');
    select.replaceChildren(...rounds.map(({ t, r }) => el('option', { value: r.id, text: `${t.name}: Round ${r.number}` })));
    select.value = roundId;
  } catch (err) {
    showError('Loading the tournaments', err);
  }
}

/** Loads the round; returns its change number, to follow it live from. */
async function loadRound() {
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
  return since;
}

function listen(since) {
  if (roundId) socket = liveSocket(`api/rounds/${roundId}/ws?eboards=1`, onMessage, showStatus, { since });
}

let moving = false;

/** An e-board now in a newer round than the one followed takes a console that follows the newest round with it. */
async function followEboard(board) {
  if (!followNewest || moving || board.round_id == null) return;
  if (roundId != null && Number(board.round_id) <= Number(roundId)) return;
  moving = true;
  try {
    if (socket) socket.close();
    socket = null;
    roundId = String(board.round_id);
    await loadRounds();
    listen(await loadRound());
    // Rows drawn against the old round (which board is "in the round") are drawn again.
    for (const b of eboards.values()) renderEboard(b);
  } finally {
    moving = false;
  }
}

async function start() {
  tokenState();
  pollHealth();
  if (!getToken()) $('token').focus();
  await loadRounds();
  $('round-select').addEventListener('change', () => { location.search = `?round=${$('round-select').value}`; });
  // The round first: the e-boards table draws its games' positions.
  const since = await loadRound();
  await refreshEboards();
  setInterval(refreshEboards, 15000); // also keeps "lost since (… min)" current
  // (Unless an e-board already took the console to a newer round.)
  if (!socket) listen(since);
}

start();
