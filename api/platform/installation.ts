import { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app-deps';
import { dataOf } from '../plugins/responses';
import { installationSchema } from './schemas';

export async function installationRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  app.get('/api/v1/installation', {
    schema: { response: { 200: dataOf(installationSchema) } },
    config: { tag: 'platform', auth: 'identity', operationId: 'checkInstallation',
      summary: 'SDK install check: verifies a test user\'s token without consuming its nonce' },
  }, async (request) => {
    const p = request.principal;
    if (p?.kind !== 'identity') throw new Error('route is not identity-authenticated');
    return {
      data: {
        ok: true,
        organizationId: p.organizationId,
        productId: p.productId,
        endUserId: p.endUserId,
        tokenExpiresAt: p.expiresAt.toISOString(),
        nonceConsumed: false,
      },
    };
  });
}
