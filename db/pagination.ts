import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { validationFailed } from '../runtime/service-error';
import { ID_PATTERN } from './rules/ids';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

interface Position {
  createdAt: Date;
  id: string;
}

const badCursor = () => validationFailed([{ path: 'cursor', message: 'is not a cursor this service issued' }]);

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString('base64url');
}

/** Reads a cursor back; anything that is not exactly what encodeCursor wrote is a 400, never a query. */
export function decodeCursor(cursor: string): Position {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw badCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw badCursor();
  const [time, id] = parsed as unknown[];
  if (typeof time !== 'string' || typeof id !== 'string' || !ID_PATTERN.test(id)) throw badCursor();
  const createdAt = new Date(time);
  // Years outside 1970..9999 are not ours, and PostgreSQL would refuse some of them.
  if (!/^\d{4}-/.test(time) || Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== time || createdAt.getTime() < 0) {
    throw badCursor();
  }
  return { createdAt, id };
}

/**
 * Keyset pagination over (created_at, id): one query per page, stable while rows are added.
 * The query builder must already carry the tenant filter, so a cursor can only move within it.
 */
export async function pageOf<E extends ObjectLiteral & Position, V>(
  qb: SelectQueryBuilder<E>,
  alias: string,
  page: PageRequest,
  view: (row: E) => V,
  direction: 'DESC' | 'ASC' = 'DESC',
): Promise<Page<V>> {
  if (page.cursor) {
    const after = decodeCursor(page.cursor);
    const op = direction === 'DESC' ? '<' : '>';
    qb.andWhere(`(${alias}.created_at, ${alias}.id) ${op} (:cursorTime, :cursorId)`, {
      cursorTime: after.createdAt, cursorId: after.id,
    });
  }
  const rows = await qb
    .orderBy(`${alias}.created_at`, direction)
    .addOrderBy(`${alias}.id`, direction)
    .take(page.limit + 1)
    .getMany();
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data: data.map(view), nextCursor: more ? encodeCursor(data[data.length - 1]) : null };
}
