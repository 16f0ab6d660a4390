// The embeds: one game's board (embed/game.html?id=G) or a round's boards as a compact grid
// (embed/round.html?id=R), live over the same public sockets as the pages (the same delay as
// every spectator), for a frame on an organiser's site (see relay-board.js).
//
// ?theme= takes board colours (brown, blue) and page backgrounds (light, dark), several at
// once ("blue,dark"); ?orientation=black turns a game's board.
//
// Once the first snapshot is shown, and again after each update, the page tells the page
// around it: postMessage({relay: 'embed', kind, id, ply, height}), where `ply` is the game's
// last ply (a round: its games' plies added up) and `height` what the content needs, which
// relay-board.js sizes the frame by.

import { getJSON, liveSocket, applyGameEvent, serverNow } from '../js/api.js';
import { ground, position, BOARD_THEMES } from '../js/ground.js';
import { el, formatClock, formatResult, playerParts, clockMs } from '../js/format.js';

/** @typedef {import('../types/ws-messages').ServerMessage} ServerMessage */
/** @typedef {import('../types/ws-messages').GameView} GameView */
/** @typedef {import('../js/ground.js').Ground} Ground */

const params = new URLSearchParams(location.search);
const kind = document.body.dataset.kind === 'round' ? 'round' : 'game';
const id = params.get('id');
const root = document.getElementById('embed');

for (const word of (params.get('theme') || '').toLowerCase().split(/[\s,]+/)) {
  if (BOARD_THEMES.includes(word)) document.body.classList.add(`board-${word}`);
  if (word === 'dark' || word === 'light') document.body.classList.add(`page-${word}`);
}

/** @param {string} text */
function fail(text) {
  const message = document.getElementById('message');
  message.textContent = text;
  message.hidden = false;
  tell();
}

let ply = 0;
let told = false;
let telling = null;
/**
 * Tells the host page what is shown (see the top), once for a burst of updates: measuring
 * the height lays the page out, which a round's every message must not cost (invariant 21).
 */
function tell() {
  if (telling) return;
  telling = setTimeout(() => {
    telling = null;
    told = true;
    // The content's own height (the document's is never less than the frame's).
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (window.parent !== window) window.parent.postMessage({ relay: 'embed', kind, id, ply, height }, '*');
  }, 50);
}
// The content's height changes with the frame's width (the host's layout): say so.
new ResizeObserver(() => { if (told) tell(); }).observe(document.body);

/** The last ply of a game (0 before its first move). @param {GameView} game */
const lastPly = (game) => (game.moves.length ? game.moves[game.moves.length - 1].ply : 0);

/** A name line with its clock. @param {string} side */
function playerLine(side) {
  return el('div', { class: `embed-player ${side}` },
    el('span', { class: 'title' }), el('span', { class: 'name' }), el('span', { class: 'clock' }));
}

/**
 * @param {HTMLElement} line
 * @param {GameView} game
 * @param {'white' | 'black'} side
 */
function showPlayer(line, game, side) {
  const { name, title } = playerParts(game[side]);
  line.querySelector('.title').textContent = title;
  line.querySelector('.name').textContent = name;
}

// ---- one game -------------------------------------------------------------------

function startGame() {
  const black = params.get('orientation') === 'black';
  const top = playerLine(black ? 'white' : 'black');
  const bottom = playerLine(black ? 'black' : 'white');
  const boardNode = el('div', { class: 'game-board', role: 'img', 'aria-label': 'Chess board' });
  const link = el('a', { class: 'embed-board-link', href: `../game.html?id=${encodeURIComponent(id)}`, target: '_blank', rel: 'noopener' }, boardNode);
  const result = el('span', { class: 'embed-result' });
  root.replaceChildren(el('div', { class: 'embed-game' }, top, link, bottom, result));
  /** @type {GameView | null} */
  let game = null;
  /** @type {Ground | null} */
  let board = null;
  let socket = null;

  function tick() {
    if (!game) return;
    const now = serverNow();
    for (const line of [top, bottom]) {
      const side = line.classList.contains('white') ? 'white' : 'black';
      const node = line.querySelector('.clock');
      const text = formatClock(clockMs(game, side, now));
      if (node.textContent !== text) node.textContent = text;
      node.classList.toggle('running', game.clock?.running === side);
    }
  }
  setInterval(tick, 250);

  function show() {
    const last = game.moves[game.moves.length - 1];
    showPlayer(top, game, top.classList.contains('white') ? 'white' : 'black');
    showPlayer(bottom, game, bottom.classList.contains('white') ? 'white' : 'black');
    const config = { ...position(game.fen, last), orientation: /** @type {'white' | 'black'} */ (black ? 'black' : 'white') };
    if (board) board.set(config);
    else board = ground(boardNode, { ...config, coordinates: false });
    const names = `${playerParts(game.white).name} – ${playerParts(game.black).name}`;
    boardNode.setAttribute('aria-label', `${names}, board ${game.board_no}: ${last ? `after ${last.san}` : 'starting position'}`);
    document.title = `${names} · relay`;
    result.textContent = formatResult(game.result);
    tick();
    ply = lastPly(game);
    tell();
  }

  /** @param {ServerMessage} msg */
  function onMessage(msg) {
    if ((msg.type === 'snapshot' || msg.type === 'game') && msg.game) {
      if (String(msg.game.id) !== String(id)) return;
      game = msg.game;
      return show();
    }
    if (!game || !('game_id' in msg) || msg.game_id !== game.id) return;
    const changed = applyGameEvent(game, msg);
    if (changed === 'gap') return socket.resync();
    if (!changed) return;
    if (msg.type === 'clock') return tick();
    show();
  }

  getJSON(`../api/games/${encodeURIComponent(id)}`).then((g) => {
    if (!game) {
      game = g;
      show();
    }
  }, (err) => {
    if (err.status === 404) fail('No such game.');
  });
  // GameView carries no seq: this socket starts with a snapshot.
  socket = liveSocket(`../api/games/${encodeURIComponent(id)}/ws`, onMessage, () => {});
}

// ---- a round ----------------------------------------------------------------------

function startRound() {
  const grid = el('div', { class: 'embed-grid' });
  root.replaceChildren(grid);
  /** @type {Map<number, { game: GameView, card: HTMLElement, ground: Ground | null, drawn: string | null, visible: boolean, ply: number }>} */
  const entries = new Map();
  let socket = null;

  // Only boards on or near the screen are made (as on the round page).
  const observer = new IntersectionObserver((changes) => {
    for (const change of changes) {
      const entry = entries.get(Number(/** @type {HTMLElement} */ (change.target).dataset.gameId));
      if (!entry) continue;
      entry.visible = change.isIntersecting;
      if (entry.visible) draw(entry);
      else if (entry.ground) {
        entry.ground.destroy();
        entry.ground = null;
        entry.drawn = null;
        entry.card.querySelector('.embed-board-link').replaceChildren();
      }
    }
  }, { rootMargin: '300px 0px' });

  function draw(entry) {
    const { game } = entry;
    const last = game.moves[game.moves.length - 1];
    const key = `${game.fen}|${last ? last.uci : ''}`;
    if (entry.drawn === key) return;
    if (entry.ground) entry.ground.set(position(game.fen, last));
    else {
      const node = el('div', { class: 'card-ground' });
      entry.card.querySelector('.embed-board-link').replaceChildren(node);
      entry.ground = ground(node, position(game.fen, last));
    }
    entry.drawn = key;
  }

  /** Brings a game's card up to date, and the round's ply count with it. */
  function update(entry) {
    const { game, card } = entry;
    card.querySelector('.board-no').textContent = String(game.board_no);
    card.querySelector('.result').textContent = formatResult(game.result);
    card.querySelector('.names').textContent = `${playerParts(game.white).name} – ${playerParts(game.black).name}`;
    card.dataset.plies = String(lastPly(game));
    ply += lastPly(game) - entry.ply;
    entry.ply = lastPly(game);
    if (entry.visible) draw(entry);
  }

  /** @param {GameView} game */
  function upsert(game) {
    if (String(game.round_id) !== String(id)) return;
    let entry = entries.get(game.id);
    if (!entry) {
      const card = el('article', { class: 'embed-card', 'data-game-id': game.id },
        el('header', {}, el('span', { class: 'board-no' }), el('span', { class: 'result' })),
        el('a', { class: 'embed-board-link board-link', href: `../game.html?id=${game.id}`, target: '_blank', rel: 'noopener', tabindex: '-1' }),
        el('div', { class: 'names' }));
      entry = { game, card, ground: null, drawn: null, visible: false, ply: 0 };
      entries.set(game.id, entry);
      observer.observe(card);
    }
    entry.game = game;
    update(entry);
  }

  let placing = null;
  function place() {
    if (placing) return;
    placing = setTimeout(() => {
      placing = null;
      const sorted = [...entries.values()].sort((a, b) => a.game.board_no - b.game.board_no);
      grid.append(...sorted.map((e) => e.card));
      tell();
    }, 16);
  }

  /** @param {import('../types/ws-messages').RoundView} round */
  function setRound(round) {
    document.title = `${round.tournament}, Round ${round.number} · relay`;
    const ids = new Set(round.games.map((g) => g.id));
    for (const [gid, entry] of entries) {
      if (ids.has(gid)) continue;
      observer.unobserve(entry.card);
      entry.ground?.destroy();
      entry.card.remove();
      ply -= entry.ply;
      entries.delete(gid);
    }
    for (const game of round.games) upsert(game);
    place();
  }

  /** @param {ServerMessage} msg */
  function onMessage(msg) {
    if (msg.type === 'snapshot' && msg.round) return setRound(msg.round);
    if (msg.type === 'game' && msg.game) {
      upsert(msg.game);
      return place();
    }
    if (!('game_id' in msg)) return;
    const entry = entries.get(msg.game_id);
    if (!entry) return;
    const changed = applyGameEvent(entry.game, msg);
    if (changed === 'gap') return socket.resync();
    if (!changed || msg.type === 'clock') return;
    update(entry);
    tell();
  }

  let since;
  getJSON(`../api/rounds/${encodeURIComponent(id)}`).then((round) => {
    setRound(round);
    since = round.seq;
  }, (err) => {
    if (err.status === 404) fail('No such round.');
  }).finally(() => {
    socket = liveSocket(`../api/rounds/${encodeURIComponent(id)}/ws`, onMessage, () => {}, { since });
  });
}

if (!id) fail('No game or round given (?id=).');
else if (kind === 'round') startRound();
else startGame();
