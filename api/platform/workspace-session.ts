import { FastifyInstance } from 'fastify';
import { sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app';

export async function workspaceSessionRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  app.get('/api/workspace/session', {
    config: { auth: 'session', summary: 'The signed-in teammate' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: { teammateId: s.teammateId, organizationId: s.organizationId, email: s.email, role: s.role } };
  });
}
