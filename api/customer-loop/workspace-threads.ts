import { string } from 'yup';
import { MESSAGE_VISIBILITIES } from '../../db/entities/thread-message';
import { addTeammateMessage, getTeamThread, setNextUpdate, viewThread } from '../../db/customer-loop/threads';
import { threadSuggestion } from '../../db/customer-loop/duplicates';
import { validationFailed } from '../../runtime/service-error';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { isoDateTime, RouteApp, strictObject } from '../plugins/validation';
import { dataOf } from '../plugins/responses';
import { teamThreadSchema, threadMessageSchema, threadSchema } from './schemas';

const messageBody = strictObject({
  body: string().required().min(1).max(10_000),
  visibility: string().required().oneOf([...MESSAGE_VISIBILITIES]),
}).required();

const promiseBody = strictObject({
  nextUpdateAt: isoDateTime().nullable().defined(),
}).required();

/** Teammates answer threads here; replies and notes are open to members, promises to owners and admins. */
export async function workspaceThreadRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/workspace/threads/:id', {
    schema: { params: idParams, response: { 200: dataOf(teamThreadSchema) } },
    config: { tag: 'customer-loop', auth: 'session', operationId: 'getTeamThread',
      summary: 'A thread as the team sees it: every message, and its likely duplicate (never shown to the customer)' },
  }, async (request) => {
    const { thread, view } = await getTeamThread(ds, sessionPrincipal(request).organizationId, request.params.id);
    return { data: { ...view, duplicateSuggestion: await threadSuggestion(ds, thread.productId, thread.id, deps.config.duplicateThreshold) } };
  });

  app.post('/api/workspace/threads/:id/messages', {
    schema: { params: idParams, body: messageBody, response: { 201: dataOf(threadMessageSchema) } },
    config: { tag: 'customer-loop', auth: 'session', operationId: 'addThreadMessage', summary: 'Reply to the customer, or add an internal note' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const result = await addTeammateMessage(ds, request.params.id, { ...request.body, organizationId: s.organizationId, teammateId: s.teammateId });
    return reply.code(201).send({ data: result.message });
  });

  app.patch('/api/workspace/threads/:id', {
    schema: { params: idParams, body: promiseBody, response: { 200: dataOf(threadSchema) } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'promiseThreadUpdate', summary: 'Promise the next update (or withdraw the promise)' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const raw = request.body.nextUpdateAt;
    const due = raw === null ? null : new Date(raw);
    if (due !== null && (Number.isNaN(due.getTime()) || due.getTime() <= Date.now())) {
      throw validationFailed([{ path: 'nextUpdateAt', message: 'must be a date-time in the future' }]);
    }
    const thread = await setNextUpdate(ds, s.organizationId, request.params.id, due);
    return { data: viewThread(thread) };
  });
}
