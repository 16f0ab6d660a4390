// The e-boards' actions: put an e-board on a board of the round, or have it go on from the
// position it shows (it lost track of the game, or has none).

import { adminFetch } from '../api.js';
import { $, showError, run } from './page.js';
import { refreshRound, refreshEboards, roundName } from './round.js';
import { roundId, eboards, inRound } from './state.js';

/** @typedef {import('../../types/ws-messages').EboardView} EboardView */

$('eboards').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const row = form.closest('tr[data-serial]');
  const board = row && eboards.get(row.dataset.serial);
  if (!board) return;
  if (form.classList.contains('assign-form')) assignEboard(form, board);
  else if (form.classList.contains('continue-form')) continueFromBoard(form, board);
});

/** @param {EboardView} board */
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

/** @param {EboardView} board */
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
