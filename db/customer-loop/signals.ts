import { DataSource, EntityManager } from 'typeorm';
import { groupedCalls } from '../../runtime/grouped-calls';
import { ServiceError, notFound } from '../../runtime/service-error';
import { Feature, Signal } from '../entities';
import { SignalCategory } from '../entities/signal';
import { newId } from '../rules/ids';
import { secondsToNextUtcDay } from '../rules/date-time';
import { OUTBOX_INSERT } from '../outbox';
import { queryPrepared } from '../prepared-statements';
import { Block, UnitLeases, blockOf } from '../platform/unit-leases';
import { Page, PageRequest, pageOf } from '../pagination';
import type { ProductTenant } from '../platform/product-tenant';

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

export const monthPeriod = (now: Date) => now.toISOString().slice(0, 7);

async function lookupReceipt(ds: DataSource | EntityManager, productId: string, idempotencyKey: string): Promise<SignalReceipt | null> {
  const rows: Array<{ id: string; thread_id: string; state: string }> = await ds.query(
    `SELECT s.id, s.thread_id, t.state FROM signals s JOIN threads t ON t.id = s.thread_id
      WHERE s.product_id = $1 AND s.idempotency_key = $2`,
    [productId, idempotencyKey],
  );
  return rows[0] ? { id: rows[0].id, threadId: rows[0].thread_id, state: rows[0].state, replayed: true } : null;
}

interface IntakeOutcome {
  room: number;
  stored: number;
}

type StoredOutcome = IntakeOutcome & { signalId: string; threadId: string };

type LimitColumn = 'daily_safety_ceiling' | 'monthly_signal_allowance';

/**
 * How long a process holds "the day (or month) is full" before asking again. Asking on every signal
 * would make a workspace past its allowance (every signal then over it) or its ceiling queue on the
 * counter row's lock again; a raised ceiling or allowance shows within this time.
 */
const FULL_RECHECK_MS = 1_000;

/**
 * Takes a block of a workspace's day (`day:2026-11-23`) or month (`month:2026-11`) count: `subject` is
 * `<organizationId> <period>`, the limit the workspace's own (intake_limits) or `fallback`. The count
 * only grows to the limit, so no process is granted more than is left.
 */
function takeIntakeUnits(ds: DataSource, column: LimitColumn) {
  return async (subject: string, fallback: number): Promise<Block> => {
    const [organizationId, period] = subject.split(' ');
    return ds.transaction(async (em) => {
      await em.query(
        `INSERT INTO intake_counters (organization_id, period, count) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`, [organizationId, period]);
      const [row]: Array<{ count: number; limit: number }> = await em.query(
        `SELECT c.count, coalesce(l.${column}, $3::int) AS limit
           FROM intake_counters c LEFT JOIN intake_limits l ON l.organization_id = c.organization_id
          WHERE c.organization_id = $1 AND c.period = $2 FOR UPDATE OF c`, [organizationId, period, fallback]);
      const granted = Math.min(blockOf(row.limit), Math.max(0, row.limit - row.count));
      if (granted > 0) {
        await em.query(`UPDATE intake_counters SET count = count + $3 WHERE organization_id = $1 AND period = $2`, [organizationId, period, granted]);
      }
      const full = row.count + granted >= row.limit;
      return { granted, count: row.count + granted, endsAt: periodEnd(period), full, fullUntil: Date.now() + FULL_RECHECK_MS };
    });
  };
}

/** When a `day:` or `month:` period ends, epoch milliseconds (UTC). */
function periodEnd(period: string): number {
  const [kind, value] = period.split(':');
  const [y, m, d] = value.split('-').map(Number);
  return kind === 'day' ? Date.UTC(y, m - 1, d + 1) : Date.UTC(y, m, 1);
}

/**
 * This process's units of every workspace's day and month counts (intake_counters), taken in blocks of
 * a 64th of the workspace's ceiling or allowance (`UnitLeases`), so that intake writes no counter row
 * per signal. The day never counts past its ceiling; a signal may be refused early by at most the
 * units other API processes took and have not spent, (processes − 1) × ⌈ceiling / 64⌉ − 1 (exact below
 * a ceiling of 64).
 */
export class IntakeCounters {
  readonly day: UnitLeases;
  readonly month: UnitLeases;

  constructor(ds: DataSource) {
    this.day = new UnitLeases(takeIntakeUnits(ds, 'daily_safety_ceiling'));
    this.month = new UnitLeases(takeIntakeUnits(ds, 'monthly_signal_allowance'));
  }
}

/**
 * Stores a signal with its end user, thread and first message, and queues signal.created, in one
 * statement (atomic; shared with the intakes in flight beside it, `storeSignals`), after taking a unit of the workspace's day and month
 * counts from this process's leases (`IntakeCounters`). A unit that stored nothing goes back.
 * - Ceiling: without a unit of the day the signal is refused (429), unless its idempotencyKey replays.
 *   The statement also refuses when the day's count has passed a ceiling lowered since: a lowered
 *   ceiling refuses at once.
 * - Allowance: a signal without a unit of the month is over the allowance (`waiting`); another
 *   process's unspent units may flag one early, and the analysis relay's own exact count then
 *   analyses it anyway.
 * - The unique (product, idempotencyKey) constraint decides between concurrent duplicates; the loser
 *   answers the winner's receipt.
 */
export async function createSignal(
  ds: DataSource, counters: IntakeCounters, tenant: ProductTenant, input: CreateSignalInput, limits: IntakeLimits, now = new Date(),
): Promise<SignalReceipt> {
  const iso = now.toISOString();
  const day = `${tenant.organizationId} day:${iso.slice(0, 10)}`;
  const month = `${tenant.organizationId} month:${monthPeriod(now)}`;
  const dayUnit = await counters.day.use(day, limits.dailyCeiling);
  if (dayUnit.limited) return (await lookupReceipt(ds, tenant.productId, input.idempotencyKey)) ?? ceilingReached(ds, tenant, limits, now);
  const monthUnit = await counters.month.use(month, limits.monthlyAllowance);
  let outcome: StoredOutcome | undefined;
  try {
    outcome = await storeSignal(ds, tenant, input, limits, now, monthUnit.limited);
  } finally {
    if (outcome?.stored !== 1) {
      counters.day.giveBack(day, limits.dailyCeiling, dayUnit.endsAt);
      if (!monthUnit.limited) counters.month.giveBack(month, limits.monthlyAllowance, monthUnit.endsAt);
    }
  }
  if (outcome.stored === 1) return { id: outcome.signalId, threadId: outcome.threadId, state: 'open', replayed: false };
  // Nothing stored: the key was taken (a replay, or a concurrent duplicate that committed first), or
  // the day's count has passed a ceiling lowered since.
  const earlier = await lookupReceipt(ds, tenant.productId, input.idempotencyKey);
  if (earlier) return earlier;
  if (outcome.room === 0) return ceilingReached(ds, tenant, limits, now);
  throw new Error('signal intake stored nothing and found no earlier signal with its key');
}

/** One signal as the grouped intake statement takes it. */
interface IntakeRow {
  tenant: ProductTenant;
  input: CreateSignalInput;
  limits: IntakeLimits;
  now: Date;
  overAllowance: boolean;
  signalId: string;
  threadId: string;
}

/**
 * Concurrent intakes of one API process written together, one statement and one commit a group
 * (`groupedCalls`): under load most of an intake's cost was the statement's own (a round trip, a transaction
 * and its commit, 21 indexes opened and locked), not its rows. A lone intake goes at once, alone.
 */
const INTAKE_GROUPS = { concurrency: 2, maxGroup: 64 };
const intakeWriters = new WeakMap<DataSource, (row: IntakeRow) => Promise<IntakeOutcome>>();

function storeSignal(
  ds: DataSource, tenant: ProductTenant, input: CreateSignalInput, limits: IntakeLimits, now: Date, overAllowance: boolean,
): Promise<StoredOutcome> {
  let write = intakeWriters.get(ds);
  if (!write) intakeWriters.set(ds, write = groupedCalls((rows: IntakeRow[]) => storeSignals(ds, rows), INTAKE_GROUPS));
  const row = { tenant, input, limits, now, overAllowance, signalId: newId('sig'), threadId: newId('thr') };
  return write(row).then((outcome) => ({ ...outcome, signalId: row.signalId, threadId: row.threadId }));
}

/**
 * Stores signals with their end users, threads and first messages, and queues their signal.created events, in
 * one statement. Each row is decided as a statement of its own would decide it: refused when its workspace's
 * day has passed its ceiling, nothing stored when its idempotencyKey is taken (by a stored signal or an earlier
 * row). Rows are written in key order (signals by idempotencyKey, end users by id), so two groups never wait on
 * each other's rows in opposite orders. An end user named by several rows takes the latest email and name given.
 */
async function storeSignals(ds: DataSource, rows: IntakeRow[]): Promise<IntakeOutcome[]> {
  const column = <T>(of: (row: IntakeRow) => T) => rows.map(of);
  const stored = await queryPrepared<{ room: boolean; stored: boolean }>(ds, 'signal-intake-group',
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                            $9::jsonb[], $10::text[], $11::text[], $12::text[], $13::timestamptz[], $14::text[], $15::int[],
                            $16::text[], $17::text[], $18::jsonb[], $19::text[], $20::boolean[])
         WITH ORDINALITY AS i(id, organization_id, product_id, thread_id, end_user_id, category, title, body, context,
                              idempotency_key, email, name, created_at, message_id, default_ceiling, period, event_id,
                              payload, analysis_state, over_allowance, ord)
     ), room AS (
       -- The day's ceiling, as low as it is now: a lowered ceiling refuses at once, whatever units were taken.
       SELECT i.* FROM input i
         LEFT JOIN intake_limits l ON l.organization_id = i.organization_id
         LEFT JOIN intake_counters c ON c.organization_id = i.organization_id AND c.period = i.period
        WHERE coalesce(c.count, 0) <= coalesce(l.daily_safety_ceiling, i.default_ceiling)
     ), s AS (
       INSERT INTO signals (id, organization_id, product_id, thread_id, end_user_id, category, title, body, context,
                            idempotency_key, analysis_state, over_allowance, created_at, updated_at)
       SELECT id, organization_id, product_id, thread_id, end_user_id, category, title, body, context,
              idempotency_key, analysis_state, over_allowance, created_at, created_at
         FROM room ORDER BY product_id, idempotency_key, ord
       ON CONFLICT (product_id, idempotency_key) DO NOTHING
       RETURNING id
     ), fresh AS (
       SELECT room.* FROM room JOIN s USING (id)
     ), people AS (
       SELECT product_id, end_user_id, min(organization_id) AS organization_id, max(created_at) AS at,
              (array_agg(email ORDER BY ord DESC) FILTER (WHERE email IS NOT NULL))[1] AS email,
              (array_agg(name ORDER BY ord DESC) FILTER (WHERE name IS NOT NULL))[1] AS name
         FROM fresh GROUP BY product_id, end_user_id
     ), u AS (
       -- An end user who is already stored as the signals name them is not written again: an upsert would
       -- lock their row until commit, and a busy end user's intakes would queue on it.
       INSERT INTO end_users (product_id, end_user_id, organization_id, email, name, created_at, updated_at)
       SELECT p.product_id, p.end_user_id, p.organization_id, p.email, p.name, p.at, p.at FROM people p
        WHERE NOT EXISTS (SELECT 1 FROM end_users e
                           WHERE e.product_id = p.product_id AND e.end_user_id = p.end_user_id
                             AND e.email IS NOT DISTINCT FROM coalesce(p.email, e.email) AND e.name IS NOT DISTINCT FROM coalesce(p.name, e.name))
        ORDER BY p.product_id, p.end_user_id
       ON CONFLICT (product_id, end_user_id) DO UPDATE
         SET email = COALESCE(EXCLUDED.email, end_users.email), name = COALESCE(EXCLUDED.name, end_users.name),
             updated_at = EXCLUDED.updated_at
     ), t AS (
       INSERT INTO threads (id, organization_id, product_id, end_user_id, subject, state, created_at, updated_at)
       SELECT thread_id, organization_id, product_id, end_user_id, title, 'open', created_at, created_at FROM fresh
     ), msg AS (
       INSERT INTO thread_messages (id, thread_id, author_type, author_id, visibility, body, created_at)
       SELECT message_id, thread_id, 'end_user', end_user_id, 'customer', body, created_at FROM fresh
     ), o AS (
       ${OUTBOX_INSERT} SELECT event_id, organization_id, product_id, 'signal.created', payload FROM fresh
     )
     SELECT room.id IS NOT NULL AS room, fresh.id IS NOT NULL AS stored
       FROM input LEFT JOIN room USING (id) LEFT JOIN fresh USING (id) ORDER BY input.ord`,
    [
      column((r) => r.signalId), column((r) => r.tenant.organizationId), column((r) => r.tenant.productId), column((r) => r.threadId),
      column((r) => r.input.endUserId), column((r) => r.input.kind ?? 'support'), column((r) => r.input.title), column((r) => r.input.body),
      column((r) => (r.input.context === undefined ? null : JSON.stringify(r.input.context))), column((r) => r.input.idempotencyKey),
      column((r) => r.input.email ?? null), column((r) => r.input.name ?? null), column((r) => r.now.toISOString()), column(() => newId('msg')),
      column((r) => r.limits.dailyCeiling), column((r) => `day:${r.now.toISOString().slice(0, 10)}`), column(() => newId('evt')),
      column((r) => JSON.stringify({ signalId: r.signalId, threadId: r.threadId, endUserId: r.input.endUserId, category: r.input.kind ?? 'support' })),
      column((r) => (!r.limits.analysisAvailable ? 'skipped' : r.overAllowance ? 'waiting' : 'pending')), column((r) => r.overAllowance),
    ],
  );
  return stored.map((row) => ({ room: row.room ? 1 : 0, stored: row.stored ? 1 : 0 }));
}

async function ceilingReached(ds: DataSource, tenant: ProductTenant, limits: IntakeLimits, now: Date): Promise<never> {
  const ceiling = await dailyCeiling(ds, tenant.organizationId, limits);
  const wait = secondsToNextUtcDay(now);
  throw new ServiceError('INTAKE_SAFETY_CEILING', `the workspace reached its daily safety ceiling of ${ceiling} signals; intake reopens at the next UTC day`,
    { ceiling, retryAfterSeconds: wait }, { 'retry-after': String(wait) });
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
