/**
 * How alike two pieces of feedback are, from what PostgreSQL gives for each: the lexemes of the title
 * and of the body (`to_tsvector('english', …)`, so already stemmed, stop words gone) and the trigram
 * similarity of the titles (pg_trgm, or null where the extension is missing). Pure: no database here.
 *
 * The score is a logistic model over five measures, fitted on the labelled corpus
 * (test/fixtures/duplicate-feedback.json, `npm run bench:duplicates -- --fit`), so that it reads as the
 * chance that the pair is a duplicate: 0 to 1.
 */

/**
 * Words that name the same thing in feedback, as english-stemmed lexemes; each group counts as one
 * word. General vocabulary of product feedback, not the corpus's phrases.
 */
export const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['crash', 'freez', 'hang'],
  ['dark', 'night'],
  ['notif', 'notifi', 'alert'],
  ['login', 'signin', 'log-in', 'sign-in'],
  ['recur', 'recurr', 'repeat', 'repetit'],
  ['deadlin', 'due'],
  ['colour', 'color'],
  ['print', 'printer', 'printabl'],
  ['german', 'germani', 'deutsch'],
  ['translat', 'localis'],
  ['invoic', 'receipt'],
  ['charg', 'bill'],
  ['twice', 'doubl', '2x'],
  ['price', 'cost', 'expens', 'pricey', 'cheap', 'cheaper'],
  ['spreadsheet', 'excel', 'xlsx', 'sheet'],
  ['export', 'download'],
  ['import', 'importer'],
  ['restor', 'recov', 'undo'],
  ['trash', 'bin', 'recycl'],
  ['shortcut', 'hotkey'],
  ['timezon', 'zone'],
  ['gantt', 'timelin'],
  ['tablet', 'ipad'],
  ['iphon', 'io'],
  ['2fa', 'mfa', 'two-factor', 'factor', 'authent'],
  ['sso', 'saml', 'okta', 'sign-on'],
  ['mention', 'tag'],
  ['slow', 'sluggish', 'lag'],
  ['sort', 'order'],
  ['googl', 'gmail'],
  ['bulk', 'batch', 'mass', 'multipl', 'multi-select'],
  ['email', 'mail', 'e-mail'],
  ['digest', 'summari'],
  ['throttl', 'quota', '429'],
  ['larg', 'big', 'bigger', 'huge'],
  ['field', 'attribut', 'properti'],
  ['audit', 'trail', 'histori'],
  ['offlin', 'internet'],
];

/** Words every piece of feedback uses: they count, but a quarter as much, and never find candidates. */
export const GENERIC_LEXEMES: ReadonlySet<string> = new Set([
  'abl', 'add', 'allow', 'also', 'alway', 'anyth', 'app', 'applic', 'avail', 'can', 'could', 'day', 'everi', 'featur',
  'fix', 'get', 'go', 'great', 'help', 'idea', 'issu', 'just', 'let', 'like', 'lot', 'love', 'make', 'much', 'need',
  'new', 'nice', 'now', 'one', 'option', 'pleas', 'pls', 'plz', 'problem', 'project', 'realli', 'right', 'see', 'seem',
  'someth', 'still', 'support', 'task', 'team', 'thank', 'thing', 'time', 'tool', 'tri', 'us', 'use', 'user', 'via',
  'want', 'way', 'well', 'without', 'work', 'would',
]);

const CANONICAL: ReadonlyMap<string, string> = new Map(SYNONYM_GROUPS.flatMap((g) => g.map((w) => [w, g[0]] as const)));

export function canonicalLexeme(lexeme: string): string {
  return CANONICAL.get(lexeme) ?? lexeme;
}

export function isGeneric(lexeme: string): boolean {
  return GENERIC_LEXEMES.has(lexeme);
}

/** What the database gave for one text. */
export interface TextLexemes {
  title: string[];
  body: string[];
}

const TITLE_WEIGHT = 1;
const BODY_WEIGHT = 0.6;
const GENERIC_WEIGHT = 0.25;
/** A typo matches its word at this fraction. */
const FUZZY_WEIGHT = 0.8;

type Vector = Map<string, number>;

function vectorOf(text: TextLexemes, titleOnly = false): Vector {
  const v: Vector = new Map();
  const put = (lexeme: string, place: number) => {
    const key = canonicalLexeme(lexeme);
    const weight = place * (isGeneric(key) ? GENERIC_WEIGHT : 1);
    v.set(key, Math.max(v.get(key) ?? 0, weight));
  };
  for (const l of text.title) put(l, TITLE_WEIGHT);
  if (!titleOnly) for (const l of text.body) put(l, BODY_WEIGHT);
  return v;
}

/** True when a and b are one edit apart (insert, delete, substitute or swap two neighbours). */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/** A misspelt word: at least 4 letters, one edit from the other's word, the first letter kept. */
function typoOf(word: string, other: Vector): string | undefined {
  if (word.length < 4 || /\d/.test(word)) return undefined;
  for (const candidate of other.keys()) {
    if (candidate.length >= 4 && candidate[0] === word[0] && oneEditApart(word, candidate)) return candidate;
  }
  return undefined;
}

interface Overlap {
  dot: number;
  matched: string[];
}

function overlap(a: Vector, b: Vector): Overlap {
  let dot = 0;
  const matched: string[] = [];
  for (const [word, wa] of a) {
    const wb = b.get(word);
    if (wb !== undefined) {
      dot += wa * wb;
      if (!isGeneric(word)) matched.push(word);
      continue;
    }
    const typo = b.has(word) ? undefined : typoOf(word, b);
    if (typo !== undefined && !a.has(typo)) {
      dot += FUZZY_WEIGHT * wa * (b.get(typo) ?? 0);
      matched.push(typo);
    }
  }
  return { dot, matched };
}

const squaredNorm = (v: Vector) => [...v.values()].reduce((n, w) => n + w * w, 0);

/** The measures the model weighs. */
export interface DuplicateMeasures {
  /** Cosine of the weighted lexeme vectors of title and body together. */
  cosine: number;
  /** Shared weight over the smaller text's weight: a short text fully inside a long one scores high. */
  containment: number;
  /** Cosine of the titles alone. */
  titleCosine: number;
  /** pg_trgm word similarity of the two titles, the greater of both ways (0 when pg_trgm is missing). */
  trigram: number;
  /** PostgreSQL's full-text rank of the candidate for the source's words, ORed, weighted A/B, as rank / (rank + 1). */
  ftsRank: number;
  /** Non-generic words in common (typos included), capped at 4 and divided by 4. */
  sharedWords: number;
}

/** What the database measured: the titles' trigram word similarity (null without pg_trgm) and the full-text rank. */
export interface DatabaseMeasures {
  trigram: number | null;
  ftsRank: number;
}

export function measureDuplicate(source: TextLexemes, candidate: TextLexemes, db: DatabaseMeasures): DuplicateMeasures & { matched: string[] } {
  const a = vectorOf(source);
  const b = vectorOf(candidate);
  const both = overlap(a, b);
  const na = squaredNorm(a);
  const nb = squaredNorm(b);
  const ta = vectorOf(source, true);
  const tb = vectorOf(candidate, true);
  const titles = overlap(ta, tb);
  const nta = squaredNorm(ta);
  const ntb = squaredNorm(tb);
  return {
    cosine: na > 0 && nb > 0 ? Math.min(1, both.dot / Math.sqrt(na * nb)) : 0,
    containment: na > 0 && nb > 0 ? Math.min(1, both.dot / Math.min(na, nb)) : 0,
    titleCosine: nta > 0 && ntb > 0 ? Math.min(1, titles.dot / Math.sqrt(nta * ntb)) : 0,
    trigram: db.trigram ?? 0,
    ftsRank: db.ftsRank,
    sharedWords: Math.min(4, both.matched.length) / 4,
    matched: both.matched,
  };
}

/** The fitted model: an intercept and one weight per measure (`npm run bench:duplicates -- --fit`). */
export interface DuplicateModel {
  intercept: number;
  weights: DuplicateMeasures;
}

/** Fitted on test/fixtures/duplicate-feedback.json with pg_trgm present. */
export const TRIGRAM_MODEL: DuplicateModel = {
  intercept: -3.69,
  weights: { cosine: 1.74, containment: 2.74, titleCosine: 1.08, trigram: 0.62, ftsRank: 1.35, sharedWords: 2.59 },
};

/** The same fit without the trigram measure, for a PostgreSQL without pg_trgm. */
export const FULL_TEXT_MODEL: DuplicateModel = {
  intercept: -3.56,
  weights: { cosine: 1.73, containment: 2.73, titleCosine: 1.41, trigram: 0, ftsRank: 1.36, sharedWords: 2.49 },
};

export const MEASURE_NAMES = ['cosine', 'containment', 'titleCosine', 'trigram', 'ftsRank', 'sharedWords'] as const;

/** The chance, 0 to 1, that the two texts ask for the same thing; rounded to 3 decimals. */
export function duplicateScore(measures: DuplicateMeasures, model: DuplicateModel): number {
  let z = model.intercept;
  for (const name of MEASURE_NAMES) z += model.weights[name] * measures[name];
  return Math.round(1000 / (1 + Math.exp(-z))) / 1000;
}
