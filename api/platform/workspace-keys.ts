import { array, number, string } from 'yup';
import {
  DEFAULT_KEY_DAYS, KEY_SCOPES, MAX_KEY_DAYS, MAX_SCOPES, createServiceKey, listServiceKeys, revokeServiceKey, rotateServiceKey,
} from '../../db/platform/service-keys';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf, NO_SUCH_PRODUCT, pageOf } from '../plugins/responses';
import { issuedKeySchema, serviceKeySchema } from './schemas';

const createKeyBody = strictObject({
  productId: string().nullable().defined().meta({ description: 'null issues a key without a product (whoami only)' }),
  environment: string().required().max(32),
  scopes: array(string().required().oneOf([...KEY_SCOPES])).required().min(1).max(MAX_SCOPES),
  expiresInDays: number().integer().min(1).max(MAX_KEY_DAYS).default(DEFAULT_KEY_DAYS),
}).required();

/** Key management is human-only: the owner creates, rotates and revokes; admins may list. */
export async function workspaceKeyRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/workspace/keys', {
    schema: { querystring: strictObject(pageQuery), response: { 200: pageOf(serviceKeySchema) } },
    config: { tag: 'platform', ...OWNERS_AND_ADMINS, operationId: 'listKeys', summary: 'Service keys of the workspace, newest first' },
  }, async (request) => listServiceKeys(ds, sessionPrincipal(request).organizationId, request.query));

  app.post('/api/workspace/keys', {
    schema: { body: createKeyBody, response: { 201: dataOf(issuedKeySchema), 404: NO_SUCH_PRODUCT } },
    config: { tag: 'platform', auth: 'session', roles: ['owner'], operationId: 'createKey',
      summary: 'Issue a service key; the key is in the answer this once' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const issued = await createServiceKey(ds, { ...request.body, organizationId: s.organizationId, createdBy: s.teammateId });
    return reply.code(201).send({ data: issued });
  });

  app.post('/api/workspace/keys/:id/rotate', {
    schema: { params: idParams, response: { 201: dataOf(issuedKeySchema), 409: errorOf('CONFLICT: the key is revoked or already replaced') } },
    config: { tag: 'platform', auth: 'session', roles: ['owner'], operationId: 'rotateKey', summary: 'Replace a key (same scopes); the old key stops at once' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const issued = await rotateServiceKey(ds, request.params.id, { organizationId: s.organizationId, actor: s.teammateId });
    return reply.code(201).send({ data: issued });
  });

  app.post('/api/workspace/keys/:id/revoke', {
    schema: { params: idParams, response: { 200: dataOf(serviceKeySchema) } },
    config: { tag: 'platform', auth: 'session', roles: ['owner'], operationId: 'revokeKey', summary: 'Revoke a key at once' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await revokeServiceKey(ds, request.params.id, { organizationId: s.organizationId }) };
  });
}
