import { FastifyInstance } from 'fastify';
import { sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { dataOf } from '../plugins/responses';
import { workspaceSessionSchema } from './schemas';

export async function workspaceSessionRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  app.get('/api/workspace/session', {
    schema: { response: { 200: dataOf(workspaceSessionSchema) } },
    config: { tag: 'platform', auth: 'session', operationId: 'getWorkspaceSession',
      summary: 'The signed-in teammate, with the session\'s CSRF token (the console reads it after a reload)' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: { teammateId: s.teammateId, organizationId: s.organizationId, email: s.email, role: s.role, csrfToken: s.csrfToken } };
  });
}
