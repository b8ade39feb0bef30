import { DataSource } from 'typeorm';
import { UnitLeases, blockOf } from './unit-leases';

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

/** What a request's unit from its window says. */
export interface WindowUse {
  limit: number;
  /** Units left in the window for every process, as far as this process knows. */
  remaining: number;
  /** Unix seconds at which the window ends. */
  reset: number;
  /** Milliseconds until the window ends, at least 1. */
  ttlMs: number;
  /** The window was full: this request took nothing and is to be refused. */
  limited: boolean;
}

/**
 * One process's units of the one-minute windows in rate_limit_windows (keys, end users, customer links,
 * client addresses): every API process counts into the same window, in blocks of ⌈limit / 64⌉ (see
 * `UnitLeases`), so a subject may be refused early by at most (processes − 1) × ⌈limit / 64⌉ − 1;
 * below 64 a block is one unit, which is exact. A refused request takes nothing, and a full window is
 * known full until it ends (its limit is the configuration's).
 */
export class WindowLeases {
  private readonly leases: UnitLeases;

  constructor(ds: DataSource) {
    this.leases = new UnitLeases(async (subject, limit) => {
      const taken = await takeUnits(ds, subject, blockOf(limit), limit);
      const full = taken.count >= limit;
      return { ...taken, full, fullUntil: taken.endsAt };
    });
  }

  async use(subject: string, limit: number): Promise<WindowUse> {
    const use = await this.leases.use(subject, limit);
    return {
      limit,
      remaining: Math.max(0, limit - use.used),
      reset: Math.floor(use.endsAt / 1000),
      ttlMs: Math.max(1, use.endsAt - Date.now()),
      limited: use.limited,
    };
  }
}
