import { type State } from './state.js';
export declare function render(state: State, autoPieceEl: HTMLElement): void;
export declare function renderResized(state: State): void;
