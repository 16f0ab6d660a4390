// Player page: one player's tournament: who they are (flag, rating, photo when the organiser
// gives photos), where they stand, their performance and rating change, and every game of
// the event with its result and a link to it; their games as PGN. Live; spoiler-free on
// request.

import { getJSON, showStatus } from './api.js';
import { el } from './format.js';
import { federationCell, federationName } from './flags.js';
import {
  chosenRound, colHead, crumbs, followResults, gameHref, getStandings, getTournament, pageMessage,
  params, playerHref, pointsText, resultName, resultText, signed, spoilerSwitch, teamHref,
  tournamentId,
} from './tournament.js';

/** @typedef {import('./tournament.js').Standings} Standings */
/** @typedef {import('./tournament.js').Tournament} Tournament */
/**
 * A game of the player's page (the opponent null for a bye).
 * @typedef {{ round: number, board: number | null, game_id: number | null, colour: 'w' | 'b' | null,
 *   opponent: { start_rank: number, name: string, title: string | null, rating: number | null,
 *   federation: string | null } | null, result: string, points: number }} PlayerGame
 */
/**
 * `GET api/tournaments/{id}/players/{start_rank}`: the standings' line of the player, with
 * the K-factor, the rating change, and the games.
 * @typedef {Omit<import('./tournament.js').PlayerLine, 'games'> & { k: number | null,
 *   rating_change: number | null, games: PlayerGame[] }} PlayerPage
 */

const startRank = params.get('p');

/** @type {{ player: PlayerPage, standings: Standings } | null} */
let shown = null;

const spoiler = spoilerSwitch(() => render());

/** A `<dt>`/`<dd>` pair of the facts list, or nothing for an empty value. */
function fact(term, ...value) {
  const v = value.filter((x) => x != null && x !== '');
  return v.length ? [el('dt', { text: term }), el('dd', {}, ...v)] : [];
}

/** @param {PlayerPage} p @param {Standings} s @param {boolean} hide */
function renderFacts(p, s, hide) {
  const team = p.team ? s.teams.find((t) => t.name === p.team) : null;
  const played = p.games.filter((g) => g.result !== '');
  document.getElementById('facts').replaceChildren(
    ...fact('Start number', String(p.start_rank)),
    ...(hide ? [] : fact('Rank', `${p.rank} of ${s.players.length}`)),
    ...(hide ? [] : fact('Points', `${pointsText(p.points)} of ${played.length}`)),
    ...fact('Federation', p.federation ? federationCell(p.federation) : null,
      p.federation && federationName(p.federation) !== p.federation ? ` ${federationName(p.federation)}` : null),
    ...fact('Rating', p.rating ? String(p.rating) : null),
    ...fact('FIDE ID', p.fide_id ? el('a', {
      href: `https://ratings.fide.com/profile/${p.fide_id}`, rel: 'noopener', text: String(p.fide_id),
    }) : null),
    ...fact('Team', team ? el('a', { href: teamHref(team.number), text: team.name }) : p.team),
    ...(hide ? [] : fact('Performance', p.performance != null ? String(Math.round(p.performance)) : null)),
    ...(hide ? [] : fact('Rating change', p.rating_change != null
      ? el('span', { class: 'rating-change', 'data-sign': Math.sign(p.rating_change), text: signed(p.rating_change) })
      : null, p.rating_change != null && p.k ? ` (K = ${p.k})` : null)));

  const photo = document.getElementById('photo');
  photo.hidden = !p.photo;
  if (p.photo) {
    const img = /** @type {HTMLImageElement} */ (document.getElementById('photo-img'));
    if (img.getAttribute('src') !== p.photo) img.src = p.photo;
    img.alt = `Photo of ${p.name}`;
    document.getElementById('photo-credit').textContent = s.photo_credit ? `Photo: ${s.photo_credit}` : '';
  }
}

/** @param {PlayerPage} p @param {boolean} hide */
function renderGames(p, hide) {
  const table = /** @type {HTMLTableElement} */ (document.getElementById('games'));
  const caption = table.querySelector('caption');
  caption.textContent = `Games of ${p.name}`;
  const head = el('tr', {},
    colHead('Rd', { title: 'Round' }), colHead('Bd', { title: 'Board' }), colHead('Colour'),
    colHead('Opponent'), colHead('Rtg', { title: 'Rating' }), colHead('Fed', { title: 'Federation' }),
    hide ? null : colHead('Result'),
    hide ? null : colHead('Total', { class: 'points', title: 'Points after the round' }),
    colHead('Game'));
  let total = 0;
  const body = [...p.games].sort((a, b) => a.round - b.round).map((g) => {
    total += g.points || 0;
    const o = g.opponent;
    const colour = g.colour === 'w' ? 'White' : g.colour === 'b' ? 'Black' : '';
    return el('tr', { 'data-round': g.round },
      el('th', { scope: 'row', class: 'round', text: String(g.round) }),
      el('td', { class: 'bd', text: g.board != null ? String(g.board) : '' }),
      el('td', { class: 'colour' }, colour ? el('span', { class: `piece-colour ${g.colour}`, 'aria-hidden': 'true' }) : null, colour),
      el('td', { class: 'name' }, ...(o
        ? [o.title ? el('span', { class: 'title', text: `${o.title} ` }) : null,
          el('a', { href: playerHref(o.start_rank), text: o.name })]
        : [el('span', { class: 'muted', text: g.result === '' ? 'not paired' : `bye (${resultName(g.result)})` })])),
      el('td', { class: 'rating', text: o?.rating ? String(o.rating) : '' }),
      el('td', { class: 'fed' }, o ? federationCell(o.federation) : null),
      hide ? null : el('td', {
        class: 'result', 'data-result': g.result, title: resultName(g.result) || null,
        text: g.result === '' ? '' : resultText(g.result),
      }),
      hide ? null : el('td', { class: 'points', text: g.result === '' ? '' : pointsText(total) }),
      el('td', { class: 'game' }, g.game_id != null
        ? el('a', { class: 'game-link', href: gameHref(g.game_id), text: 'Game ›', 'aria-label': `Round ${g.round}: the game` })
        : null));
  });
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}

function render() {
  if (!shown) return;
  const hide = spoiler.isOn();
  renderFacts(shown.player, shown.standings, hide);
  renderGames(shown.player, hide);
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

async function refresh() {
  const [t, s, p] = await Promise.all([
    getTournament(),
    getStandings(chosenRound),
    /** @type {Promise<PlayerPage>} */ (getJSON(`api/tournaments/${tournamentId}/players/${startRank}${chosenRound ? `?round=${chosenRound}` : ''}`)),
  ]);
  shown = { player: p, standings: s };
  spoiler.setDefault(s.spoiler_free_default);
  crumbs(t);
  const title = `${p.title ? `${p.title} ` : ''}${p.name}`;
  document.getElementById('title').textContent = title;
  document.title = `${title}, ${t.name} · relay`;
  document.getElementById('profile').hidden = false;
  render();
  return t;
}

async function start() {
  if (!tournamentId || !startRank) {
    pageMessage('No player given. Pick one on the standings page.');
    showStatus('offline');
    return;
  }
  const pgn = /** @type {HTMLAnchorElement} */ (document.getElementById('player-pgn'));
  pgn.href = `api/tournaments/${tournamentId}/players/${startRank}/pgn`;
  pgn.download = `player-${startRank}.pgn`;
  let t;
  try {
    t = await refresh();
  } catch (err) {
    pageMessage(err.status === 404 ? 'This player or tournament does not exist.' : `Could not load the player: ${err.message}`);
    showStatus('offline');
    return;
  }
  followResults(t, refresh);
}

start();
