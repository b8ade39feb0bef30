import { FastifyInstance } from 'fastify';
import { keyPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { dataOf } from '../plugins/responses';
import { serviceKeySchema } from './schemas';

export async function whoamiRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  app.get('/api/v1/auth/whoami', {
    schema: { response: { 200: dataOf(serviceKeySchema) } },
    config: { tag: 'platform', auth: 'key', productRequired: false, operationId: 'whoami',
      summary: 'Safe identity of the calling key (never the key or its digest)' },
  }, async (request) => {
    const { kind: _kind, ...key } = keyPrincipal(request);
    return { data: key };
  });
}
