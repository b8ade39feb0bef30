import { DataSource, EntityManager } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import {
  DuplicateMeasures, DuplicateModel, FULL_TEXT_MODEL, SYNONYM_GROUPS, TRIGRAM_MODEL, TextLexemes, canonicalLexeme, duplicateScore,
  isGeneric, measureDuplicate,
} from '../rules/duplicate-score';
import { lexemesOfTsvector } from '../rules/tsvector-text';

export type SimilarType = 'feature' | 'signal';

export interface SimilarCandidate {
  type: SimilarType;
  id: string;
  title: string;
  score: number;
  matched: string[];
  suggested: boolean;
}

/** At most this many candidates are answered. */
export const SIMILAR_LIMIT = 10;
/** Candidates taken from each index before scoring. */
const FULL_TEXT_CANDIDATES = 20;
const TRIGRAM_CANDIDATES = 10;
/** Words of the source that look for candidates: the title's, then the body's rarest. */
const QUERY_WORDS = 8;
/**
 * Past this many expected matches (by the statistics) a candidate must share two of the words, not one,
 * and the commonest words are left out until two-word matches are expected this many times at most:
 * every match is read and ranked.
 */
const MAX_EXPECTED_MATCHES = 200;
/**
 * A short text of common words (three or fewer left, every one in thousands of signals) can still expect
 * more matches than this: then a candidate must share all of them. Not sooner, as one misspelt word would
 * then keep its duplicates out.
 */
const MAX_EXPECTED_MATCHES_AT_ALL = 2_000;
/** A word in more than this share of signals finds candidates only when the text has few others. */
const COMMON_WORD_SHARE = 0.05;
/** With fewer full-text candidates than this, the titles most alike by trigrams are added. */
const TRIGRAM_FALLBACK_BELOW = 3;
/** How long an API process keeps the lexeme statistics. */
const STATS_TTL_MS = 10 * 60_000;
/** Below this a candidate is not answered: nothing in common worth showing. */
const MIN_SCORE = 0.05;

type Db = DataSource | EntityManager;

const trigramByDataSource = new WeakMap<DataSource, Promise<boolean>>();

/** Whether pg_trgm is installed (the migration installs it where the server allows); asked once per pool. */
export function trigramAvailable(ds: DataSource): Promise<boolean> {
  let known = trigramByDataSource.get(ds);
  if (!known) {
    known = ds.query(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS trgm`)
      .then((rows: Array<{ trgm: boolean }>) => rows[0].trgm);
    trigramByDataSource.set(ds, known);
    void known.catch(() => trigramByDataSource.delete(ds));
  }
  return known;
}

/** Each synonym group as tsquery alternatives, so that a query word finds every spelling of it. */
const GROUP_OF: ReadonlyMap<string, readonly string[]> = new Map(SYNONYM_GROUPS.flatMap((g) => g.map((w) => [w, g] as const)));

/** The planner's statistics of the signals' search column: the share of rows each common lexeme is in. */
export interface LexemeStats {
  rows: number;
  shares: ReadonlyMap<string, number>;
}

const statsByDataSource = new WeakMap<DataSource, { at: number; stats: Promise<LexemeStats> }>();

/** ANALYZE keeps about a thousand common lexemes (autovacuum refreshes them); one not listed is rare. */
function lexemeStats(ds: DataSource): Promise<LexemeStats> {
  const known = statsByDataSource.get(ds);
  if (known && Date.now() - known.at < STATS_TTL_MS) return known.stats;
  const stats = ds.query(
    `SELECT (SELECT greatest(reltuples, 0)::float8 FROM pg_class WHERE oid = 'signals'::regclass) AS rows, s.elems, s.freqs
       FROM (SELECT 1) one LEFT JOIN (SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS freqs FROM pg_stats
              WHERE schemaname = current_schema() AND tablename = 'signals' AND attname = 'search_vector') s ON true`,
  ).then((result: Array<{ rows: number; elems: string[] | null; freqs: number[] | null }>) => {
    const [row] = result;
    return { rows: row.rows, shares: new Map((row.elems ?? []).map((lexeme, i) => [lexeme, row.freqs?.[i] ?? 0])) };
  });
  statsByDataSource.set(ds, { at: Date.now(), stats });
  void stats.catch(() => statsByDataSource.delete(ds));
  return stats;
}

export interface QueryWords {
  words: string[];
  /**
   * How many of the words a candidate must share: one; two where one would match too many rows; all of them
   * where three words or fewer are left and two would match far too many (a short text of common words).
   */
  shared: number;
}

/** Rows expected to hold at least `k` of words with these shares, taken as independent: rows × e_k(shares). */
function expectedMatches(rows: number, shares: number[], k: number): number {
  const e = [1, ...shares.map(() => 0)];
  for (const share of shares) for (let j = shares.length; j >= 1; j--) e[j] += e[j - 1] * share;
  return rows * e[k];
}

/**
 * The words that look for candidates: the text's non-generic words, one per synonym group, the title's
 * first and then the body's rarest; words in more than COMMON_WORD_SHARE of the signals only when
 * fewer than three others remain.
 */
export function queryWords(lexemes: TextLexemes, stats: LexemeStats): QueryWords {
  const seen = new Set<string>();
  const words: Array<{ lexeme: string; share: number; title: boolean; order: number }> = [];
  const titles = new Set(lexemes.title);
  for (const lexeme of [...lexemes.title, ...lexemes.body]) {
    const key = canonicalLexeme(lexeme);
    if (isGeneric(key) || seen.has(key)) continue;
    seen.add(key);
    const group = GROUP_OF.get(lexeme) ?? [lexeme];
    words.push({ lexeme, share: group.reduce((n, w) => n + (stats.shares.get(w) ?? 0), 0), title: titles.has(lexeme), order: words.length });
  }
  words.sort((a, b) => Number(b.title) - Number(a.title) || a.share - b.share || a.order - b.order);
  const uncommon = words.filter((w) => w.share <= COMMON_WORD_SHARE);
  const chosen = (uncommon.length >= 3 ? uncommon : words).slice(0, QUERY_WORDS);
  const expected = (k: number) => expectedMatches(stats.rows, chosen.map((w) => w.share), k);
  const lexemesOf = () => chosen.map((w) => w.lexeme);
  if (chosen.length < 2 || expected(1) <= MAX_EXPECTED_MATCHES) return { words: lexemesOf(), shared: 1 };
  if (chosen.length === 2) return { words: lexemesOf(), shared: expected(1) > MAX_EXPECTED_MATCHES_AT_ALL ? 2 : 1 };
  while (chosen.length > 3 && expected(2) > MAX_EXPECTED_MATCHES) {
    const commonest = chosen.reduce((a, b) => (b.share > a.share ? b : a));
    chosen.splice(chosen.indexOf(commonest), 1);
  }
  return { words: lexemesOf(), shared: expected(2) > MAX_EXPECTED_MATCHES_AT_ALL ? chosen.length : 2 };
}

const TABLE = { signal: 'signals', feature: 'features' } as const;

/** A lexeme as a tsquery operand: quoted, so that no character of it is read as an operator. */
const operand = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

const alternatives = (lexeme: string) => `(${(GROUP_OF.get(lexeme) ?? [lexeme]).map(operand).join(' | ')})`;

/** Every choice of k of the items, in order. */
function combinations<T>(items: T[], k: number): T[][] {
  if (k === 0) return [[]];
  return items.flatMap((item, i) => combinations(items.slice(i + 1), k - 1).map((rest) => [item, ...rest]));
}

/**
 * The source's words as two tsqueries: `rank` ORs them all; `filter` asks for any `shared` of them (one: the
 * same OR), so that a candidate search reads a bounded number of rows.
 */
export function candidateQueries(query: QueryWords): { filter: string; rank: string } | null {
  if (query.words.length === 0) return null;
  const groups = query.words.map(alternatives);
  const rank = groups.join(' | ');
  if (query.shared <= 1) return { filter: rank, rank };
  return { filter: combinations(groups, query.shared).map((c) => `(${c.join(' & ')})`).join(' | '), rank };
}

interface Source {
  type: SimilarType;
  id: string;
  productId: string;
  title: string;
  lexemes: TextLexemes;
  query: QueryWords;
}

async function loadSource(ds: DataSource, type: SimilarType, productId: string, id: string): Promise<Source> {
  const [row]: Array<{ id: string; title: string; vector: string }> = await ds.query(
    `SELECT t.id, t.title, t.search_vector::text AS vector FROM ${TABLE[type]} t WHERE t.id = $1 AND t.product_id = $2`,
    [id, productId],
  );
  if (!row) throw notFound(type);
  const lexemes = lexemesOfTsvector(row.vector);
  return { type, id: row.id, productId, title: row.title, lexemes, query: queryWords(lexemes, await lexemeStats(ds)) };
}

/** Which rows of a table may be answered besides the product: a SQL condition on alias t, with $2 the source id. */
function exclusions(source: Source, type: SimilarType): string {
  const conditions: string[] = [];
  if (source.type === type) conditions.push('t.id <> $2');
  if (type === 'feature') conditions.push('t.merged_into IS NULL');
  if (source.type === 'feature' && type === 'feature') {
    conditions.push(`NOT EXISTS (SELECT 1 FROM feature_not_duplicates n
      WHERE (n.feature_a = $2 AND n.feature_b = t.id) OR (n.feature_b = $2 AND n.feature_a = t.id))`);
  }
  // A signal already linked to the feature is its evidence, not a duplicate to point at.
  if (source.type === 'signal' && type === 'feature') conditions.push('NOT EXISTS (SELECT 1 FROM feature_signal_links l WHERE l.feature_id = t.id AND ' +
    'l.signal_id = $2)');
  if (source.type === 'feature' && type === 'signal') conditions.push('NOT EXISTS (SELECT 1 FROM feature_signal_links l WHERE l.feature_id = $2 AND ' +
    'l.signal_id = t.id)');
  return conditions.length > 0 ? `AND ${conditions.join(' AND ')}` : '';
}

interface CandidateRow {
  id: string;
  title: string;
  vector: string;
  trigram: number | null;
  rank: number;
}

/**
 * Candidates of one table: the best by full-text rank over the document's length (a short text about
 * the words before a long one that mentions them in passing); where that finds almost nothing (a text of
 * misspelt or unusual words) and pg_trgm is there, the titles most alike by trigrams too. Each comes
 * with its vector and the titles' trigram word similarity (both ways: a short title inside a longer one
 * counts as alike), computed for the chosen rows only.
 */
async function candidatesIn(db: Db, source: Source, type: SimilarType, trigram: boolean): Promise<CandidateRow[]> {
  const queries = candidateQueries(source.query);
  const where = `t.product_id = $1 ${exclusions(source, type)}`;
  const similarity = trigram ? 'greatest(word_similarity($3, c.title), word_similarity(c.title, $3))' : 'NULL::real';
  const rank = queries ? 'ts_rank(c.search_vector, $4::tsquery)' : '0::real';
  // The vector's text and the measures are computed for the chosen rows only, outside the LIMIT: in the
  // ranking query they would be computed for every match (the vector's text form is the dearest part).
  const select = (inner: string, params: unknown[]) => db.query(
    `SELECT c.id, c.title, c.search_vector::text AS vector, ${rank} AS rank, ${similarity} AS trigram FROM (${inner}) c`, params) as Promise<CandidateRow[]>;
  const rows: CandidateRow[] = [];
  if (queries) {
    rows.push(...await select(
      `SELECT t.id, t.title, t.search_vector FROM ${TABLE[type]} t
        WHERE ${where} AND t.search_vector @@ $5::tsquery ORDER BY ts_rank(t.search_vector, $4::tsquery, 2) DESC, t.id LIMIT ${FULL_TEXT_CANDIDATES}`,
      [source.productId, source.id, source.title, queries.rank, queries.filter],
    ));
  }
  // Among signals only for a text searched by any one of its words: words common enough to need two or all
  // of them shared are not misspelt, and such a title's trigrams would match much of a big table. A product's
  // features are few.
  if (trigram && rows.length < TRIGRAM_FALLBACK_BELOW && (type === 'feature' || source.query.shared === 1)) {
    const found = await select(
      `SELECT t.id, t.title, t.search_vector FROM ${TABLE[type]} t
        WHERE ${where} AND t.title % $3 ORDER BY similarity(t.title, $3) DESC, t.id LIMIT ${TRIGRAM_CANDIDATES}`,
      queries ? [source.productId, source.id, source.title, queries.rank] : [source.productId, source.id, source.title],
    );
    rows.push(...found.filter((f) => !rows.some((r) => r.id === f.id)));
  }
  return rows;
}

export interface MeasuredCandidate extends SimilarCandidate {
  measures: DuplicateMeasures;
}

function scored(source: Source, type: SimilarType, rows: CandidateRow[], model: DuplicateModel, threshold: number): MeasuredCandidate[] {
  return rows.map((row) => {
    // ts_rank normalised as rank / (rank + 1): 0 to 1, as normalisation 32 gives.
    const database = { trigram: row.trigram, ftsRank: row.rank / (row.rank + 1) };
    const { matched, ...measures } = measureDuplicate(source.lexemes, lexemesOfTsvector(row.vector), database);
    const score = duplicateScore(measures, model);
    return { type, id: row.id, title: row.title, score, matched, suggested: score >= threshold, measures };
  });
}

export interface SimilarRequest {
  type: SimilarType;
  productId: string;
  id: string;
  /** SV_DUPLICATE_THRESHOLD: a candidate scoring at least this is `suggested`. */
  threshold: number;
}

/** Every candidate the indexes give, scored, with its measures (the benchmark fits the model on these). */
export async function measuredCandidates(ds: DataSource, request: SimilarRequest, model?: DuplicateModel): Promise<MeasuredCandidate[]> {
  const trigram = await trigramAvailable(ds);
  const source = await loadSource(ds, request.type, request.productId, request.id);
  const [features, signals] = await Promise.all([
    candidatesIn(ds, source, 'feature', trigram),
    candidatesIn(ds, source, 'signal', trigram),
  ]);
  const chosen = model ?? (trigram ? TRIGRAM_MODEL : FULL_TEXT_MODEL);
  return [...scored(source, 'feature', features, chosen, request.threshold), ...scored(source, 'signal', signals, chosen, request.threshold)]
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

/**
 * Up to SIMILAR_LIMIT features and signals of the same product most like the source, best first; for
 * a signal the features come before the signals. Merged features are never answered, nor a pair marked
 * not a duplicate, nor a link that already exists.
 */
export async function findSimilar(ds: DataSource, request: SimilarRequest): Promise<SimilarCandidate[]> {
  const best = (await measuredCandidates(ds, request))
    .filter((c) => c.score >= MIN_SCORE)
    .slice(0, SIMILAR_LIMIT)
    .map(({ measures: _measures, ...candidate }) => candidate);
  if (request.type === 'signal') best.sort((a, b) => (a.type === b.type ? 0 : a.type === 'feature' ? -1 : 1));
  return best;
}

/**
 * The suggestion a thread shows the team: the best candidate of the thread's signal once it reaches the
 * threshold, else null. Computed when the team reads the thread, so it reflects features made since.
 */
export async function threadSuggestion(ds: DataSource, productId: string, threadId: string, threshold: number): Promise<SimilarCandidate | null> {
  const [signal]: Array<{ id: string }> = await ds.query(
    'SELECT id FROM signals WHERE thread_id = $1 AND product_id = $2 ORDER BY created_at, id LIMIT 1', [threadId, productId]);
  if (!signal) return null;
  const best = (await measuredCandidates(ds, { type: 'signal', productId, id: signal.id, threshold }))[0];
  if (!best?.suggested) return null;
  const { measures: _measures, ...candidate } = best;
  return candidate;
}
