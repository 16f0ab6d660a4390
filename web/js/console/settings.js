// The round's settings below the games: its pairings (a JSON or PGN file, or pasted), the
// spectators' delay, and the "final" mark; and its tournament's event key and tie-breaks
// (tiebreaks.js: its own panel, shown with each tournament read here).

import { adminFetch, adminJSON } from '../api.js';
import { formatDuration } from '../format.js';
import { $, errorText, formMessage, fileText } from './page.js';
import { currentRound, roundName, refreshRound, watchRound } from './round.js';
import { roundId, games, read } from './state.js';
import { showTiebreaks } from './tiebreaks.js';

/** @typedef {import('../../types/ws-messages').RoundView} RoundView */

// ---- delay and final ----------------------------------------------------------------

let delayEdited = false; // a delay typed but not saved is not overwritten by an update
$('delay-secs').addEventListener('input', () => { delayEdited = true; });

/** @param {RoundView} round */
function showRoundSettings(round) {
  $('round-admin').hidden = false;
  const delay = Number(round.delay_secs) || 0;
  if (!delayEdited && document.activeElement !== $('delay-secs')) $('delay-secs').value = delay;
  $('delay-current').textContent = delay
    ? `Now ${delay} s${delay >= 60 ? ` (${formatDuration(delay * 1000)})` : ''}: spectators see the games this long after the moves.`
    : 'Now none: spectators see the moves as they are made.';
  $('final-state').textContent = round.final ? 'This round is marked final.' : 'This round is not marked final.';
  $('final-toggle').textContent = round.final ? 'Reopen round' : 'Mark round final';
}
watchRound(showRoundSettings);

async function editRound(button, change, done) {
  const msg = $('round-settings-msg');
  button.disabled = true;
  try {
    await adminFetch(`api/rounds/${roundId}`, { method: 'PATCH', body: change });
    if ('delay_secs' in change) delayEdited = false;
    await refreshRound();
    formMessage(msg, done);
  } catch (err) {
    formMessage(msg, errorText('Saving the round settings', err), true);
  } finally {
    button.disabled = false;
  }
}

$('round-settings').addEventListener('submit', (event) => {
  event.preventDefault();
  if (!roundId) return;
  const delay = Number($('delay-secs').value);
  if ($('delay-secs').value === '' || !Number.isInteger(delay) || delay < 0 || delay > 3600) {
    formMessage($('round-settings-msg'), 'Give the delay in whole seconds, from 0 to 3600.', true);
    $('delay-secs').focus();
    return;
  }
  editRound($('delay-save'), { delay_secs: delay }, `Delay of ${roundName()} set to ${delay} s.`);
});

$('final-toggle').addEventListener('click', () => {
  if (!roundId || !currentRound) return;
  const final = !currentRound.final;
  const question = final
    ? `Mark ${roundName()} final?\n\nA final round is finished: relay no longer takes it as the round being played, `
      + 'and e-boards are not resumed in it after a restart.'
    : `Reopen ${roundName()}? It is then no longer marked final.`;
  if (!window.confirm(question)) return;
  editRound($('final-toggle'), { final }, final ? `${roundName()} is marked final.` : `${roundName()} is open again.`);
});

// ---- the tournament's event key -------------------------------------------------------
// The name of the event across relays: venue relays in several halls that push tournaments
// with the same key to a cloud relay fill one tournament there.

/** The tournament the form shows (the round's), or null before a round is read. */
let tournamentId = null;
let keyEdited = false; // a key typed but not saved is not overwritten by a read

$('event-key').addEventListener('input', () => { keyEdited = true; });

/** Shows a tournament as read: its name and its key. */
function showTournament(t) {
  $('tournament-title').textContent = `Tournament: ${t.name}`;
  if (!keyEdited) $('event-key').value = t.event_key || '';
  $('event-key-current').textContent = t.event_key ? `Now ${t.event_key}.` : 'Now none.';
  showTiebreaks(t);
}

async function loadTournament(id) {
  try {
    const t = await read(`api/tournaments/${id}`);
    if (id === tournamentId) showTournament(t);
  } catch (err) {
    formMessage($('tournament-settings-msg'), errorText('Loading the tournament', err), true);
  }
}

// Read when the round shown belongs to another tournament than before (the round is read
// again after every action: the tournament need not be).
watchRound((round) => {
  if (round.tournament_id === tournamentId) return;
  tournamentId = round.tournament_id;
  keyEdited = false;
  $('tournament-settings').hidden = false;
  loadTournament(tournamentId);
});

// The field's pattern and length are checked by the browser before this runs; the server
// checks them again, and that no other tournament here has the key (409).
$('tournament-settings').addEventListener('submit', async (event) => {
  event.preventDefault();
  if (tournamentId == null) return;
  const msg = $('tournament-settings-msg');
  const button = $('event-key-save');
  const key = $('event-key').value.trim();
  button.disabled = true;
  try {
    // A blank key takes the key away (null; the server takes "" the same way).
    const t = await adminJSON(`api/tournaments/${tournamentId}`, { method: 'PATCH', body: { event_key: key || null } });
    keyEdited = false;
    showTournament(t);
    formMessage(msg, t.event_key ? `Event key set to ${t.event_key}.` : 'The tournament has no event key now.');
  } catch (err) {
    formMessage(msg, errorText('Saving the event key', err), true);
  } finally {
    button.disabled = false;
  }
});

// ---- pairings ----------------------------------------------------------------------

/**
 * "json", "pgn" or "trf": by the file's name, else by the text (a PGN starts with a tag,
 * "[Event …"; a TRF with a numbered record, "012 …" or "001 …").
 */
function pairingsFormat(text, name) {
  if (/\.json$/i.test(name)) return 'json';
  if (/\.pgn$/i.test(name)) return 'pgn';
  if (/\.(trf|trfx|tab)$/i.test(name)) return 'trf';
  if (/^\s*(\d{3}|###) /.test(text)) return 'trf';
  return /^\s*\[\s*[{\]]/.test(text) ? 'json' : 'pgn';
}

/**
 * A pairing program's file into a new tournament, or into this round's: the whole tournament
 * at once. The file goes as its bytes (a TRF may be Latin-1); the answer says what changed.
 */
async function importTrf(file, text) {
  const msg = $('pairings-msg');
  const fresh = $('trf-new').checked || !currentRound;
  const url = fresh ? 'api/tournaments/trf' : `api/tournaments/${currentRound.tournament_id}/trf`;
  const button = $('pairings-upload');
  button.disabled = true;
  formMessage(msg, 'Importing the TRF…');
  try {
    const bytes = file ? await file.arrayBuffer() : new TextEncoder().encode(text).buffer;
    const done = await adminJSON(url, { method: fresh ? 'POST' : 'PUT', bytes });
    const added = done.rounds_added.length ? `rounds added: ${done.rounds_added.join(', ')}; ` : '';
    const kept = (done.results_kept.length ? ` Kept relay's results: ${done.results_kept.join('; ')}.` : '')
      + (done.boards_moved.length ? ` Moved: ${done.boards_moved.join('; ')}.` : '');
    formMessage(msg, `Tournament ${done.tournament_id}: ${done.players} players; ${added}${done.games_added} boards added, `
      + `${done.games_updated} updated, ${done.results_taken} results taken, ${done.byes} byes.${kept}`);
    $('pairings-file').value = '';
    $('pairings-text').value = '';
    // Show the newest round of that tournament (where the new pairings are).
    const t = await adminJSON(`api/tournaments/${done.tournament_id}`);
    const newest = t.rounds.reduce((a, r) => (Number(r.number) > Number(a.number) ? r : a), t.rounds[0]);
    if (newest && String(newest.id) !== String(roundId)) {
      sessionStorage.setItem('relay-import-note', msg.textContent);
      location.search = `?round=${newest.id}`;
    } else {
      await refreshRound();
    }
  } catch (err) {
    formMessage(msg, errorText('Importing the TRF', err), true);
  } finally {
    button.disabled = false;
  }
}

// The note of an import that moved the console to another round.
{
  const note = sessionStorage.getItem('relay-import-note');
  if (note) {
    sessionStorage.removeItem('relay-import-note');
    formMessage($('pairings-msg'), note);
  }
}

$('pairings-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const msg = $('pairings-msg');
  const button = $('pairings-upload');
  const file = $('pairings-file').files[0];
  let text;
  try {
    text = file ? await fileText(file) : $('pairings-text').value;
  } catch (err) {
    formMessage(msg, err.message, true);
    return;
  }
  if (!text.trim()) {
    formMessage(msg, 'Choose a pairings file or paste the pairings first.', true);
    return;
  }
  const chosen = $('pairings-format').value;
  const format = chosen === 'auto' ? pairingsFormat(text, file ? file.name : '') : chosen;
  if (format === 'trf') {
    await importTrf(file, text);
    return;
  }
  if (!roundId) {
    formMessage(msg, 'Choose a round first (or load a TRF, which makes its rounds).', true);
    return;
  }
  if (format === 'json') {
    // Checked here too, for a quicker and clearer answer than the server's.
    let list;
    try { list = JSON.parse(text); } catch (err) {
      formMessage(msg, `The pairings are not valid JSON: ${err.message}`, true);
      return;
    }
    if (!Array.isArray(list)) {
      formMessage(msg, 'The JSON must be a list of boards: [{"board_no":1,"white":{…},"black":{…}}, …].', true);
      return;
    }
  }
  if (games.size && !window.confirm(`Load these pairings into ${roundName()}?\n\n`
    + 'The players of boards already in the round are replaced by the ones in the pairings.')) return;
  button.disabled = true;
  formMessage(msg, 'Loading the pairings…');
  try {
    const answer = await adminJSON(`api/rounds/${roundId}/pairings`, {
      method: 'PUT', text, type: format === 'json' ? 'application/json' : 'application/x-chess-pgn',
    });
    const count = answer && Array.isArray(answer.games) ? answer.games.length : 0;
    $('pairings-file').value = '';
    $('pairings-text').value = '';
    await refreshRound();
    formMessage(msg, `Pairings loaded from ${format.toUpperCase()}: ${count} ${count === 1 ? 'board' : 'boards'}.`);
  } catch (err) {
    formMessage(msg, errorText('Loading the pairings', err), true);
  } finally {
    button.disabled = false;
  }
});

// Loading a TRF makes a tournament's rounds: the form is there before any round is.
$('round-admin').hidden = false;
