// The bundle's exports as the move-entry page uses them, written from chessops 0.15.1's own
// declarations (dist/types in its npm package), simplified: for `npm run check` only.
import type { Key } from '../chessground/types/types.js';

export type Color = 'white' | 'black';
export type Role = 'pawn' | 'knight' | 'bishop' | 'rook' | 'queen' | 'king';
export type Square = number;
export interface Piece { role: Role; color: Color; promoted?: boolean }
export interface NormalMove { from: Square; to: Square; promotion?: Role }
export interface DropMove { role: Role; to: Square }
export type Move = NormalMove | DropMove;
export interface Result<T> { unwrap(): T; isOk: boolean; isErr: boolean }
export interface Board { get(square: Square): Piece | undefined }
export interface Setup { board: Board; turn: Color }
export declare class Chess {
  static default(): Chess;
  static fromSetup(setup: Setup): Result<Chess>;
  readonly board: Board;
  readonly turn: Color;
  clone(): Chess;
  play(move: Move): void;
  isLegal(move: Move): boolean;
  isCheck(): boolean;
  isEnd(): boolean;
  toSetup(): Setup;
}
export declare function parseFen(fen: string): Result<Setup>;
export declare function makeFen(setup: Setup): string;
export declare function chessgroundDests(pos: Chess): Map<Key, Key[]>;
export declare function makeSan(pos: Chess, move: Move): string;
export declare function parseSan(pos: Chess, san: string): Move | undefined;
export declare function parseUci(uci: string): Move | undefined;
export declare function makeUci(move: Move): string;
export declare function parseSquare(name: string): Square | undefined;
export declare function makeSquare(square: Square): string;
export declare function castlingSide(pos: Chess, move: Move): 'a' | 'h' | undefined;
export declare function normalizeMove(pos: Chess, move: Move): Move;
