// The types of chessground.min.js, for the pages' type check only (never served): the
// package's own declarations, copied unchanged into types/.
export * from './types/chessground.js';
