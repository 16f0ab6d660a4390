import { type HeadlessState } from './state.js';
import type * as cg from './types.js';
export declare function premove(state: HeadlessState, key: cg.Key): cg.Key[];
