import { type State } from './state.js';
import { type Key } from './types.js';
export declare function explosion(state: State, keys: Key[]): void;
