import type { EntityManager } from 'typeorm';

/**
 * The database clock for a repository write (`update(id, { updatedAt: dbNow })`): every row stamp comes
 * from PostgreSQL's `now()`, so stamps written by API and worker hosts compare on one clock
 * (docs/platform.md#writing-sql).
 */
export const dbNow = (): string => 'now()';

/**
 * The database clock's reading, for a stamp the answer also carries: inside a transaction it is the
 * instant `now()` writes there.
 */
export async function databaseNow(db: Pick<EntityManager, 'query'>): Promise<Date> {
  const [{ now }]: Array<{ now: Date }> = await db.query('SELECT now() AS now');
  return now;
}
