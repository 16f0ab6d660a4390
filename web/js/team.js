// Team page: one team of a team event: where it stands, its players in board order with
// their points, its matches round by round, and each board's results. Read from the
// standings; live; spoiler-free on request.

import { showStatus } from './api.js';
import { el } from './format.js';
import { federationCell } from './flags.js';
import { nameCell } from './crosstable.js';
import {
  chosenRound, colHead, crumbs, followResults, gameHref, getStandings, getTournament, pageMessage,
  params, pointsText, resultName, resultText, spoilerSwitch, teamHref, tiebreakText, tournamentId,
} from './tournament.js';

/** @typedef {import('./tournament.js').Standings} Standings */
/** @typedef {import('./tournament.js').Tournament} Tournament */
/** @typedef {import('./tournament.js').TeamLine} TeamLine */

const number = Number(params.get('team'));

/** @type {{ standings: Standings, tournament: Tournament } | null} */
let shown = null;

const spoiler = spoilerSwitch(() => render());

/** @param {TeamLine} team @param {Standings} s @param {boolean} hide */
function renderFacts(team, s, hide) {
  const facts = document.getElementById('facts');
  facts.hidden = hide;
  if (hide) return;
  const pair = (term, value) => [el('dt', { text: term }), el('dd', { text: value })];
  facts.replaceChildren(
    ...pair('Rank', `${team.rank} of ${s.teams.length}`),
    ...pair('Match points', pointsText(team.match_points)),
    ...pair('Game points', pointsText(team.game_points)),
    ...s.tiebreaks.map((_, i) => i).filter((i) => team.tiebreaks[i] != null).flatMap((i) => pair(s.tiebreaks[i], tiebreakText(team.tiebreaks[i]))));
}

/** The team's players in board order. @param {TeamLine} team @param {Standings} s @param {boolean} hide */
function renderMembers(team, s, hide) {
  const table = /** @type {HTMLTableElement} */ (document.getElementById('members'));
  const caption = table.querySelector('caption');
  caption.textContent = `Players of ${team.name}, by board`;
  const bySr = new Map(s.players.map((p) => [p.start_rank, p]));
  const head = el('tr', {},
    colHead('Bd', { title: 'Board' }), colHead('No.', { title: 'Start number' }), colHead('Name'),
    colHead('Fed', { title: 'Federation' }), colHead('Rtg', { title: 'Rating' }),
    hide ? null : colHead('Pts', { class: 'points', title: 'Points' }),
    hide ? null : colHead('G', { class: 'games', title: 'Games played over the board' }),
    hide ? null : colHead('Perf', { title: 'Performance rating' }));
  const body = team.players.map((sr, i) => {
    const p = bySr.get(sr);
    if (!p) return el('tr', {}, el('td', { text: String(i + 1) }), el('td', { text: String(sr) }));
    return el('tr', { 'data-start-rank': sr },
      el('td', { class: 'bd', text: String(i + 1) }),
      el('td', { class: 'sno', text: String(sr) }),
      nameCell(p),
      el('td', { class: 'fed' }, federationCell(p.federation)),
      el('td', { class: 'rating', text: p.rating ? String(p.rating) : '' }),
      hide ? null : el('td', { class: 'points', text: pointsText(p.points) }),
      hide ? null : el('td', { class: 'games', text: String(p.games) }),
      hide ? null : el('td', { class: 'perf', text: p.performance != null ? String(Math.round(p.performance)) : '' }));
  });
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}

/** The team's matches, round by round. @param {TeamLine} team @param {Standings} s @param {boolean} hide */
function renderMatches(team, s, hide) {
  const table = /** @type {HTMLTableElement} */ (document.getElementById('matches'));
  const caption = table.querySelector('caption');
  caption.textContent = `Matches of ${team.name}`;
  const byNumber = new Map(s.teams.map((t) => [t.number, t]));
  const rounds = new Map((shown?.tournament.rounds || []).map((r) => [Number(r.number), r.id]));
  const head = el('tr', {},
    colHead('Rd', { title: 'Round' }), colHead('Opponent'),
    hide ? null : colHead('Score', { class: 'points', title: 'Game points, this team\'s first' }),
    hide ? null : colHead('MP', { class: 'points', title: 'Match points' }),
    colHead('Boards'));
  const body = [...team.matches].sort((a, b) => a.round - b.round).map((m) => {
    const opp = m.opponent != null ? byNumber.get(m.opponent) : null;
    const roundId = rounds.get(m.round);
    return el('tr', { 'data-round': m.round },
      el('th', { scope: 'row', class: 'round', text: String(m.round) }),
      el('td', { class: 'name' }, opp
        ? el('a', { href: teamHref(opp.number), text: opp.name })
        : el('span', { class: 'muted', text: m.opponent != null ? `no. ${m.opponent}` : 'bye' })),
      hide ? null : el('td', { class: 'points score', text: `${pointsText(m.game_points)} – ${pointsText(m.opponent_game_points)}` }),
      hide ? null : el('td', { class: 'points', text: pointsText(m.match_points) }),
      el('td', {}, roundId != null ? el('a', { href: `round.html?id=${roundId}`, text: `Round ${m.round} ›` }) : null));
  });
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}

/** Each board's results: a row per player, a column per round. */
function renderBoards(team, s, hide) {
  const table = /** @type {HTMLTableElement} */ (document.getElementById('boards'));
  const caption = table.querySelector('caption');
  caption.textContent = hide ? 'Colours by board' : 'Results by board';
  const bySr = new Map(s.players.map((p) => [p.start_rank, p]));
  const members = team.players.map((sr) => bySr.get(sr)).filter(Boolean);
  const last = Math.max(s.round, ...team.matches.map((m) => m.round));
  const rounds = Array.from({ length: last }, (_, i) => i + 1);
  const head = el('tr', {}, colHead('Name'), ...rounds.map((r) => colHead(String(r), { class: 'cell', title: `Round ${r}` })));
  const body = members.map((p) => el('tr', { 'data-start-rank': p.start_rank },
    nameCell(p),
    ...rounds.map((r) => {
      const c = p.rounds.find((x) => x.round === r);
      if (!c || (c.opponent == null && c.result === '')) return el('td', { class: 'cell' });
      const opp = c.opponent != null ? bySr.get(c.opponent) : null;
      // A board not played this round (absent, a bye): a dash, its points in the title.
      const text = c.opponent == null ? '–' : `${c.colour || ''}${hide ? '' : resultText(c.result)}`;
      const title = `Round ${r}: ${opp ? `against ${opp.name}` : 'no game'}${hide ? '' : `${resultName(c.result) ? `, ${resultName(c.result)}` : ''}`}`;
      return el('td', { class: 'cell', title },
        c.game_id != null && text ? el('a', { href: gameHref(c.game_id), text }) : text);
    })));
  table.replaceChildren(caption, el('thead', {}, head), el('tbody', {}, ...body));
}

function render() {
  if (!shown) return;
  const s = shown.standings;
  const team = s.teams.find((t) => t.number === number);
  if (!team) {
    pageMessage('This team is not in the tournament.');
    return;
  }
  const hide = spoiler.isOn();
  renderFacts(team, s, hide);
  renderMembers(team, s, hide);
  renderMatches(team, s, hide);
  renderBoards(team, s, hide);
  document.getElementById('title').textContent = team.name;
  document.title = `${team.name}, ${shown.tournament.name} · relay`;
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
}

async function refresh() {
  const [t, s] = await Promise.all([getTournament(), getStandings(chosenRound)]);
  shown = { standings: s, tournament: t };
  spoiler.setDefault(s.spoiler_free_default);
  crumbs(t);
  render();
  return t;
}

async function start() {
  if (!tournamentId || !number) {
    pageMessage('No team given. Pick one on the standings page.');
    showStatus('offline');
    return;
  }
  let t;
  try {
    t = await refresh();
  } catch (err) {
    pageMessage(err.status === 404 ? 'This tournament does not exist.' : `Could not load the team: ${err.message}`);
    showStatus('offline');
    return;
  }
  followResults(t, refresh);
}

start();
