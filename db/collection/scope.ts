import { EntityManager } from 'typeorm';
import { notFound } from '../../runtime/service-error';

/** A workspace teammate acting in the collection setup routes. */
export interface Teammate { organizationId: string; teammateId: string }

/** The product named in a body must be the workspace's; another tenant's id is an unknown one. */
export async function assertOwnProduct(em: EntityManager, organizationId: string, productId: string): Promise<void> {
  const rows = await em.query('SELECT 1 FROM products WHERE id = $1 AND organization_id = $2', [productId, organizationId]);
  if (rows.length === 0) throw notFound('product');
}
