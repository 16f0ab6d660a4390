// Arbiter console: the e-boards at a glance with alerts for new problems, and
// the round's games with the arbiter's actions (confirm or set a result,
// truncate, replace a move or the whole game, audit trail, final PGN); an
// e-board can be put on a board of the round or made to go on from its
// position; the round's pairings, delay and "final" mark, and the tournament's
// event key, are set below. Above them, the push state from /health: where
// this relay pushes to, which venues push here (each game's hall), and the
// games either side holds back (conflicts, clashes of two halls over a board).
//
// Reading is public; actions send the admin token. Rows are kept per id and
// updated in place, so a live update never wipes a number being typed.
//
// This file is the page's entry: the admin token, then the panels, one module each in
// console/ (each sets up its own controls when imported):
//   state.js          the round shown, its games and the e-boards, by id
//   round.js          reading the round and following it live (the socket)
//   eboards.js        the e-boards table;  eboard-actions.js  its forms
//   games.js          the games table;     game-actions.js    the arbiter's actions
//   settings.js       pairings, delay, the "final" mark, the tournament's event key
//   push.js           where this relay pushes to, the venues that push here (each
//                     game's hall), conflicts and clashes
//   alerts.js         the alert banner and its beep
//   illegal.js        illegal moves on the boards: the alert, the Laws' remedy, the ruling
//   page.js           the error banner, form messages, running an admin request

import { getToken, setToken } from './api.js';
import { $ } from './console/page.js';
import { pollHealth } from './console/push.js';
import { showRound } from './console/round.js';
import './console/eboard-actions.js';
import './console/game-actions.js';
import './console/settings.js';

// ---- the token --------------------------------------------------------------------

function tokenState() {
  $('token-state').textContent = getToken() ? 'Token saved in this browser.' : 'The actions below need the token.';
}

$('token').value = getToken();
$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setToken($('token').value.trim());
  $('error').hidden = true;
  tokenState();
});
$('token-forget').addEventListener('click', () => {
  setToken('');
  $('token').value = '';
  tokenState();
});

// ---- start --------------------------------------------------------------------------

async function start() {
  tokenState();
  pollHealth();
  if (!getToken()) $('token').focus();
  await showRound();
}

start();
