import { type State } from './state.js';
export declare function render(s: State): void;
export declare function renderResized(s: State): void;
export declare function updateBounds(s: State): void;
