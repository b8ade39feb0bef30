import { FastifyRequest } from 'fastify';
import { array } from 'yup';
import { SimilarType, findSimilar } from '../../db/customer-loop/duplicates';
import type { AppDeps } from '../app-deps';
import type { RouteApp } from '../plugins/validation';
import { keyPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, errorOf } from '../plugins/responses';
import { similarCandidateSchema } from './schemas';

const similarResponse = { 200: dataOf(array(similarCandidateSchema).defined()), 404: errorOf('NOT_FOUND: no such signal or feature in the product') };

/** Likely duplicates of a signal or a feature, from PostgreSQL alone (docs/customer-loop.md#duplicates). */
export async function similarRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const threshold = deps.config.duplicateThreshold;
  /** A key sees only the kinds its scopes read: a signal's similar features need features:read, a feature's similar signals signals:read. */
  const similar = async (request: FastifyRequest, type: SimilarType, id: string) => {
    const { scopes } = keyPrincipal(request);
    const candidates = await findSimilar(ds, { type, productId: productTenant(request).productId, id, threshold });
    return candidates.filter((c) => scopes.includes(c.type === 'feature' ? 'service:features:read' : 'service:signals:read'));
  };

  app.get('/api/v1/signals/:id/similar', {
    schema: { params: idParams, response: similarResponse },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:signals:read', operationId: 'similarToSignal',
      summary: 'Features, then signals, most like this signal (at most 10)' },
  }, async (request) => ({ data: await similar(request, 'signal', request.params.id) }));

  app.get('/api/v1/features/:id/similar', {
    schema: { params: idParams, response: similarResponse },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:features:read', operationId: 'similarToFeature',
      summary: 'Features and unlinked signals most like this feature (at most 10)' },
  }, async (request) => ({ data: await similar(request, 'feature', request.params.id) }));
}
