import { FastifyRequest } from 'fastify';
import type { ProductTenant } from '../../db/platform/product-tenant';

/** The organization and product of a product route's credential: a product key or an end-user token. */
export function productTenant(request: FastifyRequest): ProductTenant {
  const p = request.principal;
  if ((p?.kind === 'key' && p.productId !== null) || p?.kind === 'identity') {
    return { organizationId: p.organizationId, productId: p.productId! };
  }
  throw new Error('route is not product-authenticated');
}

/** The signed end user of an identity route, with the product their token belongs to. */
export function endUserOf(request: FastifyRequest): ProductTenant & { endUserId: string; expiresAt: Date } {
  const p = request.principal;
  if (p?.kind !== 'identity') throw new Error('route is not identity-authenticated');
  return { organizationId: p.organizationId, productId: p.productId, endUserId: p.endUserId, expiresAt: p.expiresAt };
}
