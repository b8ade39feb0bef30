/**
 * The text primitives of the AI validator (docs/ai.md#the-validator): normalisation, tokens, lexicon phrases with
 * negation, and number claims in every notation, each reduced to one exact canonical decimal.
 * Pure: no database, no network.
 */

const DASHES = /[\u2010-\u2015\u2212]/g;
const SPACES = /[\u00a0\u2009\u202f]/g;
const SINGLE_QUOTES = /[\u2018\u2019\u201a\u201b\u2032]/g;
const DOUBLE_QUOTES = /[\u201c\u201d\u201e\u201f\u2033]/g;

/** NFKD, no combining marks, lower case, plain dashes, spaces and quotes. */
export function normalise(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
    .replace(DASHES, '-').replace(SPACES, ' ').replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"');
}

export interface Token {
  text: string;
  start: number;
  end: number;
}

/**
 * Maximal runs of letters, digits and apostrophes of normalised text. Apostrophes at a token's edges
 * are quote marks, not part of the word (`'great'` is `great`; `don't` keeps its own).
 */
export function tokenize(normalised: string): Token[] {
  const out: Token[] = [];
  for (const m of normalised.matchAll(/[\p{L}\p{N}']+/gu)) {
    const lead = m[0].length - m[0].replace(/^'+/, '').length;
    const word = m[0].replace(/^'+/, '').replace(/'+$/, '');
    if (word) out.push({ text: word, start: m.index! + lead, end: m.index! + lead + word.length });
  }
  return out;
}

/** A lexicon phrase as tokens: `in-app` and `in app` are the same phrase. */
export const phraseTokens = (phrase: string): string[] => tokenize(normalise(phrase)).map((t) => t.text);

const NEGATORS = new Set(['not', 'no', 'never', 'without', 'nor', 'cannot']);

export function isNegated(tokens: Token[], index: number): boolean {
  for (let i = Math.max(0, index - 3); i < index; i++) {
    const t = tokens[i].text;
    if (NEGATORS.has(t) || t.endsWith("n't")) return true;
  }
  return false;
}

export interface PhraseMatch {
  phrase: string;
  index: number;
  negated: boolean;
}

/** Every occurrence of the phrases in the tokens, in text order. */
export function findPhrases(tokens: Token[], phrases: readonly string[]): PhraseMatch[] {
  const out: PhraseMatch[] = [];
  for (const phrase of phrases) {
    const words = phraseTokens(phrase);
    for (let i = 0; i + words.length <= tokens.length; i++) {
      if (words.every((w, j) => tokens[i + j].text === w)) out.push({ phrase, index: i, negated: isNegated(tokens, i) });
    }
  }
  return out.sort((a, b) => a.index - b.index);
}

/** Text of normalised tokens with its tokens, computed once per text. */
export interface Analysed {
  raw: string;
  norm: string;
  tokens: Token[];
}

export function analyse(raw: string): Analysed {
  const norm = normalise(raw);
  return { raw, norm, tokens: tokenize(norm) };
}

// ---- exact decimals -------------------------------------------------------------------------

interface Dec {
  n: bigint;
  s: number;
}

function parseDec(digits: string): Dec {
  const [whole, frac = ''] = digits.replace(/,/g, '').split('.');
  return { n: BigInt(whole + frac), s: frac.length };
}

const dec = (n: number): Dec => parseDec(String(n));
const mul = (a: Dec, b: Dec): Dec => ({ n: a.n * b.n, s: a.s + b.s });

function add(a: Dec, b: Dec): Dec {
  const s = Math.max(a.s, b.s);
  return { n: a.n * 10n ** BigInt(s - a.s) + b.n * 10n ** BigInt(s - b.s), s };
}

/** Exact, absolute, no exponent, no leading zeros, no trailing fractional zeros or point. */
function canonical(d: Dec): string {
  let n = d.n < 0n ? -d.n : d.n;
  let s = d.s;
  while (s > 0 && n % 10n === 0n) {
    n /= 10n;
    s--;
  }
  const digits = n.toString().padStart(s + 1, '0');
  return s === 0 ? digits : `${digits.slice(0, -s)}.${digits.slice(-s)}`;
}

/** Canonical form of a number written as digits, e.g. a rating. */
export const canonicalNumber = (value: number): string => canonical(parseDec(String(Math.abs(value))));

// ---- number claims --------------------------------------------------------------------------

export interface Claim {
  value: string;
  /** A second reading that also counts as support (`half` is 0.5 or 50 per cent). */
  alt?: string;
}

const CURRENCY_CODES = new Set(['usd', 'eur', 'gbp', 'cad', 'aud', 'chf', 'jpy', 'inr', 'cny']);
const ATTACHED_SCALES: Record<string, number> = { k: 1e3, m: 1e6, mn: 1e6, b: 1e9, bn: 1e9 };
const WORD_SCALES: Record<string, number> = { hundred: 100, thousand: 1e3, million: 1e6, billion: 1e9, dozen: 12 };
const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve',
  'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const MULTIPLIERS: Record<string, number> = {
  twice: 2, double: 2, doubled: 2, doubles: 2, doubling: 2,
  triple: 3, tripled: 3, triples: 3, tripling: 3,
  quadruple: 4, quadrupled: 4, quadruples: 4,
};
const HALVES = new Set(['half', 'halve', 'halved']);
const NUMERAL = /\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?/g;

const unitValue = (w: string) => UNITS.indexOf(w);
const isScale = (w: string | undefined) => w !== undefined && w in WORD_SCALES;

interface Numeral {
  value: Dec;
  /** Index of the last token the numeral (with attached letters) covers. */
  lastToken: number;
  firstToken: number;
}

function numerals(a: Analysed): Numeral[] {
  const out: Numeral[] = [];
  for (const m of a.norm.matchAll(NUMERAL)) {
    const start = m.index!;
    const end = start + m[0].length;
    const before = a.norm.slice(0, start).match(/\p{L}+$/u)?.[0];
    if (before !== undefined && !CURRENCY_CODES.has(before)) continue;
    let value = parseDec(m[0]);
    const after = a.norm.slice(end).match(/^\p{L}+/u)?.[0] ?? '';
    const tokenEnds = !/^[\p{N}']/u.test(a.norm.slice(end + after.length));
    if (after && tokenEnds && after in ATTACHED_SCALES) value = mul(value, dec(ATTACHED_SCALES[after]));
    const firstToken = a.tokens.findIndex((t) => t.end > start);
    let lastToken = a.tokens.findIndex((t) => t.end >= end);
    if (firstToken < 0 || lastToken < 0) continue;
    while (isScale(a.tokens[lastToken + 1]?.text)) {
      lastToken++;
      value = mul(value, dec(WORD_SCALES[a.tokens[lastToken].text]));
    }
    out.push({ value, firstToken, lastToken });
  }
  return out;
}

type WordKind = 'unit' | 'tens' | 'hundred' | 'big' | 'dozen';

function wordKind(w: string): WordKind | null {
  if (unitValue(w) >= 0) return 'unit';
  if (w in TENS) return 'tens';
  if (w === 'hundred') return 'hundred';
  if (w === 'dozen') return 'dozen';
  if (w in WORD_SCALES) return 'big';
  return null;
}

/** Which kinds may follow which inside one spelled-out number (`two hundred and five`, `twenty-one`). */
function mayFollow(prev: WordKind, next: WordKind): boolean {
  switch (prev) {
    case 'unit': return next === 'hundred' || next === 'big' || next === 'dozen';
    case 'tens': return next === 'unit' || next === 'hundred' || next === 'big' || next === 'dozen';
    case 'hundred': return next === 'unit' || next === 'tens' || next === 'big';
    case 'big': return next === 'unit' || next === 'tens' || next === 'hundred';
    case 'dozen': return false;
  }
}

/**
 * Reads a spelled-out number starting at token `i`: returns its value and the index after it, or
 * null when the tokens there are no claim (`one` alone, `a` without a scale).
 */
function wordNumber(tokens: Token[], i: number): { value: Dec; next: number } | null {
  let j = i;
  let total: Dec = dec(0);
  let current: Dec = dec(0);
  let prev: WordKind | null = null;
  let words = 0;
  let onlyOne = true;
  const article = tokens[j]?.text === 'a' || tokens[j]?.text === 'an';
  if (article) {
    if (!isScale(tokens[j + 1]?.text)) return null;
    current = dec(1);
    prev = 'unit';
    j++;
  }
  while (j < tokens.length) {
    let w = tokens[j].text;
    if (w === 'and' && (prev === 'hundred' || prev === 'big')) {
      const k = wordKind(tokens[j + 1]?.text ?? '');
      if (k !== 'unit' && k !== 'tens') break;
      j++;
      w = tokens[j].text;
    }
    const kind = wordKind(w);
    if (!kind || (prev && !mayFollow(prev, kind))) break;
    if (kind === 'unit') current = add(current, dec(unitValue(w)));
    else if (kind === 'tens') current = add(current, dec(TENS[w]));
    else if (kind === 'hundred' || kind === 'dozen') current = mul(current.n === 0n && !prev ? dec(1) : current, dec(WORD_SCALES[w]));
    else {
      total = add(total, mul(current.n === 0n && !prev ? dec(1) : current, dec(WORD_SCALES[w])));
      current = dec(0);
    }
    if (w !== 'one') onlyOne = false;
    prev = kind;
    words++;
    j++;
  }
  if (words === 0 || (onlyOne && !article)) return null;
  return { value: add(total, current), next: j };
}

/** Every number claim of a text, in order; `alt` for the readings of `half`. */
export function claimsOf(text: string | Analysed): Claim[] {
  const a = typeof text === 'string' ? analyse(text) : text;
  const out: Claim[] = [];
  const byToken = new Map<number, Numeral>();
  for (const n of numerals(a)) byToken.set(n.firstToken, n);
  const { tokens } = a;
  let i = 0;
  while (i < tokens.length) {
    const numeral = byToken.get(i);
    if (numeral) {
      out.push({ value: canonical(numeral.value) });
      i = numeral.lastToken + 1;
      continue;
    }
    const w = tokens[i].text;
    if (HALVES.has(w)) {
      // `half a dozen` is six; `half` alone is a half, or fifty per cent.
      const rest = (tokens[i + 1]?.text === 'a' || tokens[i + 1]?.text === 'an') ? wordNumber(tokens, i + 1) : null;
      if (rest) {
        out.push({ value: canonical(mul(rest.value, parseDec('0.5'))) });
        i = rest.next;
      } else {
        out.push({ value: '0.5', alt: '50' });
        i++;
      }
      continue;
    }
    if (w in MULTIPLIERS) {
      out.push({ value: String(MULTIPLIERS[w]) });
      i++;
      continue;
    }
    const word = wordNumber(tokens, i);
    if (word) {
      out.push({ value: canonical(word.value) });
      i = word.next;
      continue;
    }
    i++;
  }
  return out;
}

/** The values a text supports: every claim's value and alternate. */
export function poolOf(...texts: Array<string | number | null | undefined>): Set<string> {
  const pool = new Set<string>();
  for (const t of texts) {
    if (t === null || t === undefined) continue;
    if (typeof t === 'number') {
      pool.add(canonicalNumber(t));
      continue;
    }
    for (const c of claimsOf(t)) {
      pool.add(c.value);
      if (c.alt) pool.add(c.alt);
    }
  }
  return pool;
}

export const supported = (claim: Claim, ...pools: Array<Set<string>>) =>
  pools.some((p) => p.has(claim.value) || (claim.alt !== undefined && p.has(claim.alt)));
