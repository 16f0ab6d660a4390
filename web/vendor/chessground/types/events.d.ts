import { type State } from './state.js';
import type * as cg from './types.js';
export declare function bindBoard(s: State): void;
export declare function bindDocument(s: State, onResize: () => void): cg.Unbind;
