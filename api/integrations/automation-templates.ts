import { FastifyInstance } from 'fastify';
import { array, number, object, string } from 'yup';
import { sha256Hex } from '../../db/rules/secrets';
import type { AppDeps } from '../app-deps';
import { dataOf, noContent } from '../plugins/responses';
import { openObject } from '../plugins/validation';
import { AUTOMATION_CATALOG } from './automation-catalog';

const catalogSchema = object({
  version: number().integer().required(),
  triggers: array(object({ key: string().required(), name: string().required(), description: string().required(), samplePayload: openObject().required() }))
    .defined(),
  actions: array(object({
    key: string().required(), name: string().required(), description: string().required(), method: string().required(), path: string().required(),
    auth: string().oneOf(['hook_token', 'service_key'] as const).required(), scope: string().nullable().defined(), bodySchema: openObject().required(),
  })).defined(),
  templates: array(object({
    key: string().required(), name: string().required(), tool: string().oneOf(['zapier', 'make', 'n8n', 'generic'] as const).required(),
    source: object({ app: string().required(), event: string().required() }).required(), trigger: string().nullable().defined(),
    action: string().required(), mapping: openObject().required(),
  })).defined(),
});

/** The static catalog automation tools read: public, cacheable, one strong ETag per shipped version. */
export async function automationTemplateRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  const body = JSON.stringify({ data: AUTOMATION_CATALOG });
  const etag = `"${sha256Hex(body)}"`;
  app.get('/api/public/proof/automation-templates', {
    schema: { response: { 200: dataOf(catalogSchema), 304: noContent('not modified: the If-None-Match ETag is current') } },
    config: { tag: 'integrations', auth: 'public', operationId: 'getAutomationTemplates', summary: 'Automation triggers, actions and templates' },
  }, async (request, reply) => {
    reply.header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=3600').header('etag', etag);
    const match = request.headers['if-none-match'];
    if (typeof match === 'string' && match.split(',').map((t) => t.trim()).includes(etag)) return reply.code(304).send();
    return reply.type('application/json').send(body);
  });
}
