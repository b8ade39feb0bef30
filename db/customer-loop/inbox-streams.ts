import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { EndUserRef } from './inbox';

/**
 * An open inbox stream holds a lease row, so the per-end-user cap counts every API process's streams.
 * Its holder refreshes it while the stream is open and deletes it when the stream ends; a lease not
 * refreshed for this long belonged to a process that died, and no longer counts.
 */
export const STREAM_LEASE_TTL_MS = 60_000;

export type StreamLease = { id: string } | { full: true; retryAfterSeconds: number };

/**
 * Takes one of the end user's `limit` stream slots. Opens of one end user are serialized by a transaction
 * lock, so concurrent opens never pass the cap; when every slot is held, the answer says how long until
 * the soonest of them lapses if its holder stops refreshing it.
 */
export async function takeStreamLease(ds: DataSource, owner: EndUserRef, limit: number): Promise<StreamLease> {
  return ds.transaction(async (em) => {
    await em.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`inbox-streams:${owner.productId}:${owner.endUserId}`]);
    await em.query('DELETE FROM inbox_stream_leases WHERE product_id = $1 AND end_user_id = $2 AND expires_at <= now()', [owner.productId, owner.endUserId]);
    const [held]: Array<{ n: number; wait: number | null }> = await em.query(
      `SELECT count(*)::int AS n, ceil(extract(epoch FROM min(expires_at) - now()))::int AS wait
         FROM inbox_stream_leases WHERE product_id = $1 AND end_user_id = $2`, [owner.productId, owner.endUserId]);
    if (held.n >= limit) return { full: true, retryAfterSeconds: Math.max(1, held.wait ?? 1) };
    const id = randomUUID();
    await em.query(
      `INSERT INTO inbox_stream_leases (id, product_id, end_user_id, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')`,
      [id, owner.productId, owner.endUserId, STREAM_LEASE_TTL_MS]);
    return { id };
  });
}

/** Keeps this process's open streams' leases alive: one statement for all of them. */
export async function refreshStreamLeases(ds: DataSource, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await ds.query(`UPDATE inbox_stream_leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE id = ANY($1)`, [ids, STREAM_LEASE_TTL_MS]);
}

export async function releaseStreamLease(ds: DataSource, id: string): Promise<void> {
  await ds.query('DELETE FROM inbox_stream_leases WHERE id = $1', [id]);
}
