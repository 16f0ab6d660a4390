// Round page: every board of a round as a grid of small cards, live.
//
// A round can have 700 boards. Every card's text (names, result, last move)
// and its evaluation bar (made once the game has an evaluation) are kept current,
// which is cheap; a board (chessground)
// is only made, and running clocks only tick, while the card is on or near the
// screen (IntersectionObserver). A board that leaves is destroyed and its card
// shows a plain square again, so the page holds a few dozen boards, not 700.
//
// Spoiler-free (the tournament's switch, spoiler.js): the results, the team matches' scores
// and the evaluation bars are hidden until asked; the moves and clocks play on.

import { getJSON, liveSocket, applyGameEvent, showStatus, serverNow } from './api.js';
import { ground, position } from './ground.js';
import { evalBar, matedBy } from './eval.js';
import { pageSpoiler } from './spoiler.js';
import {
  el, formatClock, formatResult, lastMoveLabel, playerParts, clockMs, fold, ratingAndFederation, teamMatches, formatPoints,
} from './format.js';

/** @typedef {import('../types/ws-messages').ServerMessage} ServerMessage */
/** @typedef {import('../types/ws-messages').RoundView} RoundView */
/** @typedef {import('../types/ws-messages').GameView} GameView */
/** @typedef {import('./ground.js').Ground} Ground */
/** @typedef {import('./eval.js').Eval} Eval */
/** @typedef {import('./eval.js').EvalEntry} EvalEntry */
/**
 * A board's card: its game, the card, whether it is on or near the screen, its board while
 * it is (`ground`) and the key of the position drawn on it (or null), its evaluation bar and
 * the evaluation it shows, what the filter matches, and the board number it was placed as.
 * @typedef {{ game: GameView, card: HTMLElement, visible: boolean, drawn: string | null,
 *   ground: Ground | null, bar: ReturnType<typeof evalBar> | null, shownEval?: Eval | null,
 *   search?: string, placedAs?: string }} Entry
 */

const roundId = new URLSearchParams(location.search).get('id');
const grid = document.getElementById('grid');
const filter = /** @type {HTMLInputElement} */ (document.getElementById('filter'));

/** @type {Map<number, Entry>} game id → its card */
const entries = new Map();
let socket = null;

// Switched: every card's result and bar, and the matches' scores, shown or hidden.
const spoiler = pageSpoiler(() => {
  for (const entry of entries.values()) {
    showResult(entry);
    showEval(entry);
  }
  showMatches();
});

const observer = new IntersectionObserver((changes) => {
  for (const change of changes) {
    const entry = entries.get(Number(/** @type {HTMLElement} */ (change.target).dataset.gameId));
    if (!entry) continue;
    entry.visible = change.isIntersecting;
    if (entry.visible) {
      updateClocks(entry, serverNow());
      drawBoard(entry);
    } else if (entry.ground) {
      entry.ground.destroy();
      entry.ground = null;
      entry.card.querySelector('.board-link').replaceChildren();
      entry.drawn = null;
    }
  }
}, { rootMargin: '400px 0px' });

function playerRow(side) {
  return el('div', { class: 'player' },
    el('span', { class: 'title' }),
    el('span', { class: `name ${side}-name` }),
    el('span', { class: 'rating' }),
    el('span', { class: `clock ${side}-clock` }));
}

/** @param {GameView} game */
function createEntry(game) {
  const href = `game.html?id=${game.id}`;
  const card = el('article', { class: 'board-card', 'data-game-id': game.id },
    el('header', {}, el('span', { class: 'board-no' }), el('span', { class: 'result' })),
    playerRow('black'),
    // The board links too, but only the footer link takes keyboard focus.
    el('a', { class: 'board-link', href, tabindex: '-1' }),
    playerRow('white'),
    el('footer', {}, el('span', { class: 'last-move' }), el('a', { href, text: 'Game ›', 'aria-label': `Board ${game.board_no}: open the game` })));
  /** @type {Entry} */
  const entry = { game, card, visible: false, drawn: null, ground: null, bar: null };
  entries.set(game.id, entry);
  observer.observe(card);
  return entry;
}

function updateCard(entry) {
  const { game, card } = entry;
  card.dataset.boardNo = game.board_no;
  // Spectators' snapshots carry each game's last move only: its ply is the count.
  card.dataset.plies = game.moves.length ? game.moves[game.moves.length - 1].ply : 0;
  card.dataset.status = game.status;
  const chess960 = game.chess960;
  card.querySelector('.board-no').textContent = `Board ${game.board_no}${chess960 != null ? ` · Chess960 #${chess960}` : ''}`;
  showResult(entry);
  card.querySelector('footer .last-move').textContent = lastMoveLabel(game);

  const rows = card.querySelectorAll('.player');
  ['black', 'white'].forEach((side, i) => {
    const { name, title, team } = playerParts(game[side]);
    rows[i].querySelector('.title').textContent = title;
    rows[i].querySelector('.name').textContent = name;
    rows[i].querySelector('.name').title = team ? `${name} (${team})` : name;
    rows[i].querySelector('.rating').textContent = ratingAndFederation(game[side]);
  });
  entry.search = fold(`${playerParts(game.white).name} ${playerParts(game.black).name}`);
  card.hidden = !matches(entry);
  updateClocks(entry, serverNow());
  showEval(entry);
  if (entry.visible) drawBoard(entry);
}

/** The card's result; spoiler-free, none (nor its code on the card). */
function showResult(entry) {
  const result = entry.card.querySelector('.result');
  if (spoiler.hidden()) {
    result.textContent = '';
    delete result.dataset.result;
    return;
  }
  result.textContent = formatResult(entry.game.result);
  result.dataset.result = entry.game.result;
}

/** Whether an engine evaluates this round (the relay says so, or any evaluation seen). */
let evaluated = false;

/**
 * The bar from the last move's evaluation; until the new position has one, the last one
 * shown, marked as older; full for the winner after a mate on the board. Hidden while the
 * game has had none, and spoiler-free (not made until then).
 * @param {Entry} entry
 */
function showEval(entry) {
  const last = entry.game.moves[entry.game.moves.length - 1];
  const ev = last?.eval;
  if (ev) evaluated = true;
  // A mate gets a bar only where an engine evaluates the round's games.
  const mated = ev || !evaluated ? null : matedBy(last, entry.game.start_fen);
  if (ev) entry.shownEval = ev;
  else if (!last) entry.shownEval = null;
  if (!entry.bar && !entry.shownEval && !mated) return;
  if (spoiler.hidden()) {
    if (entry.bar) entry.bar.bar.hidden = true;
    return;
  }
  if (!entry.bar) {
    // Under the board; a round without an engine never makes one.
    entry.bar = evalBar({ horizontal: true });
    entry.card.querySelector('.board-link').after(entry.bar.bar);
  }
  entry.bar.bar.hidden = !entry.shownEval && !mated;
  if (mated) entry.bar.show(null, { mated });
  else if (entry.shownEval) entry.bar.show(entry.shownEval, { stale: !ev });
}

/**
 * An `eval` message: each evaluation of a game's last position goes to its card's bar.
 * @param {EvalEntry[]} evals
 */
function onEvals(evals) {
  for (const e of evals) {
    const entry = entries.get(e.game_id);
    const last = entry?.game.moves[entry.game.moves.length - 1];
    if (!last || last.ply !== e.ply) continue;
    last.eval = { cp: e.cp, mate: e.mate, depth: e.depth, line: e.line, engine: e.engine };
    showEval(entry);
  }
}

function updateClocks(entry, now) {
  for (const side of ['white', 'black']) {
    const node = entry.card.querySelector(`.${side}-clock`);
    const text = formatClock(clockMs(entry.game, side, now));
    if (node.textContent !== text) node.textContent = text;
    node.classList.toggle('running', entry.game.clock?.running === side);
  }
}

/** Makes the card's board, or brings it to the game's position (the move animated). */
function drawBoard(entry) {
  const { game } = entry;
  const last = game.moves[game.moves.length - 1];
  const key = `${game.fen}|${last ? last.uci : ''}`;
  if (entry.drawn === key) return;
  const link = entry.card.querySelector('.board-link');
  link.setAttribute('aria-label', `Board ${game.board_no}: ${last ? `position after ${lastMoveLabel(game)}` : 'starting position'}`);
  const config = position(game.fen, last);
  if (entry.ground) entry.ground.set(config);
  else {
    const node = el('div', { class: 'card-ground' });
    link.replaceChildren(node);
    entry.ground = ground(node, config);
  }
  entry.drawn = key;
}

// ---- the filter ---------------------------------------------------------------

function matches(entry) {
  const query = fold(filter.value.trim());
  if (!query) return true;
  return entry.search.includes(query) || String(entry.game.board_no) === query;
}

function applyFilter() {
  let shown = 0;
  for (const entry of entries.values()) {
    entry.card.hidden = !matches(entry);
    if (!entry.card.hidden) shown += 1;
  }
  const total = entries.size;
  document.getElementById('count').textContent =
    shown === total ? `${total} board${total === 1 ? '' : 's'}` : `${shown} of ${total} boards`;
  // Keep the filter in the address so a filtered view can be shared.
  const url = new URL(location.href);
  if (filter.value.trim()) url.searchParams.set('q', filter.value.trim());
  else url.searchParams.delete('q');
  history.replaceState(null, '', url);
}

// ---- state ----------------------------------------------------------------

// The grid's first showing is marked for the browser tests' timings (once: a mark each).
let shown = false;
function markShown() {
  if (shown) return;
  shown = true;
  performance.mark('relay:round-shown');
  requestAnimationFrame(() => setTimeout(() => performance.mark('relay:round-painted'), 0));
}

/** @param {RoundView} round */
function setRound(round) {
  document.getElementById('title').textContent = `${round.tournament}: Round ${round.number}`;
  document.title = `${round.tournament}, Round ${round.number} · relay`;
  const notes = [round.final ? 'final' : null, round.delay_secs ? `moves shown ${round.delay_secs} s late` : null];
  document.getElementById('meta').textContent = notes.filter(Boolean).join(' · ');
  /** @type {HTMLAnchorElement} */ (document.getElementById('standings-link')).href = `standings.html?t=${round.tournament_id}`;

  spoiler.know(round.tournament_id);
  byes = round.byes || [];
  evaluated = evaluated || round.evaluated || round.games.some((g) => g.moves[g.moves.length - 1]?.eval);
  const ids = new Set(round.games.map((g) => g.id));
  for (const [id, entry] of entries) {
    if (ids.has(id)) continue;
    observer.unobserve(entry.card);
    entry.ground?.destroy();
    entry.card.remove();
    entries.delete(id);
  }
  for (const game of round.games) upsertGame(game, false);
  placeCards();
  if (round.games.length) markShown();
}

/** @param {GameView} game */
function upsertGame(game, place = true) {
  if (String(game.round_id) !== String(roundId)) return;
  const entry = entries.get(game.id) || createEntry(game);
  const isNew = !entry.card.isConnected;
  entry.game = game;
  updateCard(entry);
  if (place && (isNew || entry.card.dataset.boardNo !== entry.placedAs)) schedulePlaceCards();
}

// New pairings announce every game of the round at once, a message each; placing all the
// cards for each of 700 messages froze the page. They are placed once the burst is read.
let placing = null;
function schedulePlaceCards() {
  if (!placing) placing = setTimeout(() => { placing = null; placeCards(); }, 16);
}

/** Puts the cards in board order; append() moves nodes that are already there. */
function placeCards() {
  const sorted = [...entries.values()].sort((a, b) => a.game.board_no - b.game.board_no);
  grid.append(...sorted.map((e) => e.card));
  for (const e of sorted) e.placedAs = e.card.dataset.boardNo;
  applyFilter();
  showMatches();
}

// A team round's matches and their scores, above the boards (made from the games, so they
// follow every result; spoiler-free, without the scores); a round's byes below them.
let byes = [];
let matchesShown = '';
function showMatches() {
  const list = document.getElementById('matches');
  const matches = teamMatches([...entries.values()].map((e) => e.game), byes);
  const hide = spoiler.hidden();
  const key = JSON.stringify([matches, byes, hide]);
  if (key === matchesShown) return;
  matchesShown = key;
  list.hidden = !matches.length && !byes.length;
  list.replaceChildren(
    ...matches.map((m) => el('li', { class: 'match' },
      el('span', { class: 'team', text: m.first }),
      hide ? ' – '
        : el('strong', { class: 'score', text: ` ${formatPoints(m.first_points)} – ${formatPoints(m.second_points)} ` }),
      el('span', { class: 'team', text: m.second }),
      el('span', { class: 'muted', text: ` (boards ${m.boards[0]}–${m.boards[m.boards.length - 1]})` }))),
    ...(byes.length ? [el('li', { class: 'byes muted', text: `Byes: ${byes.map((b) => `${b.name || `no. ${b.start_rank}`} (${b.code}, ${formatPoints(b.points)})`).join(', ')}` })] : []));
}

/** @param {ServerMessage} msg */
function onMessage(msg) {
  if (msg.type === 'eval') {
    if (Array.isArray(msg.evals)) onEvals(msg.evals);
    return;
  }
  if (msg.type === 'snapshot' && msg.round) return setRound(msg.round);
  if (msg.type === 'game' && msg.game) return upsertGame(msg.game);
  if (!('game_id' in msg)) return;
  const entry = entries.get(msg.game_id);
  if (!entry) return;
  const changed = applyGameEvent(entry.game, msg);
  if (changed === 'gap') socket.resync();
  else if (changed) {
    updateCard(entry);
    if (msg.type === 'result') showMatches();
  }
}

// Running clocks tick locally, only on cards on screen (700 clocks rewritten
// every second would cost a layout of the whole grid each time); the others
// catch up when they scroll in or their game changes.
setInterval(() => {
  const now = serverNow();
  for (const entry of entries.values()) {
    if (entry.visible && entry.game.clock?.running) updateClocks(entry, now);
  }
}, 250);

async function start() {
  const message = document.getElementById('message');
  if (!roundId) {
    message.textContent = 'No round given. Pick one on the start page.';
    message.hidden = false;
    return;
  }
  filter.value = new URLSearchParams(location.search).get('q') || '';
  filter.addEventListener('input', applyFilter);
  const pgn = /** @type {HTMLAnchorElement} */ (document.getElementById('round-pgn'));
  pgn.href = `api/rounds/${roundId}/pgn`;
  pgn.download = `round-${roundId}.pgn`;
  // The tournament's standings and crosstable (its id comes with the round).
  pgn.before(el('a', { id: 'standings-link', class: 'button', href: '#', text: 'Standings' }));

  let since;
  try {
    /** @type {RoundView} */
    const round = await getJSON(`api/rounds/${roundId}`);
    setRound(round);
    since = round.seq;
  } catch (err) {
    if (err.status === 404) {
      message.textContent = 'This round does not exist.';
      message.hidden = false;
      showStatus('offline');
      return;
    }
    // Otherwise the socket's snapshot will fill the page when it connects.
  }
  socket = liveSocket(`api/rounds/${roundId}/ws`, onMessage, showStatus, { since });
}

start();
