// The round the console shows, kept current: read at the start and after an action, then
// followed on the round's socket (with e-board news). Every change of a game or an e-board
// comes through here and is drawn in both tables; a console opened without ?round= moves on
// to a newer round when an e-board does.

import { getJSON, liveSocket, applyGameEvent, showStatus } from '../api.js';
import { el } from '../format.js';
import { noteProblems, forgetProblems } from './alerts.js';
import { noteIllegalMove, loadIllegalMoves } from './illegal.js';
import { renderEboard, placeEboards, listPairings } from './eboards.js';
import { renderGameRow, schedulePlaceGames, placeGames } from './games.js';
import { $, showError } from './page.js';
import { roundId, followNewest, chooseRound, games, gameRows, eboards, eboardRows, read } from './state.js';

/** @typedef {import('../../types/ws-messages').ServerMessage} ServerMessage */
/** @typedef {import('../../types/ws-messages').RoundView} RoundView */
/** @typedef {import('../../types/ws-messages').GameView} GameView */
/** @typedef {import('../../types/ws-messages').EboardView} EboardView */

let socket = null;

/** @type {RoundView | null} the round as last read: number, delay_secs, final */
export let currentRound = null;

export const roundName = () => (currentRound ? `Round ${currentRound.number}` : 'this round');

const roundWatchers = [];

/**
 * Has `show(round)` called each time the round is read (the settings panel shows its delay
 * and "final" mark so).
 * @param {(round: RoundView) => void} show
 */
export function watchRound(show) {
  roundWatchers.push(show);
}

/** @param {RoundView} round */
function setRound(round) {
  currentRound = round;
  for (const show of roundWatchers) show(round);
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
  listPairings();
  for (const b of eboards.values()) renderEboard(b);
}

/** @param {GameView} game */
function upsertGame(game, place = true) {
  if (String(game.round_id) !== String(roundId)) return;
  games.set(game.id, game);
  const isNew = !gameRows.has(game.id);
  renderGameRow(game);
  if (isNew && place) schedulePlaceGames();
  for (const board of eboards.values()) if (board.game_id === game.id && board.in_sync === false) renderEboard(board);
}

/** @param {EboardView} board */
function upsertEboard(board) {
  eboards.set(board.serial, board);
  noteProblems(board);
  renderEboard(board);
  if (board.game_id != null && games.has(board.game_id)) renderGameRow(games.get(board.game_id));
}

export async function refreshRound() {
  if (!roundId) return;
  try { setRound(await read(`api/rounds/${roundId}`)); } catch (err) { showError('Loading the round', err); }
}

export async function refreshGame(id) {
  try { upsertGame(await read(`api/games/${id}`)); } catch { /* the socket will catch up */ }
}

export async function refreshEboards() {
  try {
    /** @type {EboardView[]} */
    const list = await read('api/eboards');
    const serials = new Set(list.map((b) => b.serial));
    for (const serial of [...eboards.keys()]) {
      if (serials.has(serial)) continue;
      eboards.delete(serial);
      eboardRows.delete(serial);
      forgetProblems(serial);
    }
    for (const board of list) upsertEboard(board);
    placeEboards();
    for (const board of list) await followEboard(board);
  } catch (err) {
    showError('Loading the e-boards', err);
  }
}

// ---- live -----------------------------------------------------------------------

/** @param {ServerMessage} msg */
function onMessage(msg) {
  if (msg.type === 'snapshot' && msg.round) return setRound(msg.round);
  if (msg.type === 'game' && msg.game) return upsertGame(msg.game);
  if (msg.type === 'eboard' && msg.eboard) {
    upsertEboard(msg.eboard);
    placeEboards();
    return followEboard(msg.eboard);
  }
  if (msg.type === 'illegal_move') return noteIllegalMove(msg.incident);
  if (msg.type === 'clock_adjustment') return;
  if (!('game_id' in msg)) return;
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
    if (!roundId && rounds.length) chooseRound(String(Math.max(...rounds.map(({ r }) => r.id))));
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
      /** @type {RoundView} */
      const round = await read(`api/rounds/${roundId}`);
      setRound(round);
      since = round.seq;
      loadIllegalMoves(roundId);
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

/**
 * An e-board now in a newer round than the one followed takes a console that follows the newest round with it.
 * @param {EboardView} board
 */
async function followEboard(board) {
  if (!followNewest || moving || board.round_id == null) return;
  if (roundId != null && Number(board.round_id) <= Number(roundId)) return;
  moving = true;
  try {
    if (socket) socket.close();
    socket = null;
    chooseRound(String(board.round_id));
    await loadRounds();
    listen(await loadRound());
    // Rows drawn against the old round (which board is "in the round") are drawn again.
    for (const b of eboards.values()) renderEboard(b);
  } finally {
    moving = false;
  }
}

/** Loads the rounds, the round and the e-boards, then follows the round live. */
export async function showRound() {
  await loadRounds();
  $('round-select').addEventListener('change', () => { location.search = `?round=${$('round-select').value}`; });
  // The round first: the e-boards table draws its games' positions.
  const since = await loadRound();
  await refreshEboards();
  setInterval(refreshEboards, 15000); // also keeps "lost since (… min)" current
  // (Unless an e-board already took the console to a newer round.)
  if (!socket) listen(since);
}
