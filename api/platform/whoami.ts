import { FastifyInstance } from 'fastify';
import { keyPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app';

export async function whoamiRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  app.get('/api/v1/auth/whoami', {
    config: { auth: 'key', productRequired: false, summary: 'Safe identity of the calling key (never the key or its digest)' },
  }, async (request) => {
    const { kind: _kind, ...key } = keyPrincipal(request);
    return { data: key };
  });
}
