/**
 * Duplicate detection benchmark (not a test). Two parts, on a scratch database (`DATABASE_URL`'s server,
 * or an embedded PostgreSQL):
 *
 * 1. Quality, on the labelled corpus test/fixtures/duplicate-feedback.json stored as the signals of one
 *    product: for every text that has a duplicate, whether one is among its top 3 candidates (recall@3);
 *    the top candidate is the suggestion when it reaches the threshold: precision of those suggestions
 *    (singletons included, where any suggestion is wrong) and the share of texts with a duplicate that
 *    get a right one. A sweep shows both at other thresholds.
 * 2. Latency of `GET /api/v1/signals/{id}/similar` through the API, run as a process of its own
 *    (`api/server.ts`, as `npm run api` runs it), on a product of BENCH_SIGNALS (100,000) signals seeded
 *    with one INSERT ... SELECT generate_series from the corpus's vocabulary: BENCH_REQUESTS requests,
 *    BENCH_CONCURRENCY at a time; p50, p99 and max.
 *
 *   npm run bench:duplicates
 *   npm run bench:duplicates -- --fit          # fit the score's model on the corpus (2-fold by group) and print it
 *   DATABASE_URL=postgres://... BENCH_SIGNALS=100000 BENCH_REQUESTS=1000 BENCH_CONCURRENCY=1 npm run bench:duplicates
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { openDatabase } from '../db/data-source';
import { MeasuredCandidate, measuredCandidates, trigramAvailable } from '../db/customer-loop/duplicates';
import { DuplicateMeasures, DuplicateModel, MEASURE_NAMES, duplicateScore } from '../db/rules/duplicate-score';
import { createServiceKey } from '../db/platform/service-keys';
import { createOrganization, createProduct } from '../db/platform/tenancy';
import { loadConfig } from '../runtime/config';
import { Cleanup, freePort, startScratchDatabase } from '../test/support/servers';
import { startRole } from './roles';
import { quantile } from './stats';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SIGNALS = env('BENCH_SIGNALS', 100_000);
const REQUESTS = env('BENCH_REQUESTS', 1_000);
const CONCURRENCY = env('BENCH_CONCURRENCY', 1);
const FIT = process.argv.includes('--fit');

interface Corpus {
  groups: Array<{ id: string; texts: Array<{ title: string; body: string }> }>;
  singletons: Array<{ title: string; body: string }>;
}

interface Text {
  group: string | null;
  title: string;
  body: string;
}

export function loadCorpus(): Text[] {
  const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, '../test/fixtures/duplicate-feedback.json'), 'utf8')) as Corpus;
  return [
    ...corpus.groups.flatMap((g) => g.texts.map((t) => ({ group: g.id, ...t }))),
    ...corpus.singletons.map((t) => ({ group: null, ...t })),
  ];
}

/** Stores texts as signals of the product, each in a thread of its own; answers their ids in order. */
async function storeSignals(ds: DataSource, tenant: { organizationId: string; productId: string }, texts: Text[]): Promise<string[]> {
  const ids = texts.map(() => `sig_${randomBytes(10).toString('hex')}`);
  await ds.query(
    `WITH input AS (SELECT * FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS i(id, title, body, n)),
          threads AS (INSERT INTO threads (id, organization_id, product_id, end_user_id, subject)
                      SELECT 'thr_' || id, $1, $2, 'bench-' || n, title FROM input)
     INSERT INTO signals (id, organization_id, product_id, thread_id, end_user_id, category, title, body, idempotency_key, analysis_state)
     SELECT id, $1, $2, 'thr_' || id, 'bench-' || n, 'feature', title, body, 'bench-' || id, 'done' FROM input`,
    [tenant.organizationId, tenant.productId, ids, texts.map((t) => t.title), texts.map((t) => t.body)],
  );
  return ids;
}

interface Query {
  group: string | null;
  hasDuplicate: boolean;
  candidates: Array<{ group: string | null; measures: DuplicateMeasures; score: number }>;
}

interface Quality {
  recallAt3: number;
  precision: number;
  suggestedShare: number;
  suggestions: number;
}

function quality(queries: Query[], model: DuplicateModel | null, threshold: number): Quality {
  let withDuplicate = 0;
  let found = 0;
  let suggestions = 0;
  let right = 0;
  let rightWithDuplicate = 0;
  for (const q of queries) {
    const ranked = q.candidates
      .map((c) => ({ ...c, score: model ? duplicateScore(c.measures, model) : c.score }))
      .sort((a, b) => b.score - a.score);
    const isRight = (c: { group: string | null }) => q.group !== null && c.group === q.group;
    if (q.hasDuplicate) {
      withDuplicate += 1;
      if (ranked.slice(0, 3).some(isRight)) found += 1;
    }
    const top = ranked[0];
    if (top && top.score >= threshold) {
      suggestions += 1;
      if (isRight(top)) {
        right += 1;
        if (q.hasDuplicate) rightWithDuplicate += 1;
      }
    }
  }
  return {
    recallAt3: found / withDuplicate,
    precision: suggestions === 0 ? 1 : right / suggestions,
    suggestedShare: rightWithDuplicate / withDuplicate,
    suggestions,
  };
}

/** Logistic regression by gradient descent (the measures are all 0 to 1), with a little L2. */
function fit(rows: Array<{ x: DuplicateMeasures; y: number }>): DuplicateModel {
  const w = Object.fromEntries(MEASURE_NAMES.map((n) => [n, 0])) as unknown as DuplicateMeasures;
  let b = 0;
  const positives = rows.filter((r) => r.y === 1).length;
  // Balanced classes: a text has few duplicates among its many candidates.
  const weightOf = (y: number) => (y === 1 ? rows.length / (2 * positives) : rows.length / (2 * (rows.length - positives)));
  for (let epoch = 0; epoch < 4000; epoch++) {
    const grad = Object.fromEntries(MEASURE_NAMES.map((n) => [n, 0])) as unknown as DuplicateMeasures;
    let gb = 0;
    for (const r of rows) {
      let z = b;
      for (const n of MEASURE_NAMES) z += w[n] * r.x[n];
      const e = (1 / (1 + Math.exp(-z)) - r.y) * weightOf(r.y);
      for (const n of MEASURE_NAMES) grad[n] += e * r.x[n];
      gb += e;
    }
    // Every measure says "more alike": no weight may turn negative.
    for (const n of MEASURE_NAMES) w[n] = Math.max(0, w[n] - 2 * (grad[n] / rows.length + 0.001 * w[n]));
    b -= 2 * (gb / rows.length);
  }
  const round = (v: number) => Math.round(v * 100) / 100;
  return { intercept: round(b), weights: Object.fromEntries(MEASURE_NAMES.map((n) => [n, round(w[n])])) as unknown as DuplicateMeasures };
}

const trainingRows = (queries: Query[]) => queries.flatMap((q) => q.candidates.map((c) =>
  ({ x: c.measures, y: q.group !== null && c.group === q.group ? 1 : 0 })));

const pct = (v: number) => `${(100 * v).toFixed(1)}%`;

async function measureQuality(ds: DataSource, threshold: number): Promise<void> {
  const org = await createOrganization(ds, { name: 'Bench duplicates', sponsored: true });
  const product = await createProduct(ds, { organizationId: org.id, name: 'Corpus' });
  const texts = loadCorpus();
  const ids = await storeSignals(ds, { organizationId: org.id, productId: product.id }, texts);
  // The statistics autovacuum would gather: which words are common (duplicates.ts looks up the rarest).
  await ds.query('ANALYZE signals');
  const groupOf = new Map(ids.map((id, i) => [id, texts[i].group]));
  const sizes = new Map<string, number>();
  for (const t of texts) if (t.group) sizes.set(t.group, (sizes.get(t.group) ?? 0) + 1);
  const queries: Query[] = [];
  for (const [i, id] of ids.entries()) {
    const found: MeasuredCandidate[] = await measuredCandidates(ds, { type: 'signal', productId: product.id, id, threshold });
    const group = texts[i].group;
    queries.push({
      group, hasDuplicate: group !== null && (sizes.get(group) ?? 0) > 1,
      candidates: found.map((c) => ({ group: groupOf.get(c.id) ?? null, measures: c.measures, score: c.score })),
    });
  }
  const groups = new Set(texts.map((t) => t.group).filter((g) => g !== null));
  console.log(`corpus: ${texts.length} texts, ${groups.size} duplicate groups, ${texts.filter((t) => t.group === null).length} singletons; pg_trgm ${await trigramAvailable(ds) ? 'used' : 'missing (full-text search only)'}`);
  if (FIT) {
    // Two folds by group: each half's figures come from a model fitted on the other half.
    const fold = (q: Query, i: number) => (q.group === null ? i % 2 : [...groups].indexOf(q.group) % 2);
    const halves = [0, 1].map((f) => queries.filter((q, i) => fold(q, i) === f));
    for (const f of [0, 1]) {
      const model = fit(trainingRows(halves[1 - f]));
      const figures = quality(halves[f], model, threshold);
      console.log(`fold ${f} (fitted on the other): recall@3 ${pct(figures.recallAt3)}, precision ${pct(figures.precision)}, right suggestions ${pct(figures.suggestedShare)} at ${threshold}`);
    }
    console.log('fitted on all:', JSON.stringify(fit(trainingRows(queries))));
    const withoutTrigram = trainingRows(queries).map((r) => ({ ...r, x: { ...r.x, trigram: 0 } }));
    console.log('fitted on all without pg_trgm:', JSON.stringify(fit(withoutTrigram)));
    return;
  }
  // The baseline the issue names: plain full-text search, every lexeme of the text ORed, ranked by ts_rank.
  let baselineFound = 0;
  for (const [i, id] of ids.entries()) {
    if (!queries[i].hasDuplicate) continue;
    const top: Array<{ id: string }> = await ds.query(
      `SELECT t.id FROM signals t, (SELECT to_tsquery('simple', string_agg(quote_literal(u.lexeme), ' | ')) AS q FROM signals s, unnest(s.search_vector) u WHERE s.id = $2) src
        WHERE t.product_id = $1 AND t.id <> $2 AND t.search_vector @@ src.q ORDER BY ts_rank(t.search_vector, src.q) DESC, t.id LIMIT 3`,
      [product.id, id],
    );
    if (top.some((t) => groupOf.get(t.id) === texts[i].group)) baselineFound += 1;
  }
  console.log(`baseline, plain full-text search (ORed lexemes, ts_rank): recall@3 ${pct(baselineFound / queries.filter((q) => q.hasDuplicate).length)}`);
  const figures = quality(queries, null, threshold);
  console.log(`recall@3                                     ${pct(figures.recallAt3)}`);
  console.log(`suggestions at threshold ${threshold}: precision ${pct(figures.precision)} (${figures.suggestions} made), texts with a duplicate given a right one ${pct(figures.suggestedShare)}`);
  console.log('threshold sweep: threshold, precision, right suggestions');
  for (const t of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) {
    const q = quality(queries, null, t);
    console.log(`  ${t.toFixed(2)}  ${pct(q.precision).padStart(6)}  ${pct(q.suggestedShare).padStart(6)}`);
  }
}

/** BENCH_SIGNALS signals of random words of the corpus (the common ones more often), plus the corpus itself. */
async function seedLargeProduct(ds: DataSource, tenant: { organizationId: string; productId: string }): Promise<string[]> {
  const texts = loadCorpus();
  const words = [...new Set(texts.flatMap((t) => `${t.title} ${t.body}`.toLowerCase().match(/[a-z][a-z']+/g) ?? []))];
  const started = performance.now();
  // random()^2 skews the picks towards the front of the list, as real vocabulary is skewed.
  await ds.query(
    `WITH input AS (
       SELECT n, (SELECT string_agg(($3::text[])[1 + floor(random() ^ 2 * $4)::int], ' ') FROM generate_series(1, 3 + (n % 5)) WHERE n > 0) AS title,
                 (SELECT string_agg(($3::text[])[1 + floor(random() ^ 2 * $4)::int], ' ') FROM generate_series(1, 12 + (n % 30)) WHERE n > 0) AS body
         FROM generate_series(1, $5) n),
     threads AS (INSERT INTO threads (id, organization_id, product_id, end_user_id, subject)
                 SELECT 'thr_bench_' || n, $1, $2, 'bench-' || (n % 5000), title FROM input)
     INSERT INTO signals (id, organization_id, product_id, thread_id, end_user_id, category, title, body, idempotency_key, analysis_state)
     SELECT 'sig_bench_' || n, $1, $2, 'thr_bench_' || n, 'bench-' || (n % 5000), 'feature', title, body, 'bench-' || n, 'done' FROM input`,
    [tenant.organizationId, tenant.productId, words, words.length, SIGNALS],
  );
  const corpusIds = await storeSignals(ds, tenant, texts);
  // A settled table, as autovacuum leaves it: statistics gathered, the GIN pending lists merged.
  await ds.query('VACUUM ANALYZE signals');
  console.log(`seeded ${SIGNALS} signals + ${texts.length} corpus texts in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return corpusIds;
}

async function measureLatency(ds: DataSource, url: string): Promise<void> {
  const config = loadConfig({ ...process.env, DATABASE_URL: url });
  const org = await createOrganization(ds, { name: 'Bench 100k', sponsored: true });
  const product = await createProduct(ds, { organizationId: org.id, name: 'Large' });
  const corpusIds = await seedLargeProduct(ds, { organizationId: org.id, productId: product.id });
  const key = await createServiceKey(ds, { organizationId: org.id, productId: product.id, environment: config.environment, scopes: ['service:signals:read'] });
  const cleanup: Cleanup = [];
  try {
    const port = await freePort();
    // The API connects to Temporal lazily and /similar never does: no Temporal server is needed.
    await startRole(cleanup, 'api', 'api/server.ts', {
      DATABASE_URL: url, TEMPORAL_ADDRESS: '127.0.0.1:1', PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '1000000',
    }, /API listening on/);
    // Half the requests for corpus texts (real duplicates among 100,000), half for random seeded signals.
    const idOf = (i: number) => (i % 2 === 0 ? corpusIds[(i / 2) % corpusIds.length] : `sig_bench_${1 + ((i * 7919) % SIGNALS)}`);
    const texts = loadCorpus();
    const groupOf = new Map(corpusIds.map((id, i) => [id, texts[i].group]));
    const found = new Map<string, boolean>();
    const get = async (i: number) => {
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/signals/${idOf(i)}/similar`, { headers: { authorization: `Bearer ${key.secret}` } });
      const body = await res.json() as { data: Array<{ id: string }> };
      if (res.status !== 200) throw new Error(`GET /similar answered ${res.status}`);
      const group = groupOf.get(idOf(i));
      if (group) found.set(idOf(i), body.data.slice(0, 3).some((c) => groupOf.get(c.id) === group));
      return performance.now() - t0;
    };
    for (let i = 0; i < 50; i++) await get(i + 1_000_000);
    const latencies: number[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) latencies.push(await get(next++));
    }));
    latencies.sort((a, b) => a - b);
    console.log(`GET /api/v1/signals/{id}/similar on ${SIGNALS} signals, ${REQUESTS} requests, ${CONCURRENCY} at a time:`);
    console.log(`  p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms`);
    const asked = [...found.values()];
    console.log(`  recall@3 of the ${asked.length} corpus texts asked, among the 100,000: ${pct(asked.filter(Boolean).length / asked.length)}`);
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}

async function main(): Promise<void> {
  // On a server's database every role needs the key ring; the API inherits this one, so both open the same secrets.
  process.env.SV_SECRET_KEYS ??= `bench:${randomBytes(32).toString('base64')}`;
  const cleanup: Cleanup = [];
  try {
    const url = await startScratchDatabase(cleanup, 'sv_bench');
    const ds = await openDatabase(url, 4);
    cleanup.push(() => ds.destroy());
    const threshold = loadConfig().duplicateThreshold;
    await measureQuality(ds, threshold);
    if (!FIT && SIGNALS > 0) await measureLatency(ds, url);
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}

if (require.main === module) main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
