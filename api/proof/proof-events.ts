import { string } from 'yup';
import { listProofEvents } from '../../db/proof/proof-ledger';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { pageOf } from '../plugins/responses';
import { proofEventSchema } from './schemas';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const ledgerQuery = strictObject({
  ...pageQuery,
  proofItemId: string().max(100),
  eventType: string().max(100),
  eventId: string().max(200),
});

export async function proofEventRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  app.get('/api/v1/proof/events', {
    schema: { querystring: ledgerQuery, response: { 200: pageOf(proofEventSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:read', operationId: 'listProofEvents',
      summary: 'The proof ledger, oldest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listProofEvents(deps.dataSource, productTenant(request).productId, filter, { limit, cursor });
  });
}
