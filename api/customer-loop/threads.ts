import { string } from 'yup';
import { THREAD_STATES } from '../../db/entities/thread';
import { getThread, listThreads, patchThread } from '../../db/customer-loop/threads';
import { validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { productTenant } from '../plugins/product-tenant';
import { idParams } from '../plugins/path-params';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import { threadSchema, threadWithMessagesSchema } from './schemas';

const listQuery = strictObject({
  ...pageQuery,
  state: string().oneOf([...THREAD_STATES]),
  owner: string().max(100).meta({ description: 'a teammate id, or the word unassigned' }),
  endUserId: string().max(200),
});

const patchBody = strictObject({
  state: string().oneOf([...THREAD_STATES]),
  ownerId: string().min(1).max(100).nullable().meta({ description: 'a teammate of the workspace; null unassigns' }),
}).required();

export async function threadRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/v1/threads', {
    schema: { querystring: listQuery, response: { 200: pageOf(threadSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:threads:read', operationId: 'listThreads', summary: 'Threads of the product, newest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listThreads(ds, productTenant(request).productId, filter, { limit, cursor });
  });

  app.get('/api/v1/threads/:id', {
    schema: { params: idParams, response: { 200: dataOf(threadWithMessagesSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:threads:read', operationId: 'getThread',
      summary: 'One thread with its customer-visible messages' },
  }, async (request) => ({ data: await getThread(ds, productTenant(request).productId, request.params.id) }));

  app.patch('/api/v1/threads/:id', {
    schema: { params: idParams, body: patchBody, response: { 200: dataOf(threadSchema),
      404: errorOf('NOT_FOUND: no such thread, or ownerId is not a teammate of the workspace') } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:threads:write', operationId: 'updateThread',
      summary: 'Change the state and/or owner of a thread' },
  }, async (request) => {
    if (request.body.state === undefined && request.body.ownerId === undefined) {
      throw validationFailed([{ path: '', message: 'send state and/or ownerId' }]);
    }
    return { data: await patchThread(ds, productTenant(request), request.params.id, request.body) };
  });
}
