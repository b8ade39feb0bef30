import { FastifyRequest } from 'fastify';
import { boolean, object, string } from 'yup';
import { HOOK_SOURCES, ResolvedHook, createHook, disableHook, listHooks, resolveHookToken, rotateHook } from '../../db/integrations/hooks';
import { recordValueEvent } from '../../db/integrations/value-events';
import { notFound } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { OWNERS_AND_ADMINS, enforceRate, sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { dataOf, errorOf, pageOf, timestamp, UNKNOWN_PRODUCT_ID } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { scoringSettings, valueEventBody } from './value-events';

export const HOOK_BODY_LIMIT = 64 * 1024;

const hookSchema = object({
  id: string().required(),
  productId: string().required(),
  name: string().required(),
  source: string().oneOf([...HOOK_SOURCES]).required(),
  state: string().oneOf(['active', 'disabled'] as const).required(),
  tokenPrefix: string().required(),
  createdAt: timestamp().required(),
  lastUsedAt: timestamp().nullable().defined(),
});
const issuedHook = object({ hook: hookSchema.required(), url: string().required(), token: string().required() });
const createBody = strictObject({
  productId: string().required().max(100),
  name: string().required().min(1).max(100),
  source: string().required().oneOf([...HOOK_SOURCES]),
}).required();
const hookReceipt = object({ eventId: string().required(), valueEventId: string().required(), replayed: boolean().required() });
const tokenParams = strictObject({ token: string().required().max(200) });

export const hookUrl = (token: string) => `/api/public/proof/hooks/${token}`;

const resolved = new WeakMap<FastifyRequest, ResolvedHook>();

/** Inbound value-event hooks (the token in the URL names tenant and product) and their workspace management. */
export async function hookRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const settings = scoringSettings(deps.config);
  const limit = deps.config.proofHookRatePerMinute;

  app.post('/api/public/proof/hooks/:token', {
    bodyLimit: HOOK_BODY_LIMIT,
    schema: { params: tokenParams, body: valueEventBody, response: { 404: errorOf('NOT_FOUND: the token is unknown, malformed, rotated away or disabled, or ' +
      'its product is inactive (one answer for all)'), 429: errorOf('RATE_LIMITED: this hook was called more than PROOF_HOOK_RATE_PER_MINUTE times this ' +
        'minute; retry after Retry-After'), 200: dataOf(hookReceipt), 202: dataOf(hookReceipt) } },
    config: { tag: 'integrations', auth: 'public', operationId: 'callValueEventHook',
      summary: 'Report a value event through a hook token; 202 first, 200 for a repeated eventId' },
    // The token is checked before the body is read, so every bad token hears the same 404 whatever it sent.
    onRequest: async (request, reply) => {
      const hook = await resolveHookToken(ds, (request.params as { token: string }).token);
      if (!hook) throw notFound('hook');
      // The hook's own one-minute window, taken in blocks like a key's (a refused call counts nothing).
      await enforceRate(reply, hook.id, limit);
      resolved.set(request, hook);
    },
  }, async (request, reply) => {
    const hook = resolved.get(request)!;
    const { event, replayed } = await recordValueEvent(
      ds, { organizationId: hook.organizationId, productId: hook.productId }, request.body, { type: 'hook', id: hook.id }, settings,
    );
    return reply.code(replayed ? 200 : 202).send({ data: { eventId: event.eventId, valueEventId: event.id, replayed } });
  });

  app.post('/api/workspace/proof/hooks', {
    schema: { body: createBody, response: { 404: UNKNOWN_PRODUCT_ID, 201: dataOf(issuedHook) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'createHook', summary: 'Create a value-event hook; its token is shown once' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const { hook, token } = await createHook(ds, s.organizationId, s.teammateId, request.body);
    return reply.code(201).send({ data: { hook, url: hookUrl(token), token } });
  });

  app.get('/api/workspace/proof/hooks', {
    schema: { querystring: strictObject(pageQuery), response: { 200: pageOf(hookSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'listHooks', summary: 'The workspace\'s hooks, never their tokens' },
  }, async (request) => listHooks(ds, sessionPrincipal(request).organizationId, request.query));

  app.post('/api/workspace/proof/hooks/:id/rotate', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no hook with this id in the workspace'),
      409: errorOf('CONFLICT: the hook is disabled; a disabled hook is not rotated'), 200: dataOf(issuedHook) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'rotateHook', summary: 'A new token, shown once; the old one stops at once' },
  }, async (request) => {
    const { hook, token } = await rotateHook(ds, sessionPrincipal(request).organizationId, request.params.id);
    return { data: { hook, url: hookUrl(token), token } };
  });

  app.delete('/api/workspace/proof/hooks/:id', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no hook with this id in the workspace'), 200: dataOf(hookSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'disableHook', summary: 'Disable a hook; its history is kept' },
  }, async (request) => ({ data: await disableHook(ds, sessionPrincipal(request).organizationId, request.params.id) }));
}
