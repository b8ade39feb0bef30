import { array, boolean, mixed, number, object, string } from 'yup';
import {
  effectiveDraftStatus, findDraft, issueContinuation, optOut, patchDraft, readDraft, redeemContinuation, startPublicDraft, startRequestDraft,
} from '../../db/collection/drafts';
import { expired } from '../../db/collection/uploads';
import { liveFlow, publicFlow } from '../../db/collection/pinned-flow';
import { submitDraft } from '../../db/collection/submit';
import { CONSENT_MEDIA, DISPLAY_MODES, IDENTITY_FIELDS } from '../proof/proof-submissions';
import { PROOF_CHANNELS } from '../../db/rules/proof-eligibility';
import { ServiceError } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { pathParams } from '../plugins/path-params';
import { CEILING_OR_RATE, dataOf, timestamp, errorOf } from '../plugins/responses';
import { isoDateTime, openObject, RouteApp, strictObject } from '../plugins/validation';
import { countPublic, countSecret, customerAuth, headerSecret } from './customer-auth';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';
import { LINK_EXPIRED, LINK_UNAUTHORIZED, NOT_FOUND_FOR_TENANT, STATE_CONFLICT } from './collection-schemas';

const draftParams = pathParams('id');

export const uploadSummary = object({
  id: string().required(), kind: string().required(), purpose: string().required(), status: string().required(),
  assetId: string().nullable().defined(),
});

export const draftSchema = object({
  id: string().required(),
  flowId: string().required(),
  flowVersionId: string().required(),
  status: string().oneOf(['open', 'submitted', 'expired'] as const).required(),
  revision: number().integer().required(),
  expiresAt: timestamp().required(),
  submittedAt: timestamp().nullable().defined(),
  proofItemId: string().nullable().defined(),
  uploads: array(uploadSummary).defined(),
  text: string(), title: string(), rating: number(), consentAccepted: boolean(), answers: openObject(), identity: openObject(),
  displayMode: string(), identityFields: array(string().defined()), publication: openObject(),
});

export const flowView = object({
  id: string().required(), flowVersionId: string().required(), versionNumber: number().required(), title: string().defined(),
  intro: string().defined(), thankYou: string().defined(), questions: array(openObject()).defined(), rating: openObject().nullable().defined(),
  mediaKinds: array(string().defined()).defined(), identityFields: array(string().defined()).defined(), maxVideoSeconds: number().required(),
  consentTemplateVersionId: string().nullable().defined(), wording: string().nullable().defined(), wordingHash: string().nullable().defined(),
  terms: openObject().nullable().defined(), incentive: openObject().defined(),
  welcomeVideo: object({ id: string().required(), url: string().required() }).nullable().defined()
    .meta({ description: 'the version\'s screened welcome video (url: same-origin GET /api/proof/collect/welcome/{videoId}); null when none is served' }),
});

const draftOpened = object({ draft: draftSchema.required(), draftSession: string().required(), flow: flowView.required() });
const draftRead = object({ draft: draftSchema.required(), flow: flowView.required() });

const submission = object({
  submissionId: string().required(), proofItemId: string().required(), originalVersionId: string().required(),
  consentGrantId: string().required(), receiptId: string().required(), overLimit: boolean().required(),
  overLimitReasons: array(string().defined()).defined(), controlToken: string().required(), controlUrl: string().required(),
  controlExpiresAt: timestamp().required(),
});

const patchBody = strictObject({
  revision: number().integer().min(1),
  text: string().max(10_000),
  title: string().max(180),
  rating: number().integer().min(0).max(10),
  consentAccepted: boolean(),
  answers: object().test('answers', 'answers are text, true/false, or null to remove', (v) =>
    v == null || Object.entries(v).every(([k, a]) => k.length <= 100 && (a === null || typeof a === 'boolean'
      || (typeof a === 'string' && a.length <= 10_000)))),
  identity: strictObject({
    // Empty clears the name; only spaces is no name to show by first word or initials.
    name: string().max(120).matches(/^$|\S/, 'must not be only spaces'), company: string().max(120), title: string().max(120), location: string().max(120),
    email: string().email().max(320),
  }).default(undefined),
  displayMode: string().oneOf([...DISPLAY_MODES]),
  identityFields: array(string().required().oneOf([...IDENTITY_FIELDS])).max(IDENTITY_FIELDS.length),
  publication: strictObject({
    channels: array(string().required().oneOf([...PROOF_CHANNELS])).min(1),
    media: array(string().required().oneOf([...CONSENT_MEDIA])).min(1),
    paidUseAllowed: boolean(),
    translationAllowed: boolean(),
    geography: array(string().required().matches(/^(\*|[A-Z]{2})$/)).min(1).max(250),
    validUntil: isoDateTime().nullable(),
  }).default(undefined),
}).required().test('one-field', 'send at least one field', (v) => v == null || Object.keys(v).some((k) => k !== 'revision'));

const LIVE_FLOW_MAX_AGE_S = 60;

const startBody = strictObject({ flowId: string().max(100) }).nullable().default(undefined);
const emptyBody = strictObject({}).nullable().default(undefined);

/** Drafts: start, resume, auto-save, continue elsewhere, submit; opt-out by personal link. */
export async function collectDraftRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  // Customer routes answer 415 for any body type they do not take (Fastify would read text/plain).
  app.removeContentTypeParser('text/plain');
  const cfg = deps.config;
  const draftAuth = customerAuth(ds, cfg, 'draft_session', { draftParam: 'id' });
  app.post('/api/proof/collect/drafts', {
    schema: { body: startBody, response: { 404: NOT_FOUND_FOR_TENANT, 409: STATE_CONFLICT, 410: LINK_EXPIRED,
      413: errorOf('TOO_LARGE: the body or upload is larger than allowed'), 415: errorOf('UNSUPPORTED_MEDIA_TYPE: the content type is not accepted'),
      200: dataOf(draftOpened), 201: dataOf(draftOpened) } },
    onRequest: async (request, reply) => {
      if (request.headers['x-link-token'] === undefined) await countPublic(cfg, request, reply);
      else await countSecret(cfg, reply, headerSecret(request, 'x-link-token', 'pr'));
    },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'startDraft',
      summary: 'Start a draft on a live flow ({flowId}: its publicId), or open the recipient\'s draft with x-link-token: pr_' },
  }, async (request, reply) => {
    const linkToken = request.headers['x-link-token'] as string | undefined;
    if (linkToken) {
      if (request.body?.flowId !== undefined) throw new ServiceError('INVALID_INPUT', 'a personal link names its flow: send {}');
      const { created, ...opened } = await startRequestDraft(ds, linkToken, cfg.draftTtlDays);
      return reply.code(created ? 201 : 200).send({ data: opened });
    }
    if (!request.body?.flowId) throw new ServiceError('INVALID_INPUT', 'flowId (the flow\'s publicId) is required');
    return reply.code(201).send({ data: await startPublicDraft(ds, request.body.flowId, cfg.draftTtlDays) });
  });

  app.get('/api/proof/collect/flows/:publicId', {
    schema: {
      params: pathParams('publicId'),
      response: { 404: errorOf('NOT_FOUND: no such resource for this tenant'), 409: errorOf('CONFLICT: the flow is not live'), 200: dataOf(flowView) },
    },
    onRequest: async (request, reply) => countPublic(cfg, request, reply),
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getLiveFlow',
      summary: 'The live flow\'s public view (the same flow object a draft answers); creates nothing, cacheable for a minute' },
  }, async (request, reply) => {
    const flow = publicFlow(await liveFlow(ds.manager, request.params.publicId));
    // A minute of caching: a page shows the form without a query per view; a new publish shows within a minute.
    return reply.header('cache-control', `public, max-age=${LIVE_FLOW_MAX_AGE_S}`).send({ data: flow });
  });

  app.get('/api/proof/collect/drafts/:id', {
    schema: { params: draftParams, response: { 401: LINK_UNAUTHORIZED, 410: errorOf('EXPIRED: the draft was idle past its lifetime and is erased'),
      200: dataOf(draftRead) } },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getDraft',
      summary: 'Resume a draft: its fields, uploads and the pinned flow version; 410 once expired' },
  }, async (request) => {
    const draft = await findDraft(ds, request.params.id);
    if (effectiveDraftStatus(draft) === 'expired') throw expired('draft');
    return { data: await readDraft(ds, draft) };
  });

  app.patch('/api/proof/collect/drafts/:id', {
    schema: { params: draftParams, body: patchBody, response: { 409: STATE_CONFLICT, 410: LINK_EXPIRED, 200: dataOf(draftRead) } },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'saveDraft',
      summary: 'Auto-save: merge fields (a null answer removes it); optional revision check' },
  }, async (request) => ({ data: await patchDraft(ds, request.params.id, request.body, cfg.draftTtlDays) }));

  app.post('/api/proof/collect/drafts/:id/submit', {
    schema: {
      params: draftParams, body: emptyBody,
      response: {
        409: STATE_CONFLICT,
        429: errorOf(CEILING_OR_RATE), 201: dataOf(submission),
      },
    },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'submitDraft', summary: 'Submit: stored first; the private control link is returned once' },
  }, async (request, reply) => {
    const stored = await submitDraft(ds, request.params.id, {
      pageUrl: cfg.collectPageUrl, controlTtlDays: cfg.controlLinkTtlDays, monthlyAllowance: cfg.proofMonthlySubmissionAllowance,
      dailyCeiling: cfg.dailySubmissionCeiling, ip: request.ip,
    });
    const { organizationId: _o, productId: _p, requestId: _r, ...data } = stored;
    return reply.code(201).send({ data });
  });

  app.post('/api/proof/collect/drafts/:id/continuation', {
    schema: {
      params: draftParams, body: emptyBody,
      response: { 201: dataOf(object({ continuationToken: string().required(), continuationUrl: string().required(), expiresAt: timestamp().required() })) },
    },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'createContinuation',
      summary: 'A single-use link to continue on another device, valid 7 days' },
  }, async (request, reply) => reply.code(201).send({ data: await issueContinuation(ds, request.params.id, cfg.collectPageUrl) }));

  app.post('/api/proof/collect/continue', {
    schema: { body: emptyBody, response: { 409: STATE_CONFLICT, 410: LINK_EXPIRED, 200: dataOf(draftOpened) } },
    onRequest: async (request, reply) => countSecret(cfg, reply, headerSecret(request, 'x-link-token', 'cl')),
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'continueDraft',
      summary: 'Redeem a continuation link (x-link-token: cl_) for a fresh draft session' },
  }, async (request) => ({ data: await redeemContinuation(ds, request.headers['x-link-token'] as string) }));

  app.post('/api/proof/collect/opt-out', {
    schema: { body: emptyBody, response: { 401: LINK_UNAUTHORIZED, 200: dataOf(object({ status: mixed().oneOf(['opted_out'] as const).required() })) } },
    onRequest: async (request, reply) => countSecret(cfg, reply, headerSecret(request, 'x-link-token', 'pr')),
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'optOut',
      summary: 'Stop all story requests to this recipient (x-link-token: pr_); idempotent' },
  }, async (request) => {
    await optOut(ds, request.headers['x-link-token'] as string);
    return { data: { status: 'opted_out' } };
  });
}
