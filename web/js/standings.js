// Standings page: the tournament's ranking after a round (the teams' first in a team event),
// and its crosstable (crosstable.js), live as results come; spoiler-free on request.

import { getJSON, showStatus } from './api.js';
import { el } from './format.js';
import { federationCell } from './flags.js';
import { nameCell, renderCrosstable, tiebreakColumns } from './crosstable.js';
import {
  chosenRound, codeName, colHead, crumbs, followResults, getStandings, getTournament, pageMessage,
  pointsText, spoilerSwitch, teamHref, tiebreakText, tournamentId,
} from './tournament.js';

/** @typedef {import('./tournament.js').Standings} Standings */
/** @typedef {import('./tournament.js').Tournament} Tournament */

/** @type {Standings | null} */
let standings = null;
/** Tie-break code → its name ("BH/C1" → "Buchholz cut 1"), for the columns' titles. */
let names = {};

const spoiler = spoilerSwitch(() => render());

// ---- the tables ---------------------------------------------------------------------------

/** @param {Standings} s @param {boolean} hide */
function renderTeams(s, hide) {
  const wrap = document.getElementById('teams-wrap');
  wrap.hidden = !s.teams.length;
  if (!s.teams.length) return;
  const table = /** @type {HTMLTableElement} */ (document.getElementById('teams'));
  const caption = table.querySelector('caption');
  caption.textContent = hide ? 'Teams (by number)' : `Teams after round ${s.round}`;
  const rows = hide ? [...s.teams].sort((a, b) => a.number - b.number) : s.teams;
  const tbs = hide ? [] : tiebreakColumns(s.tiebreaks, s.teams, s.players, true);
  const head = el('tr', {},
    hide ? null : colHead('Rk', { title: 'Rank' }),
    colHead('No.', { class: 'sno', title: 'Team number' }),
    colHead('Team'),
    hide ? null : colHead('MP', { class: 'points', title: 'Match points' }),
    hide ? null : colHead('GP', { class: 'points', title: 'Game points' }),
    ...tbs.map((i) => colHead(s.tiebreaks[i], { class: 'tb', title: codeName(names, s.tiebreaks[i]) })));
  const body = rows.map((t) => el('tr', { 'data-team': t.number },
    hide ? null : el('td', { class: 'rank', text: String(t.rank) }),
    el('td', { class: 'sno', text: String(t.number) }),
    el('th', { scope: 'row', class: 'name' }, el('a', { href: teamHref(t.number), text: t.name })),
    hide ? null : el('td', { class: 'points', text: pointsText(t.match_points) }),
    hide ? null : el('td', { class: 'points gp', text: pointsText(t.game_points) }),
    ...tbs.map((i) => el('td', { class: 'tb', text: tiebreakText(t.tiebreaks[i]) }))));
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}

/** @param {Standings} s @param {boolean} hide */
function renderPlayers(s, hide) {
  const table = /** @type {HTMLTableElement} */ (document.getElementById('standings'));
  const caption = table.querySelector('caption');
  caption.textContent = !s.players.length
    // A tournament made by hand or by the boards: no player list to rank.
    ? 'No standings: the players come with the pairing program\'s file (TRF), loaded in the console.'
    : hide
      ? 'Players (start order)'
      : `Standings after round ${s.round}${s.rounds > s.round ? ` of ${s.rounds}` : ''}`;
  const rows = hide ? [...s.players].sort((a, b) => a.start_rank - b.start_rank) : s.players;
  const teams = s.teams.length > 0;
  const tbs = hide ? [] : tiebreakColumns(s.tiebreaks, s.players, teams ? s.teams : null);
  const head = el('tr', {},
    hide ? null : colHead('Rk', { title: 'Rank' }),
    colHead('No.', { class: 'sno', title: 'Start number' }),
    colHead('Name'),
    colHead('Fed', { title: 'Federation' }),
    colHead('Rtg', { title: 'Rating' }),
    teams ? colHead('Team', { class: 'team' }) : null,
    hide ? null : colHead('Pts', { class: 'points', title: 'Points' }),
    ...tbs.map((i) => colHead(s.tiebreaks[i], { class: 'tb', title: codeName(names, s.tiebreaks[i]) })),
    hide ? null : colHead('G', { class: 'games', title: 'Games played over the board' }));
  const teamNo = new Map(s.teams.map((t) => [t.name, t.number]));
  const body = rows.map((p) => el('tr', { 'data-start-rank': p.start_rank },
    hide ? null : el('td', { class: 'rank', text: String(p.rank) }),
    el('td', { class: 'sno', text: String(p.start_rank) }),
    nameCell(p),
    el('td', { class: 'fed' }, federationCell(p.federation)),
    el('td', { class: 'rating', text: p.rating ? String(p.rating) : '' }),
    teams ? el('td', { class: 'team' }, p.team && teamNo.has(p.team)
      ? el('a', { href: teamHref(teamNo.get(p.team)), text: p.team }) : (p.team || '')) : null,
    hide ? null : el('td', { class: 'points', text: pointsText(p.points) }),
    ...tbs.map((i) => el('td', { class: 'tb', text: tiebreakText(p.tiebreaks[i]) })),
    hide ? null : el('td', { class: 'games', text: String(p.games) })));
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}

/** The tie-breaks in words, under the table. */
function renderLegend(s, hide) {
  const legend = document.getElementById('tiebreak-legend');
  legend.textContent = hide || !s.tiebreaks.length ? ''
    : `Tie-breaks, in order: ${s.tiebreaks.map((c) => (codeName(names, c) !== c ? `${c}: ${codeName(names, c)}` : c)).join('; ')}.`;
  document.getElementById('crosstable-legend').textContent = s.round_robin
    ? (hide ? 'Each cell: the colour the row\'s player has against the column\'s.'
      : 'Each cell: the row\'s player\'s result against the column\'s; ½ a draw, + and − forfeits.')
    : (hide ? 'Each cell: the opponent\'s start number and colour (w White, b Black).'
      : 'Each cell: the opponent\'s rank, the colour (w White, b Black) and the result (+ and − forfeits); a bye shows its points.');
}

function render() {
  const s = standings;
  if (!s) return;
  const hide = spoiler.isOn();
  renderTeams(s, hide);
  renderPlayers(s, hide);
  renderCrosstable(/** @type {HTMLTableElement} */ (document.getElementById('crosstable')), s,
    { hide, chosen: chosenRound != null, names });
  renderLegend(s, hide);
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

// ---- the controls -----------------------------------------------------------------------

/** The "after round" chooser: every round known; choosing one reloads the page for it. */
function roundChooser(s) {
  const select = /** @type {HTMLSelectElement} */ (document.getElementById('round-select'));
  const value = String(chosenRound || s.round);
  const options = Array.from({ length: Math.max(s.rounds, s.round) }, (_, i) => String(i + 1));
  if (select.options.length !== options.length) {
    select.replaceChildren(...options.map((n) => el('option', { value: n, text: n })));
  }
  select.value = value;
  select.disabled = !options.length;
}

function setupControls() {
  const select = /** @type {HTMLSelectElement} */ (document.getElementById('round-select'));
  select.addEventListener('change', () => {
    const url = new URL(location.href);
    // The last round is the standings as they stand: followed live without a round chosen.
    if (standings && Number(select.value) >= standings.rounds) url.searchParams.delete('round');
    else url.searchParams.set('round', select.value);
    location.href = url.href;
  });
  const round = chosenRound ? `?round=${chosenRound}` : '';
  const link = (id, href) => { /** @type {HTMLAnchorElement} */ (document.getElementById(id)).href = href; };
  link('standings-csv', `api/tournaments/${tournamentId}/standings.csv${round}`);
  link('crosstable-csv', `api/tournaments/${tournamentId}/crosstable.csv${round}`);
  link('all-pgn', `api/tournaments/${tournamentId}/pgn`);
  document.getElementById('print').addEventListener('click', () => window.print());

  // The two views as tabs; the address's #crosstable opens the second.
  const tabs = ['standings', 'crosstable'];
  const show = (which, keep = true) => {
    for (const t of tabs) {
      document.getElementById(`tab-${t}`).setAttribute('aria-selected', String(t === which));
      document.getElementById(`${t}-panel`).hidden = t !== which;
    }
    if (keep) history.replaceState(null, '', which === 'crosstable' ? '#crosstable' : location.pathname + location.search);
  };
  for (const t of tabs) document.getElementById(`tab-${t}`).addEventListener('click', () => show(t));
  /** @type {HTMLElement} */ (document.querySelector('.tabs')).addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const next = document.getElementById('tab-standings').getAttribute('aria-selected') === 'true' ? 'crosstable' : 'standings';
    show(next);
    document.getElementById(`tab-${next}`).focus();
  });
  show(location.hash === '#crosstable' ? 'crosstable' : 'standings', false);
}

// ---- start --------------------------------------------------------------------------------

/** Reads the standings (and the tournament, for a round paired since) and shows them. */
/** The standings last shown, as text: a refresh that brings nothing new draws nothing. */
let shownText = '';

async function refresh() {
  const [t, s] = await Promise.all([getTournament(), getStandings(chosenRound)]);
  crumbs(t, true);
  const text = JSON.stringify(s);
  if (text === shownText) return t;
  shownText = text;
  standings = s;
  spoiler.setDefault(s.spoiler_free_default);
  roundChooser(s);
  render();
  return t;
}

async function start() {
  if (!tournamentId) {
    pageMessage('No tournament given. Pick one on the start page.');
    showStatus('offline');
    return;
  }
  setupControls();
  // The codes' names are for the columns' titles: the page does without them.
  getJSON('api/tiebreaks').then((list) => {
    names = Object.fromEntries((list || []).map((c) => [c.code, c.name]));
    render();
  }).catch(() => {});
  /** @type {Tournament} */
  let t;
  try {
    t = await refresh();
  } catch (err) {
    pageMessage(err.status === 404 ? 'This tournament does not exist.' : `Could not load the standings: ${err.message}`);
    showStatus('offline');
    return;
  }
  document.getElementById('title').textContent = `${t.name}: standings`;
  document.title = `${t.name}, standings · relay`;
  followResults(t, refresh);
}

start();
