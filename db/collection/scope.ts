import { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { PageRequest, pageOf } from '../pagination';
import { notFound } from '../../runtime/service-error';

/** A workspace teammate acting in the collection setup routes. */
export interface Teammate { organizationId: string; teammateId: string }

/** The product named in a body must be the workspace's; another tenant's id is an unknown one. */
export async function assertOwnProduct(em: EntityManager | DataSource, organizationId: string, productId: string): Promise<void> {
  const rows = await em.query('SELECT 1 FROM products WHERE id = $1 AND organization_id = $2', [productId, organizationId]);
  if (rows.length === 0) throw notFound('product');
}

/**
 * One page (newest first) of a workspace's rows of an entity, filtered by the given columns; the
 * rows come back as entities so that callers can build their views in one batch.
 */
export async function pageRows<E extends ObjectLiteral & { createdAt: Date; id: string }>(
  ds: DataSource, entity: EntityTarget<E>, organizationId: string, filters: Record<string, string | undefined>, page: PageRequest,
) {
  const qb = ds.getRepository(entity).createQueryBuilder('r').where('r.organization_id = :organizationId', { organizationId });
  for (const [column, value] of Object.entries(filters)) {
    if (value !== undefined) qb.andWhere(`r.${column} = :${column}`, { [column]: value });
  }
  return pageOf(qb, 'r', page, (row) => row);
}
