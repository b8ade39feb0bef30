import { DataSource } from 'typeorm';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds at which the current window ends. */
  reset: number;
  limited: boolean;
}

/**
 * Counts one request of a key in the current fixed one-minute window. The count lives in PostgreSQL,
 * so every API process shares it.
 */
export async function hitRateLimit(ds: DataSource, keyId: string, limit: number): Promise<RateLimitState> {
  const rows: Array<{ count: number; reset: string }> = await ds.query(
    `INSERT INTO rate_limit_windows AS w (key_id, window_start, count)
     VALUES ($1, date_trunc('minute', now()), 1)
     ON CONFLICT (key_id, window_start) DO UPDATE SET count = w.count + 1
     RETURNING w.count, extract(epoch FROM w.window_start)::bigint + 60 AS reset`,
    [keyId],
  );
  const { count, reset } = rows[0];
  return { limit, remaining: Math.max(0, limit - count), reset: Number(reset), limited: count > limit };
}
