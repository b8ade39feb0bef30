import { FastifyRequest } from 'fastify';
import type { ProductTenant } from '../db/signals';

/** The organization and product of a product route's credential: a product key or an end-user token. */
export function productTenant(request: FastifyRequest): ProductTenant {
  const p = request.principal;
  if ((p?.kind === 'key' && p.productId !== null) || p?.kind === 'identity') {
    return { organizationId: p.organizationId, productId: p.productId! };
  }
  throw new Error('route is not product-authenticated');
}
