import { type HeadlessState } from './state.js';
import { type Elements } from './types.js';
export declare function renderWrap(element: HTMLElement, s: HeadlessState): Elements;
