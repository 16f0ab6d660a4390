// The e-boards table: a row per e-board with its connection, battery, clock, position
// (beside the game's when it is out of sync) and a result it proposes. The row's cells are
// made once and filled on every update; the actions cell is never rebuilt, so a board
// number being typed or a focused control stays. (Its forms: eboard-actions.js.)

import { renderBoard, parsePlacement } from '../board.js';
import { el, formatResult, formatTimeOfDay, formatDuration, playerParts } from '../format.js';
import { problemsOf, hasAlert, REASON_TEXT } from './alerts.js';
import { $ } from './page.js';
import { roundId, games, otherGames, eboards, eboardRows, read, inRound } from './state.js';

/** @typedef {import('../../types/ws-messages').EboardView} EboardView */

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

/**
 * The board as read next to the game's position, differing squares marked.
 * @param {EboardView} board
 */
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

/**
 * Whether the arbiter may have to say "go on from the board": lost track, or no game.
 * @param {EboardView} board
 */
const needsContinue = (board) => board.in_sync === false || (board.game_id == null && board.connected);

function createEboardRow(serial) {
  const cells = ['serial', 'game', 'connection', 'battery', 'clock', 'position', 'proposal']
    .map((name) => el('td', { class: `eb-${name}` }));
  const assign = el('form', { class: 'assign-form inline-form' },
    el('input', {
      type: 'number', class: 'assign-board', min: 1, max: 10000, step: 1, required: true, placeholder: 'board',
      list: 'pairing-boards', 'aria-label': `Board number in the selected round for e-board ${serial}`,
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

/** @param {EboardView} board */
export function renderEboard(board) {
  const row = eboardRows.get(board.serial) || createEboardRow(board.serial);
  const cell = (name) => row.querySelector(`.eb-${name}`);
  const problems = problemsOf(board);
  row.dataset.problems = problems.join(' ');
  row.classList.toggle('problem', problems.length > 0);
  row.classList.toggle('serious', problems.includes('lost') || problems.includes('out_of_sync'));
  row.classList.toggle('alert-new', hasAlert(board.serial));

  const now = Date.now();
  let connection = 'connected';
  if (!board.connected) {
    connection = board.lost_since_ms
      ? `lost since ${formatTimeOfDay(board.lost_since_ms)} (${formatDuration(now - board.lost_since_ms)})`
      : 'not connected';
    // A USB board takes its power from the cable: unplugged, it records nothing, so its
    // memory will not fill the gap (a Bluetooth or serial board on its own supply does).
    if (/tty(ACM|USB)/.test(board.port || '')) connection += ' (if this is a USB board: without its cable it has no power and records nothing meanwhile)';
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
    ...(board.warning ? [el('br'), el('span', { class: 'eb-warning', role: 'alert', text: board.warning })] : []),
    // What the board's own memory gave when it was read again after a gap.
    ...(board.memory ? [el('br'), el('span', { class: 'eb-memory', text: board.memory })] : []));
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
  // An e-board on no board of this round is offered the first paired board still without
  // one: a single click on "Put on board" puts it there.
  if (!inRound(board) && !number.value && document.activeElement !== number) {
    // The k-th such e-board (by serial) is offered the k-th free board.
    const waiting = [...eboards.values()].filter((b) => !inRound(b)).map((b) => b.serial).sort();
    const free = freePairedBoards()[waiting.indexOf(board.serial)];
    if (free) number.value = String(free.board_no);
  }
  for (const control of row.querySelectorAll('.assign-form input, .assign-form button')) control.disabled = !roundId;
  row.querySelector('.continue-form').hidden = !needsContinue(board);
}

/** Whether a game's player has a name (a paired board). */
const named = (player) => Boolean(playerParts(player).name !== 'N.N.');

/** The round's paired boards (players known) that no e-board of the round is on, by number. */
export function freePairedBoards() {
  const taken = new Set([...eboards.values()].filter(inRound).map((b) => b.board_no));
  return [...games.values()]
    .filter((g) => (named(g.white) || named(g.black)) && !taken.has(g.board_no) && g.moves.length === 0)
    .sort((a, b) => a.board_no - b.board_no);
}

/** The board numbers offered while typing one: the pairings beside the e-boards. */
export function listPairings() {
  const list = $('pairing-boards');
  list.replaceChildren(...freePairedBoards().map((g) => el('option', {
    value: String(g.board_no), label: `${playerParts(g.white).name} – ${playerParts(g.black).name}`,
  })));
}

/** Puts the rows in board order, e-boards on no board last. */
export function placeEboards() {
  const sorted = [...eboards.values()].sort((a, b) => (a.board_no ?? 1e9) - (b.board_no ?? 1e9) || a.serial.localeCompare(b.serial));
  $('eboards').tBodies[0].replaceChildren(...sorted.map((b) => eboardRows.get(b.serial)));
  listPairings();
}
