// Federation flags: FIDE's three-letter federation codes (what a TRF and a pairing's
// `federation` carry) to the flag files of web/vendor/flags/ (lipis's flag-icons, named by
// ISO 3166-1 alpha-2, and gb-eng, gb-sct, gb-wls for the home nations).
//
// FIDE's codes are the Olympic committee's, not ISO's alpha-3: GER is Germany (ISO DEU), NED
// the Netherlands (NLD), SUI Switzerland (CHE), and England, Scotland and Wales are
// federations of their own. FID (players under FIDE's flag) and an unknown code get no flag:
// the code alone is shown.

import { el } from './format.js';

/** FIDE federation code → flag file name (without .svg). */
const FLAG = {
  AFG: 'af', ALB: 'al', ALG: 'dz', AND: 'ad', ANG: 'ao', ANT: 'ag', ARG: 'ar', ARM: 'am',
  ARU: 'aw', ASA: 'as', AUS: 'au', AUT: 'at', AZE: 'az',
  BAH: 'bs', BAN: 'bd', BAR: 'bb', BDI: 'bi', BEL: 'be', BEN: 'bj', BER: 'bm', BHU: 'bt',
  BIH: 'ba', BIZ: 'bz', BLR: 'by', BOL: 'bo', BOT: 'bw', BRA: 'br', BRN: 'bh', BRU: 'bn',
  BUL: 'bg', BUR: 'bf',
  CAF: 'cf', CAM: 'kh', CAN: 'ca', CAY: 'ky', CGO: 'cg', CHA: 'td', CHI: 'cl', CHN: 'cn',
  CIV: 'ci', CMR: 'cm', COD: 'cd', COK: 'ck', COL: 'co', COM: 'km', CPV: 'cv', CRC: 'cr',
  CRO: 'hr', CUB: 'cu', CUW: 'cw', CYP: 'cy', CZE: 'cz',
  DEN: 'dk', DJI: 'dj', DMA: 'dm', DOM: 'do',
  ECU: 'ec', EGY: 'eg', ENG: 'gb-eng', ERI: 'er', ESA: 'sv', ESP: 'es', EST: 'ee', ETH: 'et',
  FAI: 'fo', FIJ: 'fj', FIN: 'fi', FRA: 'fr', FSM: 'fm',
  GAB: 'ga', GAM: 'gm', GBS: 'gw', GCI: 'gg', GEO: 'ge', GEQ: 'gq', GER: 'de', GHA: 'gh',
  GRE: 'gr', GRN: 'gd', GUA: 'gt', GUI: 'gn', GUM: 'gu', GUY: 'gy',
  HAI: 'ht', HKG: 'hk', HON: 'hn', HUN: 'hu',
  INA: 'id', IND: 'in', IOM: 'im', IRI: 'ir', IRL: 'ie', IRQ: 'iq', ISL: 'is', ISR: 'il',
  ISV: 'vi', ITA: 'it', IVB: 'vg',
  JAM: 'jm', JCI: 'je', JOR: 'jo', JPN: 'jp',
  KAZ: 'kz', KEN: 'ke', KGZ: 'kg', KIR: 'ki', KOR: 'kr', KOS: 'xk', KSA: 'sa', KUW: 'kw',
  LAO: 'la', LAT: 'lv', LBA: 'ly', LBN: 'lb', LBR: 'lr', LCA: 'lc', LES: 'ls', LIE: 'li',
  LTU: 'lt', LUX: 'lu',
  MAC: 'mo', MAD: 'mg', MAR: 'ma', MAS: 'my', MAW: 'mw', MDA: 'md', MDV: 'mv', MEX: 'mx',
  MGL: 'mn', MHL: 'mh', MKD: 'mk', MLI: 'ml', MLT: 'mt', MNC: 'mc', MNE: 'me', MOZ: 'mz',
  MRI: 'mu', MTN: 'mr', MYA: 'mm',
  NAM: 'na', NCA: 'ni', NED: 'nl', NEP: 'np', NGR: 'ng', NIG: 'ne', NOR: 'no', NRU: 'nr',
  NZL: 'nz',
  OMA: 'om',
  PAK: 'pk', PAN: 'pa', PAR: 'py', PER: 'pe', PHI: 'ph', PLE: 'ps', PLW: 'pw', PNG: 'pg',
  POL: 'pl', POR: 'pt', PUR: 'pr',
  QAT: 'qa',
  ROU: 'ro', RSA: 'za', RUS: 'ru', RWA: 'rw',
  SAM: 'ws', SCO: 'gb-sct', SEN: 'sn', SEY: 'sc', SGP: 'sg', SKN: 'kn', SLE: 'sl',
  SLO: 'si', SMR: 'sm', SOL: 'sb', SOM: 'so', SRB: 'rs', SRI: 'lk', SSD: 'ss', STP: 'st',
  SUD: 'sd', SUI: 'ch', SUR: 'sr', SVK: 'sk', SWE: 'se', SWZ: 'sz', SYR: 'sy',
  TAN: 'tz', TGA: 'to', THA: 'th', TJK: 'tj', TKM: 'tm', TLS: 'tl', TOG: 'tg', TPE: 'tw',
  TTO: 'tt', TUN: 'tn', TUR: 'tr', TUV: 'tv',
  UAE: 'ae', UGA: 'ug', UKR: 'ua', URU: 'uy', USA: 'us', UZB: 'uz',
  VAN: 'vu', VEN: 've', VIE: 'vn', VIN: 'vc',
  WLS: 'gb-wls',
  YEM: 'ye',
  ZAM: 'zm', ZIM: 'zw',
};

/** The home nations, which Intl.DisplayNames does not name (it knows only ISO regions). */
const HOME_NATIONS = { 'gb-eng': 'England', 'gb-sct': 'Scotland', 'gb-wls': 'Wales' };

let regionNames = null;
try {
  regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
} catch { /* an old browser: the code alone */ }

/**
 * The flag file's name for a FIDE federation code ("GER" → "de"), or null (FID, unknown).
 * @param {string | null | undefined} federation
 * @returns {string | null}
 */
export function flagCode(federation) {
  const code = (federation || '').trim().toUpperCase();
  return Object.prototype.hasOwnProperty.call(FLAG, code) ? FLAG[code] : null;
}

/**
 * The federation's country in English ("GER" → "Germany"), or the code itself.
 * @param {string | null | undefined} federation
 */
export function federationName(federation) {
  const flag = flagCode(federation);
  if (!flag) return federation || '';
  if (HOME_NATIONS[flag]) return HOME_NATIONS[flag];
  try {
    return regionNames?.of(flag.toUpperCase()) || federation;
  } catch {
    return federation;
  }
}

/**
 * The federation as a page shows it: its flag (when it has one) and its code, in a span
 * titled with the country's name. Empty text for a player without a federation.
 * @param {string | null | undefined} federation
 * @returns {HTMLElement}
 */
export function federationCell(federation) {
  const code = (federation || '').trim().toUpperCase();
  const flag = flagCode(code);
  const name = federationName(code);
  return el('span', { class: 'fed', title: name && name !== code ? name : null },
    flag ? el('img', {
      class: 'flag', src: `vendor/flags/${flag}.svg`, alt: '', width: '20', height: '15', loading: 'lazy',
    }) : null,
    code ? el('span', { class: 'fed-code', text: code }) : null);
}
