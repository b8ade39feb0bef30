import { FastifyInstance } from 'fastify';
import { string } from 'yup';
import { PageRequest } from '../../db/pagination';
import { LedgerFilter, listProofEvents } from '../../db/proof/proof-ledger';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { pageOf } from '../plugins/responses';
import { proofEventSchema } from './schemas';
import { pageQuery, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const ledgerQuery = strictObject({
  ...pageQuery,
  proofItemId: string().max(100),
  eventType: string().max(100),
  eventId: string().max(200),
});

export async function proofEventRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get<{ Querystring: PageRequest & LedgerFilter }>('/api/v1/proof/events', {
    schema: { querystring: ledgerQuery, response: { 200: pageOf(proofEventSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:read', operationId: 'listProofEvents', summary: 'The proof ledger, oldest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listProofEvents(deps.dataSource, productTenant(request).productId, filter, { limit, cursor });
  });
}
