// The spectators' boards: lichess.org's chessground (web/vendor/chessground, GPL-3.0),
// view-only, with the last move and a check shown and moves animated. The arbiter console
// keeps its own small SVG boards (board.js), which mark squares chessground has no word for.

import { Chessground } from '../vendor/chessground/chessground.min.js';

/** @typedef {import('../vendor/chessground/types/api.js').Api} Ground */
/** @typedef {import('../vendor/chessground/types/config.js').Config} GroundConfig */
/** @typedef {import('../vendor/chessground/types/types.js').Key} Key */

/**
 * What chessground needs of a position reached by `move` (none: a start position): its FEN,
 * the side to move, the move's two squares and whether the side to move is in check (the
 * move's SAN says so; the pages carry no chess rules of their own).
 * @param {string} fen
 * @param {{ uci?: string, san?: string } | null | undefined} move
 * @returns {GroundConfig}
 */
export function position(fen, move) {
  const uci = move?.uci || '';
  const lastMove = uci.length >= 4 ? /** @type {Key[]} */ ([uci.slice(0, 2), uci.slice(2, 4)]) : undefined;
  return {
    fen,
    turnColor: (fen || '').split(/\s+/)[1] === 'b' ? 'black' : 'white',
    lastMove,
    check: /[+#]$/.test(move?.san || ''),
  };
}

/**
 * A view-only board in `element` (which CSS sizes; chessground follows its size).
 * @param {HTMLElement} element
 * @param {GroundConfig} config
 * @returns {Ground}
 */
export function ground(element, config) {
  return Chessground(element, {
    viewOnly: true,
    coordinates: false,
    disableContextMenu: false,
    animation: { enabled: true, duration: 220 },
    highlight: { lastMove: true, check: true },
    // No arrows or circles: a drawing layer per board would cost the round grid for nothing.
    drawable: { enabled: false, visible: false },
    draggable: { enabled: false },
    selectable: { enabled: false },
    ...config,
  });
}

/** The board colours the pages offer (`?theme=`): chessground's brown, and relay's blue. */
export const BOARD_THEMES = ['brown', 'blue'];
