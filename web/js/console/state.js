// What the console holds: the round it shows, and that round's games and the e-boards,
// each by id together with its table row. Only round.js changes the round; the panels read
// these maps and draw from them.

import { getJSON, adminJSON, getToken } from '../api.js';

/** @typedef {import('../../types/ws-messages').GameView} GameView */
/** @typedef {import('../../types/ws-messages').EboardView} EboardView */

/** The round shown (its id as in the address), or null before there is one. */
export let roundId = new URLSearchParams(location.search).get('round');

// Opened without ?round=, the console follows the newest round: when an e-board moves on to
// a newer round (the next game on a board with no pairings, or the next round's pairings),
// the console goes with it. A round picked by hand stays.
export const followNewest = !roundId;

/** Shows round `id` from now on (round.js loads it and follows it). */
export function chooseRound(id) {
  roundId = id;
}

/** @type {Map<number, GameView>} game id → the game (this round) */
export const games = new Map();
/** @type {Map<number, HTMLTableRowElement>} game id → its row */
export const gameRows = new Map();
/** @type {Map<number, GameView | { fen: null }>} game id → a game of another round, for an e-board's position */
export const otherGames = new Map();
/** @type {Map<string, EboardView>} serial → the e-board */
export const eboards = new Map();
/** @type {Map<string, HTMLTableRowElement>} serial → its row */
export const eboardRows = new Map();

/**
 * A venue relay pushing here, as /health's pushed_from tells it (the fields the console reads).
 * @typedef {{ origin: string, name: string, link: string, applied_at_ms: number, games?: number[] }} Venue
 */
/** @type {Map<number, Venue>} game id → the venue that fills it (several halls, one event) */
export const venueOf = new Map();

/** Reads JSON, with the token when there is one: the arbiter sees live data, not delayed. */
export const read = (url) => (getToken() ? adminJSON(url) : getJSON(url));

/**
 * Whether the e-board is on a game of the round shown.
 * @param {EboardView} board
 */
export const inRound = (board) => roundId != null && board.round_id != null && String(board.round_id) === String(roundId);
