// What the tournament's pages share (standings.html, player.html, team.html): the standings'
// JSON and its types, the tournament's name and rounds, the spoiler-free switch, the links
// between the pages, how a result is written in a table, and following the results live.
//
// Every page's address names the tournament as `?t=ID`; the player page adds `&p=START_RANK`,
// the team page `&team=NUMBER`, and any of them `&round=N` for the standings after round N.

import { getJSON, liveSocket, showStatus } from './api.js';
import { el, formatPoints } from './format.js';

/**
 * One round of a player: the opponent's start rank (null: a bye or no pairing yet), White or
 * Black, the result from the player's side ("1", "½", "0", "+", "-", a bye's "H", "F", "U",
 * "Z", or "" while not played), the points it gave and the game, if it has one.
 * @typedef {{ round: number, opponent: number | null, colour: 'w' | 'b' | null, result: string,
 *   points: number, game_id: number | null }} RoundCell
 */
/**
 * A player's line of the standings (players are sorted by `rank`; `tiebreaks` follow the
 * standings' codes, one value each).
 * @typedef {{ rank: number, start_rank: number, name: string, title: string | null,
 *   rating: number | null, federation: string | null, fide_id: number | null,
 *   team: string | null, points: number, tiebreaks: (number | null)[], games: number,
 *   performance: number | null, photo: string | null, rounds: RoundCell[] }} PlayerLine
 */
/**
 * A team's match of one round (opponent: its team number; null for a bye).
 * @typedef {{ round: number, opponent: number | null, match_points: number, game_points: number,
 *   opponent_game_points: number }} TeamMatch
 */
/**
 * A team's line (`players`: start ranks in board order).
 * @typedef {{ rank: number, number: number, name: string, match_points: number,
 *   game_points: number, tiebreaks: (number | null)[], players: number[],
 *   matches: TeamMatch[] }} TeamLine
 */
/**
 * `GET api/tournaments/{id}/standings[?round=N]`: after round `round` of `rounds` known.
 * @typedef {{ round: number, rounds: number, round_robin: boolean, tiebreaks: string[],
 *   players: PlayerLine[], teams: TeamLine[], photo_credit: string | null,
 *   spoiler_free_default: boolean }} Standings
 */
/**
 * The tournament as `GET api/tournaments/{id}` gives it (what these pages read of it).
 * @typedef {{ id: number, name: string, site?: string | null, rounds: Array<{ id: number,
 *   number: string, final: boolean }>, tiebreaks?: string[] }} Tournament
 */

export const params = new URLSearchParams(location.search);
/** The tournament of the page (`?t=`), or null. */
export const tournamentId = params.get('t');

/** The standings after `round` (null: as they stand). */
export function standingsUrl(round = null) {
  return `api/tournaments/${tournamentId}/standings${round ? `?round=${round}` : ''}`;
}

/** @returns {Promise<Tournament>} */
export function getTournament() {
  return getJSON(`api/tournaments/${tournamentId}`);
}

/** @returns {Promise<Standings>} */
export function getStandings(round = null) {
  return getJSON(standingsUrl(round));
}

// ---- links ---------------------------------------------------------------------------------

/** The `round` of the page's address, kept on the links between the pages. */
export const chosenRound = Number(params.get('round')) || null;
const roundParam = () => (chosenRound ? `&round=${chosenRound}` : '');

export const standingsHref = () => `standings.html?t=${tournamentId}${roundParam()}`;
export const playerHref = (startRank) => `player.html?t=${tournamentId}&p=${startRank}${roundParam()}`;
export const teamHref = (number) => `team.html?t=${tournamentId}&team=${number}${roundParam()}`;
export const gameHref = (gameId) => `game.html?id=${gameId}`;

/**
 * The crumbs above a page: the tournament's standings, and its rounds.
 * @param {Tournament} t
 * @param {boolean} [here] the standings page itself (its link is not one)
 */
export function crumbs(t, here = false) {
  const nav = document.getElementById('crumbs');
  const rounds = [...t.rounds].sort((a, b) => Number(a.number) - Number(b.number));
  nav.replaceChildren(
    here ? el('strong', { text: t.name }) : el('a', { href: standingsHref(), text: `← ${t.name}: standings` }),
    ...(rounds.length ? [el('span', { class: 'muted', text: ' · Rounds: ' })] : []),
    ...rounds.flatMap((r, i) => [...(i ? [' '] : []),
      el('a', { href: `round.html?id=${r.id}`, text: r.number, 'aria-label': `Round ${r.number}` })]));
}

// ---- how the tables write things ---------------------------------------------------------

/** What each result code means, for a cell's title. */
const RESULT_NAMES = {
  1: 'won', '½': 'drawn', 0: 'lost', '+': 'won by forfeit', '-': 'lost by forfeit',
  H: 'half-point bye', F: 'full-point bye', U: 'bye of the pairing (a point)', Z: 'absent (no point)',
};

/** A result code as a table writes it: byes as the points they give. */
export function resultText(code) {
  switch (code) {
    case 'H': return '½';
    case 'F': case 'U': return '1';
    case 'Z': return '0';
    case '-': return '−';
    default: return code || '';
  }
}

/** What a result code means, in words ("" when not played). */
export function resultName(code) {
  return RESULT_NAMES[code] || '';
}

/** Whether a round's cell is a bye (no opponent, or a bye's code). */
export const isBye = (cell) => cell.opponent == null && cell.result !== '';

/** A tie-break's value: whole numbers as they are, others with up to two decimals. */
export function tiebreakText(value) {
  if (value == null) return '';
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 100) / 100);
}

/**
 * A tie-break code's name from the known codes (`GET api/tiebreaks`): a code with modifiers
 * ("BH/C1") by its base's, the modifiers after it; an unknown code as itself.
 * @param {Record<string, string>} names
 * @param {string} code
 */
export function codeName(names, code) {
  if (names[code]) return names[code];
  const base = code.split(/[:/]/)[0];
  return names[base] ? `${names[base]} (${code.slice(base.length)})` : code;
}

/** Points as a table writes them: "4½". */
export const pointsText = (points) => (points == null ? '' : formatPoints(points));

/** "+12.4" / "−3" for a rating change. */
export function signed(value, digits = 1) {
  const text = Math.abs(value).toFixed(digits).replace(/\.0+$/, '');
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : '0';
}

/**
 * A table's header cell (`scope="col"`), with a title saying what an abbreviation means.
 * @param {string} text
 * @param {{ title?: string, class?: string }} [attrs]
 */
export const colHead = (text, attrs = {}) => el('th', { scope: 'col', ...attrs, text });

// ---- spoiler-free ------------------------------------------------------------------------------
// Hides results, points, ranks by score and ratings won or lost until the user asks. Chosen
// per tournament and remembered in this browser; until then the organiser's default.

const spoilerKey = (tournament) => `relay.spoilerFree.${tournament}`;

/** Whether the user chose spoiler-free for this tournament: true, false, or null (not chosen). */
function spoilerChoice(tournament) {
  try {
    const v = localStorage.getItem(spoilerKey(tournament));
    return v === '1' ? true : v === '0' ? false : null;
  } catch { return null; }
}

/**
 * The spoiler-free switch in the page's header (`#spoiler-free`, a checkbox) and the notice
 * with its "Show results" button (`#spoiler-notice`). `onChange` runs on every change, and
 * with the first answer of `isOn` once the organiser's default is known (`setDefault`).
 * `tournament`: the page's `?t=`, or the tournament of the round or game a page shows.
 * @param {(on: boolean) => void} onChange
 * @param {string | number} [tournament]
 */
export function spoilerSwitch(onChange, tournament = tournamentId) {
  const box = /** @type {HTMLInputElement} */ (document.getElementById('spoiler-free'));
  const notice = document.getElementById('spoiler-notice');
  let byDefault = false;
  const isOn = () => spoilerChoice(tournament) ?? byDefault;
  const show = () => {
    const on = isOn();
    box.checked = on;
    notice.hidden = !on;
    document.body.classList.toggle('spoiler-free', on);
  };
  const choose = (on) => {
    try { localStorage.setItem(spoilerKey(tournament), on ? '1' : '0'); } catch { /* storage disabled */ }
    show();
    onChange(on);
  };
  box.addEventListener('change', () => choose(box.checked));
  document.getElementById('show-results').addEventListener('click', () => choose(false));
  // Another tab of the same tournament switched it.
  window.addEventListener('storage', (e) => {
    if (e.key === spoilerKey(tournament)) { show(); onChange(isOn()); }
  });
  show();
  return {
    isOn,
    /** The organiser's default (the standings' `spoiler_free_default`). */
    setDefault(on) {
      if (byDefault === on) return;
      byDefault = Boolean(on);
      show();
    },
  };
}

// ---- live -------------------------------------------------------------------------------------

// Never more than one refetch a second, however many results come at once (a round's last
// games often end together); and one a minute besides, for a correction in an older round or
// a round newly paired, which the socket of the newest round does not carry.
const MIN_GAP_MS = 1000;
const SETTLE_MS = 2500;
const POLL_MS = 60000;

/**
 * Keeps a page current: follows the tournament's newest round on its WebSocket (the round
 * page's feed) and calls `refresh` when a result comes or a game is added, at most once a
 * second; and every minute while the page is shown. `refresh` gives the tournament as it
 * now stands, so a new round is followed once it appears.
 * @param {Tournament} tournament
 * @param {() => Promise<Tournament | void>} refresh
 */
export function followResults(tournament, refresh) {
  let socket = null;
  let followed = null;
  let lastAt = 0;
  let timer = null;
  let running = false;
  let again = false;

  const newest = (t) => t.rounds.reduce((a, r) => (!a || Number(r.number) > Number(a.number) ? r : a), null);

  function follow(t) {
    const round = t && newest(t);
    // No round yet: nothing to follow but the minute's poll.
    document.getElementById('live-status').hidden = !round;
    if (!round || round.id === followed) return;
    followed = round.id;
    if (socket) socket.close();
    let snapshots = 0;
    socket = liveSocket(`api/rounds/${round.id}/ws`, (msg) => {
      // The first snapshot is the round as the page already has it; one after a reconnect
      // may carry results missed meanwhile.
      if (msg.type === 'snapshot' && snapshots++ === 0) return;
      if (msg.type === 'result' || msg.type === 'game' || msg.type === 'snapshot') news();
    }, showStatus);
  }

  async function run() {
    timer = null;
    if (running) { again = true; return; }
    running = true;
    lastAt = performance.now();
    try {
      const t = await refresh();
      if (t) follow(t);
    } catch { /* the next result or poll tries again */ }
    running = false;
    if (again) { again = false; schedule(); }
  }

  function schedule() {
    if (timer) return;
    timer = setTimeout(run, Math.max(0, lastAt + MIN_GAP_MS - performance.now()));
  }

  // A result is read at once, and once more when the burst is over: the server computes the
  // standings at most once a second too, so a read right after another may get the standings
  // of a moment before the result.
  let settle = null;
  function news() {
    schedule();
    clearTimeout(settle);
    settle = setTimeout(schedule, SETTLE_MS);
  }

  setInterval(() => { if (!document.hidden) schedule(); }, POLL_MS);
  lastAt = performance.now();
  follow(tournament);
  return { schedule };
}

/** Shows `text` in the page's `#message`, or hides it. */
export function pageMessage(text) {
  const message = document.getElementById('message');
  message.textContent = text || '';
  message.hidden = !text;
}
