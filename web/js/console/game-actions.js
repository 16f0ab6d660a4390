// The arbiter's actions on a game of the round: confirm or set a result, truncate, replace
// one move or the whole game (a PGN file), the audit trail; and the round's final PGN.

import { adminFetch, adminJSON } from '../api.js';
import { el, formatResult, moveLabel, playerText } from '../format.js';
import { $, showError, fileText, run } from './page.js';
import { refreshGame, refreshEboards } from './round.js';
import { roundId, games } from './state.js';

/** @typedef {import('../../types/ws-messages').GameView} GameView */

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

/** @param {GameView} game */
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
