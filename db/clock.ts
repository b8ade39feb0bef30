/**
 * The database clock for a repository write (`update(id, { updatedAt: dbNow })`): every row stamp comes
 * from PostgreSQL's `now()`, so stamps written by API and worker hosts compare on one clock
 * (docs/platform.md#writing-sql).
 */
export const dbNow = (): string => 'now()';
