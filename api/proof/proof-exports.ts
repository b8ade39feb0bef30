import { FastifyInstance } from 'fastify';
import { exportApproved } from '../../db/proof/proof-exports';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { dataOf } from '../plugins/responses';
import { exportSchema } from './schemas';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

export async function proofExportRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post('/api/v1/proof/exports', {
    schema: { response: { 201: dataOf(exportSchema) } },
    config: {
      tag: 'proof', ...PROOF_API_ROUTE,
      operationId: 'exportProof',
      auth: 'key', scope: 'service:proof:export', idempotency: 'optional',
      summary: 'Approved-only JSON bundle with a sha256 digest over its canonical bytes',
    },
  }, async (request, reply) => reply.code(201).send({ data: await exportApproved(deps.dataSource, productTenant(request).productId) }));
}
