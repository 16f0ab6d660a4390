// Formatting shared by the pages: clocks, move numbers, players, results,
// and a small DOM builder. Text always goes in through textContent, never
// innerHTML, so names from the server cannot inject markup.

/** @typedef {import('../types/ws-messages').GameView} GameView */

/** el('a', {class: 'x', href: '…', text: 'hi', onclick: fn}, child, …) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  node.append(...children.filter((c) => c != null));
  return node;
}

const pad = (n) => String(n).padStart(2, '0');

/** Clock display, h:mm:ss. Rounded up, as a countdown: 0:00:00 means flag down. */
export function formatClock(ms) {
  if (ms == null) return '–';
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/** Time spent on a move, short: 0:07, 12:40, 1:02:03. */
export function formatEmt(ms) {
  if (ms == null) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor(s / 60) % 60;
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

export function formatTimeOfDay(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "40 s", "5 min", "2 h 10 min" */
export function formatDuration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor(s / 60) % 60} min`;
}

/**
 * Move number of a ply (1 = the first move of the game, whichever side makes
 * it), counted from the start FEN's side to move and fullmove number.
 */
export function moveNumber(ply, startFen) {
  const fields = (startFen || '').trim().split(/\s+/);
  const blackFirst = fields[1] === 'b';
  const fullmove = parseInt(fields[5], 10) || 1;
  const index = ply - 1 + (blackFirst ? 1 : 0);
  return { number: fullmove + Math.floor(index / 2), white: index % 2 === 0 };
}

/** "23. Nf3" or "23... Nf6" */
export function moveLabel(ply, san, startFen) {
  const { number, white } = moveNumber(ply, startFen);
  return `${number}${white ? '.' : '...'} ${san}`;
}

/** @param {GameView} game */
export function lastMoveLabel(game) {
  const last = game.moves[game.moves.length - 1];
  return last ? moveLabel(last.ply, last.san, game.start_fen) : '';
}

/** "1/2-1/2" → "½-½"; an unfinished game ("*") shows nothing. */
export function formatResult(result) {
  if (!result || result === '*') return '';
  return result.replaceAll('1/2', '½');
}

export function playerParts(player) {
  const p = player || {};
  return {
    name: p.name || 'N.N.',
    title: p.title || '',
    rating: p.rating ? String(p.rating) : '',
    federation: p.federation || '',
    team: p.team || '',
  };
}

/** "2830 · NOR": the rating and the federation's code, as a card shows them beside the name. */
export function ratingAndFederation(player) {
  const { rating, federation } = playerParts(player);
  return [rating, federation].filter(Boolean).join(' · ');
}

/** "GM Carlsen, Magnus (2830) NOR" for titles and labels. */
export function playerText(player) {
  const { name, title, rating, federation } = playerParts(player);
  return `${title ? title + ' ' : ''}${name}${rating ? ` (${rating})` : ''}${federation ? ` ${federation}` : ''}`;
}

/** 2.5 → "2½". */
export function formatPoints(points) {
  const whole = Math.floor(points);
  const half = points - whole >= 0.5;
  return half ? `${whole || ''}½` : String(whole);
}

/**
 * A team round's matches from its games (each game's players carry their team): the
 * first-named team is White on the match's first board; the score counts finished games,
 * and the boards a team won by forfeit against nobody (a `+` bye of its player: the other
 * team left the board empty).
 * @param {Array<{board_no: number, result: string, white: any, black: any}>} games
 * @param {Array<{code: string, points: number, team?: string | null}>} [byes]
 */
export function teamMatches(games, byes = []) {
  const out = [];
  for (const g of [...games].sort((a, b) => a.board_no - b.board_no)) {
    const w = g.white?.team;
    const b = g.black?.team;
    if (!w || !b) continue;
    let m = out.find((x) => (x.first === w && x.second === b) || (x.first === b && x.second === w));
    if (!m) {
      m = { first: w, second: b, boards: [], first_points: 0, second_points: 0 };
      out.push(m);
    }
    m.boards.push(g.board_no);
    const [wp, bp] = g.result === '1-0' ? [1, 0] : g.result === '0-1' ? [0, 1] : g.result === '1/2-1/2' ? [0.5, 0.5] : [0, 0];
    if (m.first === w) { m.first_points += wp; m.second_points += bp; } else { m.first_points += bp; m.second_points += wp; }
  }
  for (const bye of byes) {
    if (bye.code !== '+' || !bye.team) continue;
    const m = out.find((x) => x.first === bye.team) || out.find((x) => x.second === bye.team);
    if (m?.first === bye.team) m.first_points += bye.points;
    else if (m) m.second_points += bye.points;
  }
  return out;
}

/**
 * Time left on one side's clock at `now`. With a live clock the running side
 * counts down from `at_ms`; without one, the clock after that side's last
 * move is the best we have.
 * @param {GameView} game
 * @param {string} side 'white' or 'black'
 * @param {number} now
 */
export function clockMs(game, side, now) {
  const clock = game.clock;
  if (clock) {
    const base = clock[`${side}_ms`];
    if (base == null || clock.running !== side) return base;
    return base - Math.max(0, now - clock.at_ms);
  }
  for (let i = game.moves.length - 1; i >= 0; i--) {
    const move = game.moves[i];
    if (moveNumber(move.ply, game.start_fen).white === (side === 'white') && move.clk_ms != null) {
      return move.clk_ms;
    }
  }
  return null;
}

/** Lower case without accents, for the name filter ("Ä" finds "a"). */
export function fold(text) {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
}
