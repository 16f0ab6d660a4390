// The alert banner: a new problem of an e-board (lost, out of sync, battery low, no clock,
// a result proposed, a serial seen twice) or a new push conflict is listed there, with a
// beep, until the arbiter acknowledges it; a problem that goes away stays listed, marked
// resolved.

import { el, formatTimeOfDay } from '../format.js';
import { $ } from './page.js';
import { eboardRows } from './state.js';

/** @typedef {import('../../types/ws-messages').EboardView} EboardView */

// ---- sound ----------------------------------------------------------------------

// Browsers only allow audio after the user has interacted with the page, so
// the AudioContext is made (or resumed) on the first click or key press.
let audio = null;
let lastBeep = 0;

function unlockAudio() {
  const Context = window.AudioContext || /** @type {any} */ (window).webkitAudioContext; // older Safari
  if (!audio && Context) audio = new Context();
  if (audio && audio.state === 'suspended') audio.resume();
}
document.addEventListener('pointerdown', unlockAudio);
document.addEventListener('keydown', unlockAudio);

export function beep() {
  if (!audio || audio.state !== 'running' || !$('sound').checked) return;
  if (Date.now() - lastBeep < 1500) return; // one beep for a burst of problems
  lastBeep = Date.now();
  const t = audio.currentTime;
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.frequency.value = 880;
  gain.gain.setValueAtTime(0.0001, t);
  gain.gain.exponentialRampToValueAtTime(0.3, t + 0.02);
  gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.25);
  osc.connect(gain).connect(audio.destination);
  osc.start(t);
  osc.stop(t + 0.3);
}

// ---- problems ---------------------------------------------------------------------

const PROBLEM_TEXT = {
  lost: 'lost', out_of_sync: 'out of sync', battery_low: 'battery low', no_clock: 'no clock', proposal: 'result proposed',
  same_serial: 'same serial as another board',
};
const BATTERY_LOW = 20; // percent
/** Why an e-board proposes a result, as the console says it. */
export const REASON_TEXT = { kings_in_centre: 'kings in the centre', magic_piece: 'magic piece', time_forfeit: 'time forfeit' };

/** @param {EboardView} board */
export function problemsOf(board) {
  const problems = [];
  if (!board.connected) problems.push('lost');
  if (board.in_sync === false) problems.push('out_of_sync');
  if ((board.battery != null && board.battery <= BATTERY_LOW) || board.clock_battery_low) problems.push('battery_low');
  if (board.clock === false) problems.push('no_clock');
  if (board.proposal) problems.push('proposal');
  if (board.warning) problems.push('same_serial');
  return problems;
}

const known = new Map(); // serial → Set of problem keys already alerted
// Not yet acknowledged: an e-board's {serial, boardNo, key, at, resolved}, or a push
// conflict's {conflict (its key), text, takeId or settle, boardNo, at, resolved}.
let alerts = [];
let knownConflicts = new Set(); // keys of the conflicts already alerted

/** Whether an alert about this e-board is listed. */
export const hasAlert = (serial) => alerts.some((a) => a.serial === serial);

/** An e-board gone from the list: its problems, if it comes back, are news again. */
export function forgetProblems(serial) {
  known.delete(serial);
}

/**
 * Compares a board's problems with what was known and raises the new ones.
 * @param {EboardView} board
 */
export function noteProblems(board) {
  const current = new Set(problemsOf(board));
  const before = known.get(board.serial) || new Set();
  known.set(board.serial, current);
  let resolved = false;
  for (const alert of alerts) {
    if (alert.serial === board.serial && !alert.resolved && !current.has(alert.key)) {
      alert.resolved = true;
      resolved = true;
    }
  }
  const fresh = [...current].filter((key) => !before.has(key));
  for (const key of fresh) {
    alerts.push({ serial: board.serial, boardNo: board.board_no, key, at: Date.now(), resolved: false });
  }
  if (fresh.length) beep();
  if (fresh.length || resolved) renderAlerts();
}

/**
 * Compares the push conflicts with those already alerted and raises the new ones. A
 * conflict settled here has `takeId` (the game whose venue version can be taken) or
 * `settle` (a clash: the venue's game to place on a free board).
 * @param {{ key: string, text: string, takeId?: number, boardNo?: number,
 *   settle?: { origin: string, gameId: number, boardNo: number } }[]} current
 */
export function noteConflicts(current) {
  const keys = new Set(current.map((c) => c.key));
  let resolved = false;
  for (const alert of alerts) {
    if (alert.conflict && !alert.resolved && !keys.has(alert.conflict)) {
      alert.resolved = true;
      resolved = true;
    }
  }
  const fresh = current.filter((c) => !knownConflicts.has(c.key));
  knownConflicts = keys;
  for (const c of fresh) {
    alerts.push({
      conflict: c.key, text: c.text, takeId: c.takeId, settle: c.settle, boardNo: c.boardNo, at: Date.now(), resolved: false,
    });
  }
  if (fresh.length) beep();
  if (fresh.length || resolved) renderAlerts();
}

// ---- the banner -------------------------------------------------------------------

/**
 * The form that places a venue's game that came for a board another hall's game holds (a
 * clash) on a free board (push.js sends it).
 * @param {string} origin the venue's origin
 * @param {number} gameId the venue's id of the game
 * @param {number} boardNo the board it came for
 */
export function settleForm(origin, gameId, boardNo) {
  return el('form', {
    class: 'settle-form inline-form', 'data-origin': origin, 'data-game-id': gameId, 'data-board': boardNo,
  },
  el('input', {
    type: 'number', class: 'settle-board', min: 1, max: 99999, step: 1, required: true, placeholder: 'board',
    inputmode: 'numeric', 'aria-label': `A free board for the game that came for board ${boardNo}`,
  }),
  el('button', { type: 'submit', class: 'settle-clash', text: 'Place on board' }));
}

/** The button that settles a conflict of a venue's game (push.js handles its clicks). */
export function takeVenueButton(gameId, boardNo) {
  return el('button', {
    type: 'button', class: 'take-venue', 'data-game-id': gameId, 'data-board': boardNo || null,
    text: 'Take the venue\'s version',
  });
}

function alertItem(a) {
  const since = a.resolved ? ' (since resolved)' : '';
  if (a.conflict) {
    let control = null;
    if (a.settle && !a.resolved) control = settleForm(a.settle.origin, a.settle.gameId, a.settle.boardNo);
    else if (a.takeId && !a.resolved) control = takeVenueButton(a.takeId, a.boardNo);
    return el('li', {}, `${formatTimeOfDay(a.at)}: ${a.text}${since}`, control);
  }
  return el('li', {
    text: `${formatTimeOfDay(a.at)}: e-board ${a.serial}${a.boardNo ? ` (board ${a.boardNo})` : ''} ${PROBLEM_TEXT[a.key]}${since}`,
  });
}

function renderAlerts() {
  const shown = alerts.slice(-10).reverse().map(alertItem);
  if (alerts.length > 10) shown.push(el('li', { text: `and ${alerts.length - 10} more` }));
  $('alert-list').replaceChildren(...shown);
  $('alert-banner').hidden = alerts.length === 0;
  for (const [serial, row] of eboardRows) row.classList.toggle('alert-new', hasAlert(serial));
}

$('alert-ack').addEventListener('click', () => {
  alerts = [];
  renderAlerts();
});
