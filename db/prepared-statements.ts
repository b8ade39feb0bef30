import type { Pool } from 'pg';
import { DataSource } from 'typeorm';

/**
 * Runs one of the hot path's statements as a named prepared statement on the pool under `ds`: each
 * connection parses it once, and PostgreSQL may keep its plan, so later runs send only the parameters.
 * `name` must be unique to `text`.
 */
export async function queryPrepared<T>(ds: DataSource, name: string, text: string, values: unknown[]): Promise<T[]> {
  const pool = (ds.driver as unknown as { master: Pool }).master;
  return (await pool.query({ name, text, values })).rows as T[];
}
