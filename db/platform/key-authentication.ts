import { DataSource } from 'typeorm';
import { ServiceKey } from '../entities';
import { sha256Hex } from '../rules/secrets';
import { shardQuotasSql } from './rate-windows';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds at which the current window ends. */
  reset: number;
  limited: boolean;
}

export interface KeyCheck {
  key: ServiceKey;
  productActive: boolean | null;
  /** Null when the key is revoked or expired: such requests are not counted. */
  rate: RateLimitState | null;
}

/**
 * How many rows a key's one-minute window is spread over. One row per key and minute made every request
 * of a busy key queue on that row's lock until commit; with shards, concurrent requests mostly lock
 * different rows.
 */
export const RATE_LIMIT_SHARDS = 32;

/**
 * The sharded one-minute window of one subject (the CTE `subject`, one row with `id`, or none when the
 * request is not to be counted), $2 the limit and $3 the shard count. The window is spread over shard
 * rows (`<id>`, `<id>#1`, ...) whose quotas add up to the limit, and a shard only moves while it is under
 * its quota, re-checked on the locked row: the limit holds exactly under any concurrency (no overshoot),
 * and a request is refused only when every shard is full. Kept in PostgreSQL, so every API process
 * shares it.
 */
const WINDOW_CTES = `win AS (
       SELECT q.shard, coalesce(w.count, 0) AS count, q.quota
         FROM subject, LATERAL (${shardQuotasSql('shard', 'subject.id', '$2::int', '$3::int')}) AS q
         LEFT JOIN rate_limit_windows w ON w.key_id = q.shard AND w.window_start = date_trunc('minute', now())
     ), pick AS (
       SELECT shard, quota FROM win WHERE count < quota ORDER BY random() LIMIT 1
     ), counted AS (
       INSERT INTO rate_limit_windows AS w (key_id, window_start, count)
       SELECT shard, date_trunc('minute', now()), 1 FROM pick
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < (SELECT quota FROM pick)
       RETURNING w.count
     )`;

/** What the window says: `live` 0 when nothing was counted, `room` 0 when every shard is full, `took` 1 when counted. */
const WINDOW_COLUMNS = `(SELECT count(*) FROM win)::int AS live, (SELECT count(*) FROM pick)::int AS room,
            (SELECT count(*) FROM counted)::int AS took, (SELECT coalesce(sum(count), 0) FROM win)::int AS used,
            extract(epoch FROM date_trunc('minute', now()))::bigint + 60 AS rate_reset`;

/**
 * Runs a window statement until it settles: when the shard it picked filled up concurrently it tries
 * again; each lost race means another request took a unit, so retries end.
 */
async function takeFromShards(run: () => Promise<Array<Record<string, any>>>): Promise<Record<string, any> | undefined> {
  for (let attempt = 0; ; attempt++) {
    const rows = await run();
    const row = rows[0];
    if (!row || row.live === 0 || row.room === 0 || row.took === 1) return row;
    if (attempt >= 10_000) throw new Error('the rate limit kept losing the race for a window shard');
  }
}

/**
 * Finds the key a bearer secret names and, when it is live, counts the request in the key's current
 * one-minute window: one statement, one round trip. A refused request is not counted.
 */
export async function checkServiceKey(ds: DataSource, secret: string, limit: number): Promise<KeyCheck | null> {
  return keyCheckOf(await takeFromShards(() => ds.query(
    `WITH k AS (
       SELECT k.*, p.active AS product_active
         FROM service_keys k LEFT JOIN products p ON p.id = k.product_id
        WHERE k.digest = $1
     ), subject AS (
       SELECT k.id FROM k WHERE k.revoked_at IS NULL AND k.expires_at > now()
     ), ${WINDOW_CTES}
     SELECT k.*, ${WINDOW_COLUMNS}
       FROM k`,
    [sha256Hex(secret), limit, RATE_LIMIT_SHARDS],
  )), limit);
}

/**
 * Counts a request of any other subject (an end user of the Rooms API: its principal id) in its own
 * one-minute window, the same way as a key's.
 */
export async function countRequest(ds: DataSource, subjectId: string, limit: number): Promise<RateLimitState> {
  const row = (await takeFromShards(() => ds.query(
    `WITH subject AS (SELECT $1::text AS id), ${WINDOW_CTES} SELECT ${WINDOW_COLUMNS}`, [subjectId, limit, RATE_LIMIT_SHARDS])))!;
  return rateOf(row, limit);
}

function rateOf(row: Record<string, any>, limit: number): RateLimitState {
  // The window before this request, plus its own unit when it was counted (a refused one adds nothing).
  const used = row.used + row.took;
  return { limit, remaining: Math.max(0, limit - used), reset: Number(row.rate_reset), limited: row.took === 0 };
}

function keyCheckOf(row: Record<string, any> | undefined, limit: number): KeyCheck | null {
  if (!row) return null;
  const key = Object.assign(new ServiceKey(), {
    id: row.id,
    organizationId: row.organization_id,
    productId: row.product_id,
    environment: row.environment,
    digest: row.digest,
    prefix: row.prefix,
    scopes: row.scopes,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    rotatedFromId: row.rotated_from_id,
    replacedById: row.replaced_by_id,
    createdAt: row.created_at,
  });
  return { key, productActive: row.product_active ?? null, rate: row.live === 0 ? null : rateOf(row, limit) };
}

/** Records use at most once a minute per key, so the hot path does not write it on every request. */
export async function touchServiceKey(ds: DataSource, id: string): Promise<void> {
  await ds.query(
    `UPDATE service_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [id],
  );
}
