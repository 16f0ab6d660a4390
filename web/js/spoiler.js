// Spoiler-free on the round and game pages: the standings pages' switch (tournament.js, the
// same choice remembered per tournament), for the tournament of the round or game shown.
// Hidden there: each game's result and the engine's evaluations; the moves and clocks play on.
//
// Until the tournament and its organiser's default are known, everything it hides stays
// hidden, so that a page opening spoiler-free never shows a result for a moment.

import { getJSON } from './api.js';
import { spoilerSwitch } from './tournament.js';

/**
 * The page's switch (`#spoiler-free`, `#spoiler-notice`, `#show-results` in its HTML), made
 * once `know` is told the tournament. `onChange` runs when what is hidden may have changed:
 * once the default is known, and at every switch (in another tab of the tournament too).
 * @param {() => void} onChange
 */
export function pageSpoiler(onChange) {
  /** @type {ReturnType<typeof spoilerSwitch> | null} */
  let sw = null;
  let asked = false;
  return {
    /** Whether results and evaluations are hidden (they are until the default is known). */
    hidden: () => !sw || sw.isOn(),
    /**
     * The page's tournament (the round's `tournament_id`); only the first call counts.
     * @param {number | string} tournament
     */
    async know(tournament) {
      if (asked) return;
      asked = true;
      // The default is in how the tournament is ranked (`spoiler_free`). Not readable: hidden,
      // with "Show results" at hand, rather than a result given away.
      let byDefault = true;
      try {
        /** @type {{ spoiler_free?: boolean }} */
        const terms = await getJSON(`api/tournaments/${tournament}/ranking`);
        byDefault = Boolean(terms.spoiler_free);
      } catch { /* kept hidden */ }
      sw = spoilerSwitch(() => onChange(), tournament);
      sw.setDefault(byDefault);
      onChange();
    },
  };
}

/**
 * The tournament a round belongs to, from the tournaments' list (a game's JSON names only
 * its round; `list`: the list's answer, if already asked for); null when none has it.
 * @param {number | string} roundId
 * @param {Promise<Array<{ id: number, rounds: Array<{ id: number }> }>>} [list]
 * @returns {Promise<number | null>}
 */
export async function tournamentOfRound(roundId, list = getJSON('api/tournaments')) {
  const all = await list;
  const t = all.find((x) => x.rounds.some((r) => String(r.id) === String(roundId)));
  return t ? t.id : null;
}
