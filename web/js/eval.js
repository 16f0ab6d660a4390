// An engine's evaluation as the pages show it: White's share of a bar, the score, the line.
// `cp` (centipawns) and `mate` (moves to mate, negative: Black mates) are from White's side.

import { el, moveNumber } from './format.js';

/**
 * An evaluation (`MoveView.eval`), and one entry of an `eval` message: the position after
 * move `ply` of game `game_id`.
 * @typedef {import('../types/ws-messages').EvalView} Eval
 * @typedef {import('../types/ws-messages').EvalEntry} EvalEntry
 */

/**
 * White's share of the bar, 0–100: lichess's curve from centipawns to winning chances;
 * a mate fills it for the side that mates.
 * @param {Eval | null | undefined} ev
 */
export function whiteShare(ev) {
  if (!ev) return 50;
  if (ev.mate != null) return ev.mate > 0 ? 100 : ev.mate < 0 ? 0 : 50;
  if (ev.cp == null) return 50;
  return 50 + 50 * (2 / (1 + Math.exp(-0.00368208 * ev.cp)) - 1);
}

/**
 * "+0.35", "-1.20", "0.00"; "#3" (White mates in 3), "#-3" (Black does).
 * @param {Eval | null | undefined} ev
 */
export function formatScore(ev) {
  if (!ev) return '';
  if (ev.mate != null) return `#${ev.mate}`;
  if (ev.cp == null) return '';
  const pawns = (ev.cp / 100).toFixed(2);
  return ev.cp > 0 ? `+${pawns}` : ev.cp === 0 ? '0.00' : pawns;
}

/**
 * The engine's line from the position after `ply`, with move numbers: "12... Nf6 13. Nc3 d5".
 * @param {string[]} line
 * @param {number} ply
 * @param {string} startFen
 */
export function formatLine(line, ply, startFen) {
  return (line || []).map((san, i) => {
    const { number, white } = moveNumber(ply + 1 + i, startFen);
    if (white) return `${number}. ${san}`;
    return i === 0 ? `${number}... ${san}` : san;
  }).join(' ');
}

/**
 * The side mated by `move`, by its SAN ('#'), or null.
 * @param {{ ply: number, san: string } | null | undefined} move
 * @param {string} startFen
 * @returns {'white' | 'black' | null}
 */
export function matedBy(move, startFen) {
  if (!move || !move.san.endsWith('#')) return null;
  return moveNumber(move.ply, startFen).white ? 'black' : 'white';
}

/**
 * A bar showing White's share: `horizontal` for the round's cards, else upright beside a
 * board (White's part at the bottom unless `flipped`). Returns the element and its update.
 * @param {{ horizontal?: boolean }} [options]
 */
export function evalBar({ horizontal = false } = {}) {
  const fill = el('span', { class: 'eval-white' });
  const bar = el('span', { class: `eval-bar ${horizontal ? 'horizontal' : 'upright'}`, role: 'img', 'aria-label': 'No evaluation yet' }, fill);
  bar.dataset.share = '50';
  /**
   * `mated`: the side mated on the board (an engine has nothing to say of that position).
   * @param {Eval | null | undefined} ev
   * @param {{ stale?: boolean, flipped?: boolean, mated?: 'white' | 'black' | null }} [state]
   */
  function show(ev, { stale = false, flipped = false, mated = null } = {}) {
    const share = mated ? (mated === 'black' ? 100 : 0) : whiteShare(ev);
    const text = mated ? '#' : formatScore(ev);
    fill.style[horizontal ? 'width' : 'height'] = `${share.toFixed(1)}%`;
    bar.dataset.share = share.toFixed(1);
    bar.dataset.score = text;
    bar.classList.toggle('stale', stale);
    bar.classList.toggle('none', !ev && !mated);
    bar.classList.toggle('flipped', flipped);
    const label = mated ? 'Checkmate'
      : ev ? `Evaluation ${text}${stale ? ' (before the last move)' : ''}` : 'No evaluation yet';
    bar.setAttribute('aria-label', label);
    bar.title = label;
  }
  return { bar, show };
}
