// The crosstable of the standings page. A Swiss: a row per player, a column per round, each
// cell the opponent's rank with the colour and the result ("12w1": against the 12th, White,
// won). A round robin: the grid, players by rank both ways, each cell the row player's result
// against the column's.
//
// Spoiler-free, both are in start order, the opponents by start number, without results.

import { el } from './format.js';
import { federationCell } from './flags.js';
import {
  codeName, colHead, gameHref, isBye, playerHref, pointsText, resultName, resultText, tiebreakText,
} from './tournament.js';

/** @typedef {import('./tournament.js').Standings} Standings */
/** @typedef {import('./tournament.js').PlayerLine} PlayerLine */
/** @typedef {import('./tournament.js').RoundCell} RoundCell */

/**
 * The rounds the crosstable shows: up to the standings' round; and, for the standings as
 * they stand (no round chosen), a round paired since, with its games still being played.
 * @param {Standings} s
 * @param {boolean} chosen
 */
export function shownRounds(s, chosen) {
  let last = s.round;
  if (!chosen) {
    for (const p of s.players) {
      for (const c of p.rounds) {
        if (c.round > last && (c.opponent != null || c.result !== '')) last = c.round;
      }
    }
  }
  return Array.from({ length: last }, (_, i) => i + 1);
}

/**
 * The tie-break columns of a table of these rows, as indexes into the standings' codes. In a
 * team event (`others`: the other table's rows) the team codes rank the teams and the
 * individual codes the players, each null on the other's rows: a table shows the codes its
 * rows have values for, and the teams' table too the codes that give only an order (null in
 * both, as a direct encounter). In an individual event every code has its column.
 * @param {string[]} codes
 * @param {Array<{ tiebreaks: (number | null)[] }>} rows
 * @param {Array<{ tiebreaks: (number | null)[] }> | null} others
 * @param {boolean} [orderOnly] the table that shows the codes null in both
 */
export function tiebreakColumns(codes, rows, others, orderOnly = false) {
  const all = codes.map((_, i) => i);
  if (!others) return all;
  const has = (list, i) => list.some((r) => r.tiebreaks[i] != null);
  return all.filter((i) => has(rows, i) || (orderOnly && !has(others, i)));
}

/** The name cell: the title, the name linking to the player's page. */
export function nameCell(p, tag = 'th') {
  return el(tag, { class: 'name', scope: tag === 'th' ? 'row' : null },
    p.title ? el('span', { class: 'title', text: `${p.title} ` }) : null,
    el('a', { href: playerHref(p.start_rank), text: p.name }));
}

/**
 * A Swiss cell's text: the opponent's number, the colour and (unless hidden) the result; a
 * bye its points.
 * @param {RoundCell} c
 * @param {Map<number, number>} number start rank → the number the table shows
 * @param {boolean} hide
 */
function swissCellText(c, number, hide) {
  if (c.opponent == null) {
    if (c.result === '') return '';
    return hide ? 'bye' : `bye ${resultText(c.result)}`;
  }
  return `${number.get(c.opponent) ?? c.opponent}${c.colour || ''}${hide ? '' : resultText(c.result)}`;
}

/**
 * What a cell says in words, for its title: "Round 3: White against Name (12), won".
 * @param {RoundCell} c
 * @param {Map<number, PlayerLine>} bySr
 * @param {boolean} hide
 */
function cellTitle(c, bySr, hide) {
  const outcome = hide ? '' : resultName(c.result);
  if (c.opponent == null) return `Round ${c.round}: ${isBye(c) ? (hide ? 'bye' : outcome) : 'not paired'}`;
  const opp = bySr.get(c.opponent);
  const colour = c.colour === 'w' ? 'White' : c.colour === 'b' ? 'Black' : '';
  return `Round ${c.round}: ${colour ? `${colour} ` : ''}against ${opp ? opp.name : `no. ${c.opponent}`}`
    + `${outcome ? `, ${outcome}` : c.result === '' ? ', not played yet' : ''}`;
}

/** A cell linking to its game when it has one. */
function linked(text, gameId) {
  return gameId != null && text ? el('a', { href: gameHref(gameId), text }) : text;
}

/**
 * Fills `table` (a `<table>` with its caption) with the crosstable.
 * @param {HTMLTableElement} table
 * @param {Standings} s
 * @param {{ hide: boolean, chosen: boolean, names: Record<string, string> }} options
 */
export function renderCrosstable(table, s, { hide, chosen, names }) {
  const rows = hide ? [...s.players].sort((a, b) => a.start_rank - b.start_rank) : s.players;
  const bySr = new Map(s.players.map((p) => [p.start_rank, p]));
  // The number a player goes by in this table: the rank, or the start number spoiler-free.
  const number = new Map(s.players.map((p) => [p.start_rank, hide ? p.start_rank : p.rank]));
  const rounds = shownRounds(s, chosen);
  const tbs = hide ? [] : tiebreakColumns(s.tiebreaks, s.players, s.teams.length ? s.teams : null);
  const grid = s.round_robin;
  const columns = grid ? rows.map((p) => number.get(p.start_rank)) : rounds;

  const caption = table.querySelector('caption');
  caption.textContent = `${grid ? 'Round robin' : 'Crosstable'}${hide ? ' (start order, no results)' : ` after round ${s.round}`}`;
  const head = el('tr', {},
    colHead(hide ? 'No.' : 'Rk', { title: hide ? 'Start number' : 'Rank' }),
    colHead('Name'), colHead('Fed', { title: 'Federation' }), colHead('Rtg', { title: 'Rating' }),
    ...columns.map((n) => colHead(String(n), {
      class: 'cell', title: grid ? `Against no. ${n}` : `Round ${n}`,
    })),
    hide ? null : colHead('Pts', { class: 'points', title: 'Points' }),
    ...tbs.map((i) => colHead(s.tiebreaks[i], { class: 'tb', title: codeName(names, s.tiebreaks[i]) })));

  const body = rows.map((p) => {
    const cells = grid
      ? rows.map((q) => {
        if (q.start_rank === p.start_rank) return el('td', { class: 'cell self', 'aria-label': '—' });
        const games = p.rounds.filter((c) => c.opponent === q.start_rank && rounds.includes(c.round));
        const text = games.map((c) => (hide || c.result === '' ? (c.colour || '') : resultText(c.result))).join(' ');
        return el('td', {
          class: 'cell', title: games.map((c) => cellTitle(c, bySr, hide)).join('; ') || null,
        }, linked(text, games.length === 1 ? games[0].game_id : null));
      })
      : rounds.map((r) => {
        const c = p.rounds.find((x) => x.round === r);
        if (!c) return el('td', { class: 'cell' });
        return el('td', {
          class: `cell${isBye(c) ? ' bye' : ''}`, 'data-result': hide ? null : c.result, title: cellTitle(c, bySr, hide),
        }, linked(swissCellText(c, number, hide), c.game_id));
      });
    return el('tr', { 'data-start-rank': p.start_rank },
      el('td', { class: 'rank', text: String(number.get(p.start_rank)) }),
      nameCell(p),
      el('td', { class: 'fed' }, federationCell(p.federation)),
      el('td', { class: 'rating', text: p.rating ? String(p.rating) : '' }),
      ...cells,
      hide ? null : el('td', { class: 'points', text: pointsText(p.points) }),
      ...tbs.map((i) => el('td', { class: 'tb', text: tiebreakText(p.tiebreaks[i]) })));
  });
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}
