import { DataSource } from 'typeorm';
import { ServiceKey } from '../entities';
import { sha256Hex } from '../rules/secrets';

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
 * Finds the key a bearer secret names and, when it is live, counts the request in the key's current
 * one-minute window (kept in PostgreSQL, so shared by every API process): one statement, one round trip.
 */
export async function checkServiceKey(ds: DataSource, secret: string, limit: number): Promise<KeyCheck | null> {
  const rows: Array<Record<string, any>> = await ds.query(
    `WITH k AS (
       SELECT k.*, p.active AS product_active
         FROM service_keys k LEFT JOIN products p ON p.id = k.product_id
        WHERE k.digest = $1
     ), counted AS (
       INSERT INTO rate_limit_windows AS w (key_id, window_start, count)
       SELECT id, date_trunc('minute', now()), 1 FROM k WHERE k.revoked_at IS NULL AND k.expires_at > now()
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = w.count + 1
       RETURNING w.count, extract(epoch FROM w.window_start)::bigint + 60 AS reset
     )
     SELECT k.*, counted.count AS rate_count, counted.reset AS rate_reset FROM k LEFT JOIN counted ON true`,
    [sha256Hex(secret)],
  );
  const row = rows[0];
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
  const count = row.rate_count === null ? null : Number(row.rate_count);
  return {
    key,
    productActive: row.product_active ?? null,
    rate: count === null ? null : {
      limit, remaining: Math.max(0, limit - count), reset: Number(row.rate_reset), limited: count > limit,
    },
  };
}

/** Records use at most once a minute per key, so the hot path does not write it on every request. */
export async function touchServiceKey(ds: DataSource, id: string): Promise<void> {
  await ds.query(
    `UPDATE service_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [id],
  );
}
