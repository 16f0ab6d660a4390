// Illegal moves: a player completed one on a board (or pressed the clock without a move).
// The server puts it on the game's record and tells the console at once (`illegal_move`);
// here it is listed with a beep, naming the board, the players and which of that player's
// illegal moves in the game it is, with what the FIDE Laws prescribe for the event's time
// control. The arbiter gives the result the Laws prescribe (a second one) or dismisses it;
// either is in the audit trail. Open ones are listed again when the console opens.

import { adminFetch, adminJSON, getToken } from '../api.js';
import { el, moveNumber, playerText } from '../format.js';
import { beep } from './alerts.js';
import { $, showError } from './page.js';
import { games } from './state.js';

/** @typedef {import('../../types/ws-messages').Incident} Incident */

/**
 * An illegal move as `/api/games/{id}/record` gives it.
 * @typedef {{ id: number, game_id: number, ply: number, color: string, uci?: string | null,
 *   kind: string, count: number, prescribed: string, result?: string | null,
 *   ruling?: string | null }} IllegalMove
 */

/** @type {Map<number, IllegalMove>} incident id → the open illegal move listed */
const open = new Map();

const KIND_TEXT = {
  move_not_allowed: 'a piece moved as it cannot move',
  king_in_check: 'own king left or put in check',
  illegal_castling: 'castling not allowed',
  pawn_not_promoted: 'pawn on the last rank not replaced',
  press_without_move: 'clock pressed without a move',
};
const NTH = ['', 'first', 'second', 'third'];

/** @param {IllegalMove} m */
function itemOf(m) {
  const game = games.get(m.game_id);
  const white = m.color === 'white';
  const player = game ? playerText(white ? game.white : game.black) : '';
  const who = `${white ? 'White' : 'Black'}${player ? ` (${player})` : ''}`;
  const board = game ? `Board ${game.board_no}` : `Game ${m.game_id}`;
  const at = game ? ` at move ${moveNumber(m.ply, game.start_fen).number}` : '';
  const nth = NTH[m.count] || `${m.count}th`;
  const seen = m.uci ? ` ${m.uci},` : '';
  const li = el('li', { 'data-incident': m.id, class: m.count >= 2 ? 'second' : 'first' },
    el('strong', { text: `${board}: ${who}, ${nth} illegal move in this game` }),
    `${at}:${seen} ${KIND_TEXT[m.kind] || m.kind}. `,
    el('span', { class: 'laws', text: m.prescribed }),
    m.result ? el('button', { type: 'button', class: 'primary', 'data-ruling': 'result', text: `Give ${m.result} (rules infraction)` }) : null,
    el('button', { type: 'button', 'data-ruling': 'dismissed', text: 'Dismiss' }),
  );
  return li;
}

function render() {
  const items = [...open.values()].sort((a, b) => a.id - b.id).map(itemOf);
  $('illegal-list').replaceChildren(...items);
  $('illegal-banner').hidden = items.length === 0;
}

/**
 * A new illegal move: its game's record is read for the count and the Laws' remedy.
 * @param {Incident} incident
 */
export async function noteIllegalMove(incident) {
  if (!getToken()) {
    // Without the token the record cannot be read: say what is known.
    open.set(incident.id, {
      id: incident.id, game_id: incident.game_id, ply: incident.ply, color: incident.color,
      uci: incident.uci, kind: incident.illegal || '', count: 1,
      prescribed: 'Enter the admin token to see the count and what the Laws prescribe.',
    });
    render();
    beep();
    return;
  }
  try {
    const record = await adminJSON(`api/games/${incident.game_id}/record`);
    const m = record.illegal_moves.find((x) => x.id === incident.id);
    if (m && !m.ruling) open.set(m.id, m);
    render();
    beep();
  } catch (err) {
    showError('Reading the illegal move', err);
  }
}

/** The round's illegal moves nobody has ruled on yet (the console opened after them). */
export async function loadIllegalMoves(round) {
  if (!getToken()) return;
  try {
    /** @type {IllegalMove[]} */
    const list = await adminJSON(`api/rounds/${round}/illegal-moves`);
    open.clear();
    for (const m of list) open.set(m.id, m);
    render();
    if (list.length) beep();
  } catch { /* the token may be wrong: the other panels say so */ }
}

$('illegal-list').addEventListener('click', async (event) => {
  const target = /** @type {HTMLElement} */ (event.target);
  const button = /** @type {HTMLElement | null} */ (target.closest('button[data-ruling]'));
  if (!button) return;
  const li = /** @type {HTMLElement} */ (button.closest('li'));
  const id = Number(li.dataset.incident);
  const m = open.get(id);
  if (!m) return;
  const ruling = button.dataset.ruling;
  try {
    await adminFetch(`api/games/${m.game_id}/illegal-moves`, { method: 'POST', body: { incident: id, ruling } });
    // The result, when one was given, reaches the games table on the round's socket.
    open.delete(id);
    render();
  } catch (err) {
    showError('Ruling on the illegal move', err);
  }
});
