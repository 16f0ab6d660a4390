// The chess board as inline SVG. Only the placement field of a FEN is read.
//
// Pieces are Unicode chess glyphs. The solid glyphs (♚…♟) give the black
// pieces; a white piece is a solid glyph filled white with the outline glyph
// (♔…♙) drawn over it, which keeps the inner lines of the design and reads
// well on both square colours. U+FE0E asks for the text form of ♟, which some
// phones would otherwise draw as an emoji.

const NS = 'http://www.w3.org/2000/svg';
const SQ = 100; // user units per square (large units avoid minimum font sizes)
const SOLID = { k: '\u265A', q: '\u265B', r: '\u265C', b: '\u265D', n: '\u265E', p: '\u265F\uFE0E' };
const OUTLINE = { k: '\u2654', q: '\u2655', r: '\u2656', b: '\u2657', n: '\u2658', p: '\u2659\uFE0E' };
const FILES = 'abcdefgh';

function svgNode(tag, attrs) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

/** rows[0] is rank 8, rows[r][0] the a-file; a square is a piece letter or null. */
export function parsePlacement(fen) {
  const ranks = (fen || '').trim().split(/\s+/)[0].split('/');
  const rows = [];
  for (let r = 0; r < 8; r++) {
    const row = [];
    for (const ch of ranks[r] || '') {
      if (ch >= '1' && ch <= '8') for (let i = 0; i < Number(ch); i++) row.push(null);
      else row.push(/^[kqrbnp]$/i.test(ch) ? ch : null);
    }
    while (row.length < 8) row.push(null);
    rows.push(row.slice(0, 8));
  }
  return rows;
}

/**
 * renderBoard(fen, {flipped, lastMove: "e2e4", size, label, coords, marks})
 * returns an <svg>. `size` sets width/height in px (otherwise CSS sizes it),
 * `label` is the accessible description, `coords` draws a–h / 1–8, `marks`
 * lists squares to flag (e.g. where the e-board differs from the game).
 */
export function renderBoard(fen, options = {}) {
  const { flipped = false, lastMove = null, size = null, label = 'Chess board', coords = false, marks = [] } = options;
  const svg = svgNode('svg', { viewBox: `0 0 ${8 * SQ} ${8 * SQ}`, class: 'board', role: 'img', 'aria-label': label });
  if (size) {
    svg.setAttribute('width', size);
    svg.setAttribute('height', size);
  }
  const highlighted = new Set(lastMove && lastMove.length >= 4 ? [lastMove.slice(0, 2), lastMove.slice(2, 4)] : []);
  const marked = new Set(marks);
  const rows = parsePlacement(fen);
  const squares = svgNode('g', { 'aria-hidden': 'true' });
  const pieces = svgNode('g', { class: 'pieces', 'aria-hidden': 'true' });

  for (let r = 0; r < 8; r++) {
    for (let f = 0; f < 8; f++) {
      const x = (flipped ? 7 - f : f) * SQ;
      const y = (flipped ? 7 - r : r) * SQ;
      const name = FILES[f] + (8 - r);
      const dark = (r + f) % 2 === 1;
      squares.append(svgNode('rect', { x, y, width: SQ, height: SQ, class: dark ? 'dark' : 'light' }));
      if (highlighted.has(name)) squares.append(svgNode('rect', { x, y, width: SQ, height: SQ, class: 'last' }));
      if (marked.has(name)) squares.append(svgNode('rect', { x, y, width: SQ, height: SQ, class: 'mark' }));

      if (coords && y === 7 * SQ) squares.append(coord(FILES[f], x + SQ - 6, y + SQ - 7, 'end', dark));
      if (coords && x === 0) squares.append(coord(String(8 - r), x + 6, y + 22, 'start', dark));

      const piece = rows[r][f];
      if (!piece) continue;
      const kind = piece.toLowerCase();
      const at = { x: x + SQ / 2, y: y + SQ / 2 + 4 };
      if (piece === kind) {
        pieces.append(glyph(SOLID[kind], at, 'b-body'));
      } else {
        pieces.append(glyph(SOLID[kind], at, 'w-body'), glyph(OUTLINE[kind], at, 'w-line'));
      }
    }
  }
  svg.append(squares, pieces);
  return svg;
}

function glyph(text, { x, y }, cls) {
  const node = svgNode('text', { x, y, class: `piece ${cls}` });
  node.textContent = text;
  return node;
}

function coord(text, x, y, anchor, onDark) {
  const node = svgNode('text', { x, y, 'text-anchor': anchor, class: `coord ${onDark ? 'on-dark' : 'on-light'}` });
  node.textContent = text;
  return node;
}
