import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, notFound } from '../../runtime/service-error';
import { Feature, Signal } from '../entities';
import { SignalCategory } from '../entities/signal';
import { newId } from '../rules/ids';
import { OUTBOX_INSERT } from '../outbox';
import { shardQuotasSql } from '../platform/rate-windows';
import { Page, PageRequest, pageOf } from '../pagination';

export interface ProductTenant {
  organizationId: string;
  productId: string;
}

export interface CreateSignalInput {
  endUserId: string;
  email?: string;
  name?: string;
  kind?: SignalCategory;
  title: string;
  body: string;
  idempotencyKey: string;
  context?: Record<string, unknown>;
}

export interface IntakeLimits {
  monthlyAllowance: number;
  dailyCeiling: number;
  /** False without a configured AI provider: the signal is stored with analysisState 'skipped' and no analysis starts. */
  analysisAvailable: boolean;
}

export interface SignalReceipt {
  id: string;
  threadId: string;
  state: string;
  replayed: boolean;
}

export interface SignalView {
  id: string;
  threadId: string;
  endUserId: string;
  category: string;
  title: string;
  body: string;
  urgency: string;
  sentiment: string | null;
  summary: string | null;
  analysisState: string;
  overAllowance: boolean;
  createdAt: string;
  updatedAt: string;
}

export function viewSignal(s: Signal): SignalView {
  return {
    id: s.id,
    threadId: s.threadId,
    endUserId: s.endUserId,
    category: s.category,
    title: s.title,
    body: s.body,
    urgency: s.urgency,
    sentiment: s.sentiment,
    summary: s.summary,
    analysisState: s.analysisState,
    overAllowance: s.overAllowance,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** Seconds from `now` to the next UTC midnight, when the daily ceiling opens again. */
export function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export const monthPeriod = (now: Date) => now.toISOString().slice(0, 7);

async function findReceipt(ds: DataSource | EntityManager, productId: string, idempotencyKey: string): Promise<SignalReceipt | null> {
  const rows: Array<{ id: string; thread_id: string; state: string }> = await ds.query(
    `SELECT s.id, s.thread_id, t.state FROM signals s JOIN threads t ON t.id = s.thread_id
      WHERE s.product_id = $1 AND s.idempotency_key = $2`,
    [productId, idempotencyKey],
  );
  return rows[0] ? { id: rows[0].id, threadId: rows[0].thread_id, state: rows[0].state, replayed: true } : null;
}

interface IntakeOutcome {
  fresh: number;
  room: number;
  counted: number;
  stored: number;
}

/**
 * How many rows the day's and the month's counts of one workspace are spread over. One row per period
 * made every intake of a busy workspace queue on that row's lock until commit; with shards, concurrent
 * intakes mostly lock different rows.
 */
export const INTAKE_COUNTER_SHARDS = 32;

/**
 * Stores a signal with its end user, thread and first message, counts it against the workspace's
 * daily ceiling and monthly allowance, and queues signal.created, all in one statement (atomic on its
 * own, one round trip). The day's count is spread over shard rows (`day:2026-11-22`, `day:...#1`, ...)
 * whose quotas add up to the ceiling: a shard only moves while it is under its quota, re-checked on
 * the locked row, so the ceiling holds exactly under concurrency (no overshoot), and a refused signal
 * writes nothing. A signal is refused only when every shard is full; when the shard it picked filled
 * up concurrently, it tries again. The month's count is sharded the same way; a signal is over the
 * allowance when the shard it lands on is past its quota, which may flag one early when two intakes
 * race for a shard's last unit (the analysis relay's own exact count then clears it). The unique
 * (product, idempotencyKey) constraint decides between concurrent duplicates; the loser answers the
 * winner's receipt (its day and month counts stay one too high, which only errs towards caution).
 */
export async function createSignal(
  ds: DataSource, tenant: ProductTenant, input: CreateSignalInput, limits: IntakeLimits, now = new Date(),
): Promise<SignalReceipt> {
  // Each lost race means another intake took a unit of the day, so the loop ends within the ceiling.
  for (let attempt = 0; ; attempt++) {
    const receipt = await tryCreateSignal(ds, tenant, input, limits, now);
    if (receipt) return receipt;
    if (attempt >= 10_000) throw new Error('signal intake kept losing the race for a day shard');
  }
}

async function tryCreateSignal(
  ds: DataSource, tenant: ProductTenant, input: CreateSignalInput, limits: IntakeLimits, now: Date,
): Promise<SignalReceipt | null> {
  const signalId = newId('sig');
  const threadId = newId('thr');
  const category = input.kind ?? 'support';
  const iso = now.toISOString();
  const [outcome]: IntakeOutcome[] = await ds.query(
    `WITH lim AS (
       SELECT coalesce(l.daily_safety_ceiling, $17::int) AS ceiling, coalesce(l.monthly_signal_allowance, $18::int) AS allowance
         FROM (SELECT 1) AS one LEFT JOIN intake_limits l ON l.organization_id = $2
     ), fresh AS (
       SELECT 1 FROM lim WHERE NOT EXISTS (SELECT 1 FROM signals WHERE product_id = $3 AND idempotency_key = $10)
     ), day AS (
       SELECT q.period, coalesce(c.count, 0) AS count, q.quota, lim.ceiling
         FROM lim, LATERAL (${shardQuotasSql('period', '$15', 'lim.ceiling', '$21::int')}) AS q
         LEFT JOIN intake_counters c ON c.organization_id = $2 AND c.period = q.period
     ), pick AS (
       SELECT period, quota FROM day, fresh
        WHERE day.count < day.quota AND (SELECT sum(count) FROM day) < day.ceiling
        ORDER BY random() LIMIT 1
     ), d AS (
       INSERT INTO intake_counters AS c (organization_id, period, count)
       SELECT $2, pick.period, 1 FROM pick
       ON CONFLICT (organization_id, period) DO UPDATE SET count = c.count + 1
         WHERE c.count < (SELECT quota FROM pick)
       RETURNING count
     ), mon AS (
       SELECT q.period, coalesce(c.count, 0) AS count, q.quota
         FROM lim, LATERAL (${shardQuotasSql('period', '$16', 'lim.allowance', '$21::int')}) AS q
         LEFT JOIN intake_counters c ON c.organization_id = $2 AND c.period = q.period
     ), mpick AS (
       SELECT period, quota FROM mon ORDER BY (count < quota) DESC, random() LIMIT 1
     ), m AS (
       INSERT INTO intake_counters AS c (organization_id, period, count)
       SELECT $2, mpick.period, 1 FROM d, mpick
       ON CONFLICT (organization_id, period) DO UPDATE SET count = c.count + 1
       RETURNING count
     ), s AS (
       INSERT INTO signals (id, organization_id, product_id, thread_id, end_user_id, category, title, body, context,
                            idempotency_key, analysis_state, over_allowance, created_at, updated_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
              CASE WHEN NOT $22::boolean THEN 'skipped' WHEN m.count > mpick.quota THEN 'waiting' ELSE 'pending' END, m.count > mpick.quota, $13, $13
         FROM m, mpick
       ON CONFLICT (product_id, idempotency_key) DO NOTHING
       RETURNING id
     ), u AS (
       INSERT INTO end_users (product_id, end_user_id, organization_id, email, name, created_at, updated_at)
       SELECT $3, $5, $2, $11, $12, $13, $13 FROM s
       ON CONFLICT (product_id, end_user_id) DO UPDATE
         SET email = COALESCE(EXCLUDED.email, end_users.email), name = COALESCE(EXCLUDED.name, end_users.name),
             updated_at = EXCLUDED.updated_at
     ), t AS (
       INSERT INTO threads (id, organization_id, product_id, end_user_id, subject, state, created_at, updated_at)
       SELECT $4, $2, $3, $5, $7, 'open', $13, $13 FROM s
       RETURNING id
     ), msg AS (
       INSERT INTO thread_messages (id, thread_id, author_type, author_id, visibility, body, created_at)
       SELECT $14, t.id, 'end_user', $5, 'customer', $8, $13 FROM t
     ), o AS (
       ${OUTBOX_INSERT} SELECT $19, $2, $3, 'signal.created', $20::jsonb FROM s
     )
     SELECT (SELECT count(*) FROM fresh)::int AS fresh, (SELECT count(*) FROM pick)::int AS room,
            (SELECT count(*) FROM d)::int AS counted, (SELECT count(*) FROM s)::int AS stored`,
    [
      signalId, tenant.organizationId, tenant.productId, threadId, input.endUserId, category, input.title,
      input.body, input.context === undefined ? null : JSON.stringify(input.context), input.idempotencyKey,
      input.email ?? null, input.name ?? null, now, newId('msg'), `day:${iso.slice(0, 10)}`, `month:${monthPeriod(now)}`,
      limits.dailyCeiling, limits.monthlyAllowance, newId('evt'),
      JSON.stringify({ signalId, threadId, endUserId: input.endUserId, category }), INTAKE_COUNTER_SHARDS, limits.analysisAvailable,
    ],
  );
  if (outcome.stored === 1) return { id: signalId, threadId, state: 'open', replayed: false };
  if (outcome.fresh === 1 && outcome.room === 0) {
    const ceiling = await dailyCeiling(ds, tenant.organizationId, limits);
    const wait = secondsToNextUtcDay(now);
    throw new ServiceError('INTAKE_SAFETY_CEILING', 429, `the workspace reached its daily safety ceiling of ${ceiling} signals; intake reopens at the next UTC day`,
      { ceiling, retryAfterSeconds: wait }, { 'retry-after': String(wait) });
  }
  if (outcome.fresh === 1 && outcome.counted === 0) return null;
  const winner = await findReceipt(ds, tenant.productId, input.idempotencyKey);
  if (!winner) throw new Error('signal intake stored nothing and found no earlier signal with its key');
  return winner;
}

async function dailyCeiling(ds: DataSource, organizationId: string, limits: IntakeLimits): Promise<number> {
  const rows: Array<{ ceiling: number | null }> = await ds.query(
    'SELECT daily_safety_ceiling AS ceiling FROM intake_limits WHERE organization_id = $1', [organizationId]);
  return rows[0]?.ceiling ?? limits.dailyCeiling;
}

export interface SignalFilter {
  category?: string;
  since?: Date;
  endUserId?: string;
}

export async function listSignals(
  ds: DataSource, productId: string, filter: SignalFilter, page: PageRequest,
): Promise<Page<SignalView>> {
  const qb = ds.getRepository(Signal).createQueryBuilder('s').where('s.product_id = :productId', { productId });
  if (filter.category) qb.andWhere('s.category = :category', { category: filter.category });
  if (filter.since) qb.andWhere('s.created_at >= :since', { since: filter.since });
  if (filter.endUserId) qb.andWhere('s.end_user_id = :endUserId', { endUserId: filter.endUserId });
  return pageOf(qb, 's', page, viewSignal);
}

export async function findSignal(ds: DataSource | EntityManager, productId: string, id: string): Promise<Signal> {
  const signal = await ds.getRepository(Signal).findOneBy({ id, productId });
  if (!signal) throw notFound('signal');
  return signal;
}

/** A signal with the features it is evidence for, and those the analysis proposed. */
export async function getSignal(ds: DataSource, productId: string, id: string) {
  const signal = await findSignal(ds, productId, id);
  const features = await ds.getRepository(Feature).createQueryBuilder('f')
    .innerJoin('feature_signal_links', 'l', 'l.feature_id = f.id')
    .where('l.signal_id = :id AND f.product_id = :productId', { id, productId })
    .orderBy('f.score', 'DESC').addOrderBy('f.id', 'ASC')
    .getMany();
  return {
    ...viewSignal(signal),
    candidateFeatureIds: signal.candidateFeatureIds,
    features: features.map((f) => ({ id: f.id, title: f.title, state: f.state, score: f.score })),
  };
}
