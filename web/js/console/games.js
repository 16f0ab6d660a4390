// The games table: a row per game of the round with its hall (on a cloud relay that venues
// in several halls push to), players, moves, result and status, and the arbiter's controls
// (their handlers: game-actions.js). Rows are kept per game and filled in place, so a live
// update never wipes a ply being typed.

import { serverNow } from '../api.js';
import { el, formatDuration, formatResult, lastMoveLabel, playerText } from '../format.js';
import { REASON_TEXT } from './alerts.js';
import { $ } from './page.js';
import { games, gameRows, eboards, venueOf } from './state.js';

/** @typedef {import('../../types/ws-messages').GameView} GameView */

function proposalFor(gameId) {
  for (const board of eboards.values()) if (board.game_id === gameId && board.proposal) return board.proposal;
  return null;
}

// ---- halls ------------------------------------------------------------------------

/** "hall-b · up", "hall-b · silent 42 s" (since its last request); '' for no venue. */
function hallText(venue, now) {
  if (!venue) return '';
  if (venue.link === 'up') return `${venue.name} · up`;
  return `${venue.name} · silent ${formatDuration(now - venue.applied_at_ms)}`;
}

/**
 * Fills a row's Hall cell from `venueOf`. Written only when it changes: with 700 boards
 * and /health read every 2 s, most reads change no cell at all.
 * @param {HTMLTableRowElement} row
 * @param {number} gameId
 */
function fillHall(row, gameId, now = serverNow()) {
  const cell = /** @type {HTMLTableCellElement} */ (row.querySelector('td.hall'));
  const venue = venueOf.get(gameId);
  const text = hallText(venue, now);
  if (cell.textContent === text) return;
  cell.textContent = text;
  if (venue) {
    cell.dataset.link = venue.link;
    cell.title = `pushed here by ${venue.name} (origin ${venue.origin})`;
  } else {
    delete cell.dataset.link;
    cell.title = '';
  }
}

let hallsShown = false; // whether some row may show a hall

/**
 * Draws every row's hall after `venueOf` was read again (push.js, from /health). The column
 * shows only while some venue pushes here: a relay reading its own boards has none, and
 * its rows are not gone through at all.
 * @param {boolean} anyVenue
 */
export function showHalls(anyVenue) {
  if (!anyVenue && !hallsShown) return;
  hallsShown = anyVenue;
  $('games').classList.toggle('with-halls', anyVenue);
  const now = serverNow();
  for (const [id, row] of gameRows) fillHall(row, id, now);
}

// ---- rows -------------------------------------------------------------------------

/** @param {GameView} game */
function createGameRow(game) {
  const button = (cls, text, data = {}) => el('button', { type: 'button', class: cls, text, ...data });
  const row = el('tr', { 'data-game-id': game.id },
    el('td', { class: 'board-no' }), el('td', { class: 'hall' }), el('td', { class: 'white' }), el('td', { class: 'black' }),
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

/** @param {GameView} game */
export function renderGameRow(game) {
  const row = gameRows.get(game.id) || createGameRow(game);
  const cell = (cls) => row.querySelector(`.${cls}`);
  row.dataset.status = game.status;
  cell('board-no').textContent = game.board_no;
  fillHall(row, game.id);
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

// Loading pairings announces every game of the round at once, a message each: placing
// 700 rows for each of 700 messages froze the page for many seconds. New rows are placed
// once the burst has been read.
let placing = null;
export function schedulePlaceGames() {
  if (!placing) placing = setTimeout(() => { placing = null; placeGames(); }, 16);
}

/** Puts the rows in board order. */
export function placeGames() {
  const sorted = [...games.values()].sort((a, b) => a.board_no - b.board_no);
  $('games').tBodies[0].replaceChildren(...sorted.map((g) => gameRows.get(g.id)));
}
