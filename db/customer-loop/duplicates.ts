import { DataSource, EntityManager } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import {
  DuplicateMeasures, DuplicateModel, FULL_TEXT_MODEL, SYNONYM_GROUPS, TRIGRAM_MODEL, TextLexemes, canonicalLexeme, duplicateScore,
  isGeneric, measureDuplicate,
} from '../rules/duplicate-score';

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
const FULL_TEXT_CANDIDATES = 30;
const TRIGRAM_CANDIDATES = 10;
/** Words of the source that look for candidates: the title's first, then the body's most frequent. */
const QUERY_WORDS = 8;
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

const TABLE = { signal: 'signals', feature: 'features' } as const;

/** A text's lexemes: the title's (weight A), and the body's others, the most frequent first. */
const LEXEME_COLUMNS = (alias: string) => `
  coalesce((SELECT array_agg(u.lexeme) FROM unnest(${alias}.search_vector) u WHERE 'A' = ANY(u.weights)), '{}') AS title_lexemes,
  coalesce((SELECT array_agg(u.lexeme ORDER BY coalesce(array_length(u.positions, 1), 1) DESC, u.lexeme)
              FROM unnest(${alias}.search_vector) u WHERE NOT ('A' = ANY(u.weights))), '{}') AS body_lexemes`;

interface LexemeRow {
  id: string;
  title: string;
  title_lexemes: string[];
  body_lexemes: string[];
}

/** Each synonym group as tsquery alternatives, so that a query word finds every spelling of it. */
const GROUP_OF: ReadonlyMap<string, readonly string[]> = new Map(SYNONYM_GROUPS.flatMap((g) => g.map((w) => [w, g] as const)));

/** A lexeme as a tsquery operand: quoted, so that no character of it is read as an operator. */
const operand = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

const alternatives = (lexeme: string) => `(${(GROUP_OF.get(lexeme) ?? [lexeme]).map(operand).join(' | ')})`;

/**
 * The source's words as two tsqueries: `rank` ORs them all; `filter` asks for any two of them when there
 * are three or more (one shared word is weak evidence, and in a big product it would rank thousands of
 * rows), else for any one.
 */
export function candidateQueries(words: string[]): { filter: string; rank: string } | null {
  if (words.length === 0) return null;
  const groups = words.map(alternatives);
  const rank = groups.join(' | ');
  if (groups.length < 3) return { filter: rank, rank };
  const pairs: string[] = [];
  for (let i = 0; i < groups.length; i++) for (let j = i + 1; j < groups.length; j++) pairs.push(`(${groups[i]} & ${groups[j]})`);
  return { filter: pairs.join(' | '), rank };
}

interface Source {
  type: SimilarType;
  id: string;
  productId: string;
  title: string;
  lexemes: TextLexemes;
  words: string[];
}

async function loadSource(db: Db, type: SimilarType, productId: string, id: string): Promise<Source> {
  const [row]: LexemeRow[] = await db.query(
    `SELECT t.id, t.title, ${LEXEME_COLUMNS('t')} FROM ${TABLE[type]} t WHERE t.id = $1 AND t.product_id = $2`,
    [id, productId],
  );
  if (!row) throw notFound(type);
  const seen = new Set<string>();
  const words: string[] = [];
  for (const lexeme of [...row.title_lexemes, ...row.body_lexemes]) {
    const key = canonicalLexeme(lexeme);
    if (isGeneric(key) || seen.has(key) || words.length >= QUERY_WORDS) continue;
    seen.add(key);
    words.push(lexeme);
  }
  return { type, id: row.id, productId, title: row.title, lexemes: { title: row.title_lexemes, body: row.body_lexemes }, words };
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
  if (source.type === 'signal' && type === 'feature') conditions.push('NOT EXISTS (SELECT 1 FROM feature_signal_links l WHERE l.feature_id = t.id AND l.signal_id = $2)');
  if (source.type === 'feature' && type === 'signal') conditions.push('NOT EXISTS (SELECT 1 FROM feature_signal_links l WHERE l.feature_id = $2 AND l.signal_id = t.id)');
  return conditions.length > 0 ? `AND ${conditions.join(' AND ')}` : '';
}

interface CandidateRow extends LexemeRow {
  trigram: number | null;
  fts_rank: number;
}

/** Candidates of one table: the best by full-text rank, and (with pg_trgm) the titles most alike. */
async function candidatesIn(db: Db, source: Source, type: SimilarType, trigram: boolean): Promise<CandidateRow[]> {
  const queries = candidateQueries(source.words);
  const where = `t.product_id = $1 ${exclusions(source, type)}`;
  const sets: string[] = [];
  const params: unknown[] = [source.productId, source.id];
  if (queries) {
    params.push(queries.filter, queries.rank);
    sets.push(`(SELECT t.id FROM ${TABLE[type]} t WHERE ${where} AND t.search_vector @@ $3::tsquery
                ORDER BY ts_rank(t.search_vector, $4::tsquery) DESC, t.id LIMIT ${FULL_TEXT_CANDIDATES})`);
  }
  if (trigram) {
    params.push(source.title);
    const title = `$${params.length}`;
    sets.push(`(SELECT t.id FROM ${TABLE[type]} t WHERE ${where} AND t.title % ${title}
                ORDER BY similarity(t.title, ${title}) DESC, t.id LIMIT ${TRIGRAM_CANDIDATES})`);
  }
  if (sets.length === 0) return [];
  // Word similarity both ways: a short title inside a longer one counts as alike.
  const title = `$${params.length}`;
  const similarity = trigram ? `greatest(word_similarity(${title}, t.title), word_similarity(t.title, ${title}))` : 'NULL::real';
  // Normalisation 32 maps the rank into 0..1 (rank / (rank + 1)).
  const rank = queries ? 'ts_rank(t.search_vector, $4::tsquery, 32)' : '0::real';
  return db.query(
    `SELECT t.id, t.title, ${similarity} AS trigram, ${rank} AS fts_rank, ${LEXEME_COLUMNS('t')}
       FROM ${TABLE[type]} t WHERE t.id IN (${sets.join(' UNION ')})`,
    params,
  );
}

export interface MeasuredCandidate extends SimilarCandidate {
  measures: DuplicateMeasures;
}

function scored(source: Source, type: SimilarType, rows: CandidateRow[], model: DuplicateModel, threshold: number): MeasuredCandidate[] {
  return rows.map((row) => {
    const { matched, ...measures } = measureDuplicate(source.lexemes, { title: row.title_lexemes, body: row.body_lexemes }, { trigram: row.trigram, ftsRank: row.fts_rank });
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
