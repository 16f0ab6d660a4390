// Game page: one large board, the moves with their clocks, live.
//
// `view` is the ply on the board (0 = start position). While the viewer is
// at the last move (`following`), new moves move the board along; once they
// step back, the board stays where they put it.
//
// Spoiler-free (the tournament's switch, spoiler.js): the result and the engine's evaluation
// are hidden until asked; the moves and clocks play on, the PGN can still be downloaded.

import { getJSON, liveSocket, applyGameEvent, showStatus, serverNow } from './api.js';
import { ground, position } from './ground.js';
import { evalBar, formatLine, formatScore, matedBy } from './eval.js';
import { pageSpoiler, tournamentOfRound } from './spoiler.js';
import {
  el, formatClock, formatEmt, formatResult, moveLabel, moveNumber, playerParts, playerText, clockMs, ratingAndFederation,
} from './format.js';

/** @typedef {import('../types/ws-messages').ServerMessage} ServerMessage */
/** @typedef {import('../types/ws-messages').GameView} GameView */
/** @typedef {import('./eval.js').EvalEntry} EvalEntry */
/** @typedef {import('./ground.js').Ground} Ground */

const gameId = new URLSearchParams(location.search).get('id');
/**
 * The element with this id (typed `any`: the checker holds the page to the server's data).
 * @param {string} id
 * @returns {any}
 */
const $ = (id) => document.getElementById(id);

/** @type {GameView | null} */
let game = null;
let view = 0;
let following = true;
let flipped = false;
let socket = null;
/** @type {Ground | null} the board, made with the first game shown */
let board = null;
/** Whether any position of the game has an engine's evaluation (until then none is shown). */
let evaluated = false;
const bar = evalBar();
bar.bar.hidden = true;
document.querySelector('.board-row').prepend(bar.bar);

const spoiler = pageSpoiler(() => {
  if (!game) return;
  renderResult();
  showEval();
});
/** Whether the game's tournament is known or being looked for (a game names its round). */
let seeking = false;
/**
 * Finds the game's tournament and its spoiler-free default. Not found (the network): looked
 * for again with the game's next news, the result and evaluations hidden till then.
 * @param {number} roundId
 * @param {Promise<any>} [list] the tournaments' list, if already asked for
 */
function findTournament(roundId, list) {
  if (seeking) return Promise.resolve();
  seeking = true;
  return tournamentOfRound(roundId, list)
    .then((t) => (t == null ? Promise.reject(new Error('no tournament')) : spoiler.know(t)))
    .catch(() => { seeking = false; });
}

// ---- rendering ---------------------------------------------------------------

function fenAt(ply) {
  return ply === 0 ? game.start_fen : game.moves[ply - 1].fen;
}

function renderAll() {
  const title = `${playerText(game.white)} – ${playerText(game.black)}`;
  $('title').textContent = `${playerParts(game.white).name} – ${playerParts(game.black).name}`;
  document.title = `${title} · relay`;
  $('round-link').href = `round.html?id=${game.round_id}`;
  $('board-no').textContent = `Board ${game.board_no}`;
  const chess960 = game.chess960;
  $('variant').textContent = chess960 != null ? `Chess960 #${chess960}` : '';
  const pgn = $('download-pgn');
  pgn.href = `api/games/${game.id}/pgn`;
  pgn.download = `game-${game.id}.pgn`;
  for (const side of ['white', 'black']) {
    const { name, title: t, team } = playerParts(game[side]);
    $(`${side}-title`).textContent = t;
    $(`${side}-name`).textContent = team ? `${name} (${team})` : name;
    $(`${side}-rating`).textContent = ratingAndFederation(game[side]);
  }
  renderMoves();
  renderResult();
  renderBoardView();
  tick();
}

function renderResult() {
  // Spoiler-free: no result, nor whether the game is over.
  const hidden = spoiler.hidden();
  $('result').parentElement.hidden = hidden;
  if (hidden) {
    $('result').textContent = $('termination').textContent = '';
    return;
  }
  // A pending game can have moves an arbiter entered from a score sheet: it has started.
  const started = game.status !== 'pending' || game.moves.length > 0;
  $('result').textContent = formatResult(game.result) || (started ? 'in play' : 'not started');
  $('termination').textContent = game.termination || (game.status === 'finished' ? 'result not yet confirmed' : '');
}

/** The move list: a three-column grid (number, White's move, Black's move). */
function renderMoves() {
  const list = $('moves');
  const cells = [];
  game.moves.forEach((move, i) => {
    const { number, white } = moveNumber(move.ply, game.start_fen);
    if (white || i === 0) cells.push(el('span', { class: 'move-no', text: `${number}.` }));
    if (!white && i === 0) cells.push(el('span', { class: 'cell', text: '…' }));
    const clock = move.clk_ms == null ? '' : formatClock(move.clk_ms);
    const spent = move.emt_ms == null ? '' : ` (${formatEmt(move.emt_ms)})`;
    cells.push(el('span', { class: 'cell' },
      el('span', { class: 'move', 'data-ply': move.ply, text: move.san }),
      clock || spent ? el('span', { class: 'clk', title: 'clock after the move (time spent)', text: clock + spent }) : null));
  });
  if (!game.moves.length) cells.push(el('span', { class: 'muted', style: 'grid-column: 1 / -1', text: 'No moves yet.' }));
  list.replaceChildren(...cells);

  const last = game.moves[game.moves.length - 1];
  // Written only when it changes: aria-live would announce a rewrite again.
  const latest = last ? `Last move: ${moveLabel(last.ply, last.san, game.start_fen)}` : '';
  if ($('latest').textContent !== latest) $('latest').textContent = latest;
}

function renderBoardView() {
  const move = game.moves[view - 1];
  const label = `Board ${game.board_no}: ${move ? `position after ${moveLabel(move.ply, move.san, game.start_fen)}` : 'starting position'}`;
  /** @type {import('./ground.js').GroundConfig} */
  const config = { ...position(fenAt(view), move), orientation: flipped ? 'black' : 'white' };
  if (board) board.set(config);
  else board = ground($('board'), { ...config, coordinates: true });
  $('board').setAttribute('aria-label', label);
  $('board-area').classList.toggle('flipped', flipped);
  showEval();

  for (const node of $('moves').querySelectorAll('.move.current')) node.classList.remove('current');
  const current = $('moves').querySelector(`.move[data-ply="${view}"]`);
  if (current) {
    current.classList.add('current');
    // Scroll only the list: scrollIntoView would also scroll the page on phones.
    const list = $('moves'); // position: relative, so offsetTop is within the list
    const top = current.offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - current.offsetHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }
  $('prev').disabled = $('first').disabled = view === 0;
  $('next').disabled = $('last').disabled = view === game.moves.length;
}

/**
 * The engine's word on the position shown: the bar beside the board, score, depth, line.
 * None spoiler-free (the bar and the analysis hidden, emptied).
 */
function showEval() {
  const hidden = spoiler.hidden();
  const ev = hidden ? null : game.moves[view - 1]?.eval;
  const mated = ev || hidden ? null : matedBy(game.moves[view - 1], game.start_fen);
  bar.bar.hidden = !evaluated || hidden;
  $('analysis').hidden = !evaluated || hidden;
  bar.show(ev, { flipped, mated });
  if (!evaluated || hidden) {
    for (const id of ['eval-score', 'eval-depth', 'eval-engine', 'eval-line']) $(id).textContent = '';
    return;
  }
  $('eval-score').textContent = ev ? formatScore(ev) : mated ? 'Checkmate' : 'No evaluation of this position yet';
  $('eval-depth').textContent = ev ? `depth ${ev.depth}` : '';
  $('eval-engine').textContent = ev ? ev.engine : '';
  $('eval-line').textContent = ev ? formatLine(ev.line, view, game.start_fen) : '';
}

/**
 * Evaluations of this game's positions, several to a message: each is kept on its move, and
 * shown if it is the position on the board.
 * @param {EvalEntry[]} evals
 */
function onEvals(evals) {
  let showing = false;
  for (const e of evals) {
    if (e.game_id !== game.id) continue;
    const move = game.moves.find((m) => m.ply === e.ply);
    if (!move) continue;
    move.eval = { cp: e.cp, mate: e.mate, depth: e.depth, line: e.line, engine: e.engine };
    evaluated = true;
    if (e.ply === view) showing = true;
  }
  if (showing || (evaluated && $('analysis').hidden && !spoiler.hidden())) showEval();
}

function tick() {
  if (!game) return;
  const now = serverNow();
  for (const side of ['white', 'black']) {
    const node = $(`${side}-clock`);
    const text = formatClock(clockMs(game, side, now));
    if (node.textContent !== text) node.textContent = text;
    node.classList.toggle('running', game.clock?.running === side);
  }
}
setInterval(tick, 250);

// ---- navigation ---------------------------------------------------------------

function goTo(ply) {
  if (!game) return;
  view = Math.max(0, Math.min(ply, game.moves.length));
  following = view === game.moves.length;
  renderBoardView();
}

document.addEventListener('keydown', (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (/** @type {Element} */ (event.target).closest?.('input, textarea, select')) return;
  const targets = { ArrowLeft: view - 1, ArrowRight: view + 1, Home: 0, End: Infinity };
  if (!(event.key in targets)) return;
  event.preventDefault();
  goTo(targets[event.key]);
});

$('moves').addEventListener('click', (event) => {
  const move = event.target.closest('.move');
  if (move) goTo(Number(move.dataset.ply));
});
$('first').addEventListener('click', () => goTo(0));
$('prev').addEventListener('click', () => goTo(view - 1));
$('next').addEventListener('click', () => goTo(view + 1));
$('last').addEventListener('click', () => goTo(Infinity));
$('flip').addEventListener('click', () => {
  flipped = !flipped;
  if (game) renderBoardView();
});

// ---- copy FEN -----------------------------------------------------------------

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API: plain http on the hall's network is not a secure
    // context. The old selection-based copy still works there.
    const area = el('textarea', { readonly: true, style: 'position:fixed;opacity:0' });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    area.remove();
    return ok;
  }
}

$('copy-fen').addEventListener('click', async () => {
  if (!game) return;
  const fen = fenAt(view);
  const status = $('copy-status');
  if (await copyText(fen)) status.textContent = 'FEN copied.';
  else {
    window.prompt('Copy the FEN:', fen);
    status.textContent = '';
  }
  setTimeout(() => { status.textContent = ''; }, 2500);
});

// ---- live -------------------------------------------------------------------

/** @param {GameView} next */
function setGame(next) {
  game = next;
  findTournament(game.round_id);
  evaluated = evaluated || game.moves.some((m) => m.eval);
  view = following ? game.moves.length : Math.min(view, game.moves.length);
  following = view === game.moves.length;
  renderAll();
}

/** @param {ServerMessage} msg */
function onMessage(msg) {
  if (msg.type === 'eval') {
    if (game && Array.isArray(msg.evals)) onEvals(msg.evals);
    return;
  }
  if ((msg.type === 'snapshot' || msg.type === 'game') && msg.game) {
    if (String(msg.game.id) === String(gameId)) setGame(msg.game);
    return;
  }
  if (!game || !('game_id' in msg) || msg.game_id !== game.id) return;
  const changed = applyGameEvent(game, msg);
  if (changed === 'gap') return socket.resync();
  if (!changed) return;
  if (msg.type === 'clock') return tick();
  setGame(game);
}

async function start() {
  const message = $('message');
  if (!gameId) {
    message.textContent = 'No game given. Pick one on a round page.';
    message.hidden = false;
    return;
  }
  try {
    // The game is shown once it is known whether its result may be, so that a result never
    // shows for a moment spoiler-free; the game's JSON names its tournament.
    const first = await getJSON(`api/games/${gameId}`);
    if (first.tournament_id != null) {
      seeking = true;
      await Promise.resolve(spoiler.know(first.tournament_id)).catch(() => { seeking = false; });
    } else {
      await findTournament(first.round_id);
    }
    setGame(first);
  } catch (err) {
    if (err.status === 404) {
      message.textContent = 'This game does not exist.';
      message.hidden = false;
      showStatus('offline');
      return;
    }
  }
  // GameView carries no seq, so this socket starts with a snapshot.
  socket = liveSocket(`api/games/${gameId}/ws`, onMessage, showStatus);
}

start();
