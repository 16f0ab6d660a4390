// The tournament's tie-breaks in the console: the codes in force, in order, to reorder,
// remove or add (from the codes relay computes, GET api/tiebreaks, or one typed with its
// modifiers, "BH:MP/C1/P"), saved with the tournament (PATCH {"tiebreaks": [...]}); an empty
// list is relay's default for the kind of event. The panel sits beside the event key's and
// follows the tournament settings.js shows.

import { adminJSON, getJSON } from '../api.js';
import { el } from '../format.js';
import { $, errorText, formMessage } from './page.js';

/** @typedef {{ code: string, name: string }} KnownCode */

/** @type {KnownCode[] | null} */
let known = null;
/** The tournament the panel shows, or null. */
let tournamentId = null;
/** The codes as the panel has them, in order (saved or not). */
let chosen = [];
/** The codes as saved. */
let saved = [];

const form = el('form', { id: 'tiebreak-settings', class: 'panel', 'aria-labelledby': 'tiebreak-title', hidden: true },
  el('h3', { id: 'tiebreak-title', text: 'Tie-breaks' }),
  el('p', { id: 'tiebreak-current', class: 'hint' }),
  el('ol', { id: 'tiebreak-list', class: 'tiebreak-list', 'aria-label': 'Tie-breaks, in order' }),
  el('div', { class: 'field-row' },
    el('label', { for: 'tiebreak-add-code', text: 'Add' }),
    el('select', { id: 'tiebreak-add-code' }),
    el('button', { id: 'tiebreak-add', type: 'button', text: 'Add' })),
  el('div', { class: 'field-row' },
    el('label', { for: 'tiebreak-other', text: 'or a code with modifiers' }),
    el('input', {
      id: 'tiebreak-other', type: 'text', maxlength: '24', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'BH:MP/C1/P', pattern: '[A-Za-z0-9:/]+', title: 'A code as TRF-2026 record 202 writes it',
    }),
    el('button', { id: 'tiebreak-add-other', type: 'button', text: 'Add' })),
  el('div', { class: 'field-row' },
    el('button', { id: 'tiebreak-save', type: 'submit', class: 'primary', text: 'Save tie-breaks' }),
    el('button', { id: 'tiebreak-default', type: 'button', text: 'Use relay\'s default' })),
  el('p', { id: 'tiebreak-msg', class: 'form-msg', 'aria-live': 'polite' }));
$('tournament-settings').after(form);

/** A code's name; one with modifiers ("BH/C1") by its base's, the modifiers after it. */
function nameOf(code) {
  const exact = known?.find((k) => k.code === code);
  if (exact) return exact.name;
  const base = code.split(/[:/]/)[0];
  const named = known?.find((k) => k.code === base);
  return named ? `${named.name} (${code.slice(base.length)})` : '';
}
const same = (a, b) => a.length === b.length && a.every((c, i) => c === b[i]);

/** Moves the code at `i` by `by` places (−1 up, +1 down), keeping the focus on its button. */
function move(i, by, focus) {
  const j = i + by;
  if (j < 0 || j >= chosen.length) return;
  [chosen[i], chosen[j]] = [chosen[j], chosen[i]];
  renderList();
  const button = /** @type {HTMLButtonElement | null} */ (document.querySelector(`#tiebreak-list li:nth-child(${j + 1}) .${focus}`));
  if (button && !button.disabled) button.focus();
}

function renderList() {
  $('tiebreak-list').replaceChildren(...chosen.map((code, i) => el('li', { 'data-code': code },
    el('strong', { class: 'tb-code', text: code }),
    el('span', { class: 'tb-name muted', text: nameOf(code) }),
    el('button', { type: 'button', class: 'tb-up', text: '↑', disabled: i === 0, 'aria-label': `Move ${code} up`, onclick: () => move(i, -1, 'tb-up') }),
    el('button', { type: 'button', class: 'tb-down', text: '↓', disabled: i === chosen.length - 1, 'aria-label': `Move ${code} down`, onclick: () => move(i, 1, 'tb-down') }),
    el('button', {
      type: 'button', class: 'tb-remove', text: 'Remove', 'aria-label': `Remove ${code}`,
      onclick: () => { chosen.splice(i, 1); renderList(); },
    }))));
  if (!chosen.length) $('tiebreak-list').append(el('li', { class: 'muted', text: 'None chosen: relay\'s default.' }));
  const select = $('tiebreak-add-code');
  const left = (known || []).filter((k) => !chosen.includes(k.code));
  select.replaceChildren(...left.map((k) => el('option', { value: k.code, text: `${k.code}: ${k.name}` })));
  select.disabled = !left.length;
  $('tiebreak-add').disabled = !left.length;
  $('tiebreak-save').textContent = same(chosen, saved) ? 'Save tie-breaks' : 'Save tie-breaks (changed)';
}

/** Says which codes rank the standings now (relay's default ones when none is set). */
async function showCurrent(id) {
  const current = $('tiebreak-current');
  if (saved.length) {
    current.textContent = `Now: ${saved.join(', ')}.`;
    return;
  }
  current.textContent = 'Now relay\'s default for the kind of event.';
  try {
    const s = await getJSON(`api/tournaments/${id}/standings`);
    if (id === tournamentId && !saved.length && s.tiebreaks?.length) {
      current.textContent = `Now relay's default for the kind of event: ${s.tiebreaks.join(', ')}.`;
    }
  } catch { /* the sentence without the codes */ }
}

/**
 * Shows the tie-breaks of a tournament as read (or saved): called by settings.js each time it
 * reads one. A list being edited for the same tournament is kept.
 * @param {{ id: number, tiebreaks?: string[] }} t
 */
export async function showTiebreaks(t) {
  const fresh = t.id !== tournamentId;
  const editing = !fresh && !same(chosen, saved);
  tournamentId = t.id;
  saved = [...(t.tiebreaks || [])];
  if (fresh || !editing) chosen = [...saved];
  form.hidden = false;
  if (!known) {
    try {
      known = await getJSON('api/tiebreaks');
    } catch (err) {
      known = [];
      formMessage($('tiebreak-msg'), errorText('Loading the tie-break codes', err), true);
    }
  }
  renderList();
  showCurrent(t.id);
}

function add(code) {
  const c = code.trim().toUpperCase();
  if (!c) return false;
  if (chosen.includes(c)) {
    formMessage($('tiebreak-msg'), `${c} is on the list already.`, true);
    return false;
  }
  chosen.push(c);
  formMessage($('tiebreak-msg'), '');
  renderList();
  return true;
}

$('tiebreak-add').addEventListener('click', () => add($('tiebreak-add-code').value));
$('tiebreak-add-other').addEventListener('click', () => {
  const input = $('tiebreak-other');
  if (!input.checkValidity()) {
    formMessage($('tiebreak-msg'), 'A code is letters and digits, with modifiers after ":" or "/" (BH:MP/C1/P).', true);
    input.focus();
    return;
  }
  if (add(input.value)) input.value = '';
});

async function save(list, done) {
  if (tournamentId == null) return;
  const msg = $('tiebreak-msg');
  const buttons = [$('tiebreak-save'), $('tiebreak-default')];
  for (const b of buttons) b.disabled = true;
  try {
    // The server checks every code (400 naming one it does not know).
    const t = await adminJSON(`api/tournaments/${tournamentId}`, { method: 'PATCH', body: { tiebreaks: list } });
    chosen = [...(t.tiebreaks || list)];
    await showTiebreaks(t);
    formMessage(msg, done);
  } catch (err) {
    formMessage(msg, errorText('Saving the tie-breaks', err), true);
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  save([...chosen], chosen.length ? `Tie-breaks saved: ${chosen.join(', ')}.` : 'The standings use relay\'s default tie-breaks.');
});
$('tiebreak-default').addEventListener('click', () => {
  save([], 'The standings use relay\'s default tie-breaks.');
});
