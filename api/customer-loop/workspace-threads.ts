import { string } from 'yup';
import { MESSAGE_VISIBILITIES } from '../../db/entities/thread-message';
import { THREAD_STATES } from '../../db/entities/thread';
import {
  addTeammateMessage, getTeamThread, listWorkspaceThreads, patchTeamThread, setNextUpdate, viewThread,
} from '../../db/customer-loop/threads';
import { threadSuggestion } from '../../db/customer-loop/duplicates';
import { validationFailed } from '../../runtime/service-error';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { idParams } from '../plugins/path-params';
import { RouteApp, isoDateTime, pageQuery, strictObject } from '../plugins/validation';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import { teamThreadSchema, threadMessageSchema, threadSchema } from './schemas';

const messageBody = strictObject({
  body: string().required().min(1).max(10_000),
  visibility: string().required().oneOf([...MESSAGE_VISIBILITIES]),
}).required();

const listQuery = strictObject({
  ...pageQuery,
  productId: string().max(100),
  state: string().oneOf([...THREAD_STATES]),
  owner: string().max(100).meta({ description: 'a teammate id, or the word unassigned' }),
  endUserId: string().max(200),
});

const patchBody = strictObject({
  nextUpdateAt: isoDateTime().nullable().meta({ description: 'promise the next update by then; null withdraws the promise' }),
  state: string().oneOf([...THREAD_STATES]),
  ownerId: string().min(1).max(100).nullable().meta({ description: 'a teammate of the workspace; null unassigns' }),
}).required();

/** Teammates answer threads here; reading, replies and notes are open to members, every other change to owners and admins. */
export async function workspaceThreadRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/workspace/threads', {
    schema: { querystring: listQuery, response: { 200: pageOf(threadSchema) } },
    config: { tag: 'customer-loop', auth: 'session', operationId: 'listTeamThreads',
      summary: 'Threads of the workspace (every product, or one), newest first, by state and owner' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listWorkspaceThreads(ds, sessionPrincipal(request).organizationId, filter, { limit, cursor });
  });

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
    schema: { params: idParams, body: patchBody, response: { 200: dataOf(threadSchema), 404: errorOf('NOT_FOUND: no such thread in the workspace') } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'promiseThreadUpdate',
      summary: 'Promise the next update (or withdraw the promise), set the owner, move the state' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const { nextUpdateAt: raw, ...change } = request.body;
    if (raw === undefined && change.state === undefined && change.ownerId === undefined) {
      throw validationFailed([{ path: '', message: 'send nextUpdateAt, state and/or ownerId' }]);
    }
    const due = raw === undefined || raw === null ? null : new Date(raw);
    if (due !== null && (Number.isNaN(due.getTime()) || due.getTime() <= Date.now())) {
      throw validationFailed([{ path: 'nextUpdateAt', message: 'must be a date-time in the future' }]);
    }
    let view = change.state !== undefined || change.ownerId !== undefined ? await patchTeamThread(ds, s.organizationId, request.params.id, change) : null;
    if (raw !== undefined) view = viewThread(await setNextUpdate(ds, s.organizationId, request.params.id, due));
    return { data: view! };
  });
}
