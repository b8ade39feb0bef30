import { DataSource } from 'typeorm';

export interface CountedWindow {
  /** Requests counted in this UTC minute, this one included. */
  count: number;
  /** The window's end, unix seconds. */
  reset: number;
  /** Milliseconds until the window ends, at least 1. */
  ttlMs: number;
}

/**
 * Counts one request under `bucket` in its one-minute window in rate_limit_windows, shared by every API
 * process (customer links and the public routes; key and hook limits count inside their own lookups).
 */
export async function countInWindow(ds: DataSource, bucket: string): Promise<CountedWindow> {
  const [row]: Array<{ count: number; reset: string; ttl: number }> = await ds.query(
    `INSERT INTO rate_limit_windows AS w (key_id, window_start, count) VALUES ($1, date_trunc('minute', now()), 1)
     ON CONFLICT (key_id, window_start) DO UPDATE SET count = w.count + 1
     RETURNING w.count, extract(epoch FROM w.window_start)::bigint + 60 AS reset,
               ceil(extract(epoch FROM w.window_start + interval '1 minute' - now()) * 1000)::int AS ttl`, [bucket]);
  return { count: row.count, reset: Number(row.reset), ttlMs: Math.max(1, row.ttl) };
}

/** Units a process took from a window: `granted` of the `wanted` (0 once the window is full). */
export interface TakenUnits {
  granted: number;
  /** The window's count after this take, every process's units included. */
  count: number;
  /** When the window ends, epoch milliseconds. */
  endsAt: number;
}

/**
 * Takes up to `wanted` units of `bucket`'s one-minute window without ever passing `limit`: the count
 * only grows to the limit, so no process is granted more than is left.
 */
export async function takeUnits(ds: DataSource, bucket: string, wanted: number, limit: number): Promise<TakenUnits> {
  return ds.transaction(async (em) => {
    await em.query(
      `INSERT INTO rate_limit_windows (key_id, window_start, count) VALUES ($1, date_trunc('minute', now()), 0)
       ON CONFLICT (key_id, window_start) DO NOTHING`, [bucket]);
    const [row]: Array<{ count: number; ends_at: string }> = await em.query(
      `SELECT count, (extract(epoch FROM window_start)::bigint + 60) * 1000 AS ends_at FROM rate_limit_windows
        WHERE key_id = $1 AND window_start = date_trunc('minute', now()) FOR UPDATE`, [bucket]);
    const granted = Math.min(wanted, Math.max(0, limit - row.count));
    if (granted > 0) {
      await em.query(`UPDATE rate_limit_windows SET count = count + $2 WHERE key_id = $1 AND window_start = date_trunc('minute', now())`, [bucket, granted]);
    }
    return { granted, count: row.count + granted, endsAt: Number(row.ends_at) };
  });
}

/**
 * SQL rows of one sharded counter: `<base>`, `<base>#1`, ... (`shards` rows, named `name`) with quotas
 * that add up to `total`; rows past `total` get 0. A counter spread so, with each row moving only under
 * its quota, holds its total exactly while concurrent writers mostly lock different rows. The arguments
 * are SQL expressions (parameters or columns) of the caller's query.
 */
export function shardQuotasSql(name: string, base: string, total: string, shards: string): string {
  const spread = `greatest(1, least(${shards}, ${total}))`;
  return `SELECT CASE WHEN g = 0 THEN ${base} ELSE ${base} || '#' || g END AS ${name},
                  CASE WHEN g < least(${shards}, ${total})
                       THEN ${total} / ${spread} + CASE WHEN g < ${total} % ${spread} THEN 1 ELSE 0 END
                       ELSE 0 END AS quota
             FROM generate_series(0, ${shards} - 1) AS g`;
}
