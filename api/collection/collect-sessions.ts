import { FastifyRequest } from 'fastify';
import { array, boolean, object, string } from 'yup';
import { startKnownDraft } from '../../db/collection/drafts';
import { liveFlow } from '../../db/collection/pinned-flow';
import { PromptPerson, promptState, recordPromptChoice } from '../../db/collection/prompt';
import { consumeNonce } from '../../db/platform/identity-nonces';
import { DEFAULT_PART_SIZE, KIND_MAX_BYTES, MAX_PARTS, MAX_PART_SIZE, MAX_UPLOADS_PER_DRAFT, MIN_PART_SIZE } from '../../db/rules/upload-rules';
import { ServiceError } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { keyPrincipal } from '../plugins/auth';
import { EndUserIdentity, verifyIdentityToken } from '../plugins/identity-token';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, timestamp, errorOf } from '../plugins/responses';
import { openObject, RouteApp, strictObject } from '../plugins/validation';
import { draftSchema, flowView } from './collect-drafts';
import { countSecret, unauthorized } from './customer-auth';
import { CUSTOMER_ROUTE, PROOF_API_ROUTE } from '../plugins/route-traits';
import { LINK_UNAUTHORIZED, NOT_FOUND_FOR_TENANT, STATE_CONFLICT } from './collection-schemas';

declare module 'fastify' {
  interface FastifyRequest {
    endUser: EndUserIdentity | null;
  }
}

const promptSchema = object({
  show: boolean().required(),
  reason: string().oneOf(['eligible', 'not_now', 'never_ask', 'opted_out', 'already_responded', 'flow_not_live'] as const).required(),
  channelPreference: string().nullable().defined(),
  nextEligibleAt: timestamp().nullable().defined(),
});

/** `Origin`, when a browser sends one, must be one the live version allows (403). */
async function checkOrigin(request: FastifyRequest, allowed: string[]): Promise<void> {
  const origin = request.headers.origin;
  if (origin !== undefined && !allowed.includes(origin)) throw new ServiceError('FORBIDDEN', 'this Origin is not allowed by the flow');
}

/**
 * Signed end-user sessions and the prompt (every call consumes the token's nonce: a replay is
 * ALREADY_USED), and the key route a custom UI starts a draft with.
 */
export async function collectSessionRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const cfg = deps.config;
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('endUser', null);

  const endUserAuth = async (request: FastifyRequest, reply: Parameters<typeof countSecret>[1]) => {
    const header = request.headers.authorization;
    const token = header && /^Bearer ([^\s]+)$/i.exec(header)?.[1];
    if (!token) throw unauthorized('missing Authorization: Bearer <end-user token> header');
    if (token.startsWith('svk_')) throw unauthorized('this route takes a signed end-user token, not a service key');
    const identity = await verifyIdentityToken(ds, token, { consumeNonce: false, maxTtlSeconds: cfg.identityTokenMaxTtlSeconds });
    await countSecret(cfg, reply, token);
    if (!identity.nonce) throw unauthorized('the end-user token needs a nonce');
    if (!(await consumeNonce(ds, identity.productId, identity.nonce, identity.expiresAt))) {
      throw new ServiceError('ALREADY_USED', 'this end-user token was already used; mint one per call');
    }
    request.endUser = identity;
  };
  const personOf = (request: FastifyRequest): PromptPerson => {
    const u = request.endUser!;
    return { organizationId: u.organizationId, productId: u.productId, endUserId: u.endUserId };
  };

  app.post('/api/proof/collect/sessions', {
    schema: {
      body: strictObject({ flowId: string().required().max(100), surface: string().required().oneOf(['embedded', 'in_app'] as const) }).required(),
      response: { 403: errorOf('FORBIDDEN: this caller may not do this'), 409: STATE_CONFLICT,
        201: dataOf(object({ draft: draftSchema.required(), draftSession: string().required(), flow: flowView.required() })) },
    },
    onRequest: endUserAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'startEndUserSession',
      summary: 'A known customer\'s draft for the embedded or in-app prompt (signed end-user token, single use)' },
  }, async (request, reply) => {
    const who = personOf(request);
    await checkOrigin(request, (await liveFlow(ds.manager, request.body.flowId, who.productId)).allowedOrigins);
    const { pinned: _pinned, ...opened } = await startKnownDraft(ds, {
      publicId: request.body.flowId, productId: who.productId, source: 'end_user', personRef: `end_user:${who.endUserId}`,
      endUserId: who.endUserId,
    }, cfg.draftTtlDays);
    return reply.code(201).send({ data: opened });
  });

  app.get('/api/proof/collect/prompt', {
    schema: { querystring: strictObject({ flowId: string().required().max(100) }), response: { 401: LINK_UNAUTHORIZED, 200: dataOf(promptSchema) } },
    onRequest: endUserAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getPrompt', summary: 'May the prompt show now, and why not' },
  }, async (request) => ({ data: await promptState(ds, personOf(request), request.query.flowId) }));

  app.post('/api/proof/collect/prompt', {
    schema: {
      body: strictObject({
        flowId: string().required().max(100),
        choice: string().required().oneOf(['not_now', 'never_ask', 'prefer_channel'] as const),
        channel: string().oneOf(['in_app', 'email', 'link'] as const).when('choice', {
          is: 'prefer_channel', then: (s) => s.required('channel is required with prefer_channel'),
        }),
      }).required(),
      response: { 200: dataOf(promptSchema) },
    },
    onRequest: endUserAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'answerPrompt',
      summary: 'Record not now (14 days), never ask (an opt-out) or a channel preference' },
  }, async (request) => ({ data: await recordPromptChoice(ds, personOf(request), request.body) }));

  app.post(
    '/api/v1/proof/submissions/sessions', {
      schema: {
        body: strictObject({
          flowId: string().required().max(100),
          customer: strictObject({ personRef: string().min(1).max(200), email: string().email().max(320), name: string().min(1).max(200) }).default(undefined),
          endUserId: string().min(1).max(200),
        }).required(),
        response: { 404: NOT_FOUND_FOR_TENANT, 409: STATE_CONFLICT,
          201: dataOf(object({
            sessionId: string().required(), draftSession: string().required(), expiresAt: timestamp().required(), flowVersionId: string().required(),
            questions: array(openObject()).defined(), consentPolicy: openObject().nullable().defined(), uploadLimits: openObject().required(),
          })),
        },
      },
      config: {
        tag: 'collection', ...PROOF_API_ROUTE,
        auth: 'key', scope: 'service:proof:submissions:write', operationId: 'createSubmissionSession',
        summary: 'Start a draft for a custom UI; it then uses the customer draft routes with the draft session',
      },
    }, async (request, reply) => {
      keyPrincipal(request);
      const tenant = productTenant(request);
      const { customer, endUserId } = request.body;
      let opened;
      try {
        opened = await startKnownDraft(ds, {
          publicId: request.body.flowId, productId: tenant.productId, source: 'key',
          personRef: customer?.personRef ?? null, endUserId: endUserId ?? null,
          identity: { name: customer?.name, email: customer?.email },
        }, cfg.draftTtlDays);
      } catch (err) {
        if (err instanceof ServiceError && err.code === 'OPTED_OUT') {
          throw new ServiceError('CONFLICT', 'this recipient opted out of story requests', { reason: 'opted_out' });
        }
        throw err;
      }
      const f = opened.pinned;
      return reply.code(201).send({
        data: {
          sessionId: opened.draft.id, draftSession: opened.draftSession, expiresAt: opened.draft.expiresAt, flowVersionId: f.flowVersionId,
          questions: f.questions,
          consentPolicy: f.consent ? { consentTemplateVersionId: f.consent.consentTemplateVersionId, wording: f.consent.wording,
            wordingHash: f.consent.wordingHash, terms: f.consent.terms } : null,
          uploadLimits: {
            kinds: KIND_MAX_BYTES, partSize: { min: MIN_PART_SIZE, max: MAX_PART_SIZE, default: DEFAULT_PART_SIZE }, maxParts: MAX_PARTS,
            maxUploadsPerDraft: MAX_UPLOADS_PER_DRAFT,
          },
        },
      });
    },
  );
}
