import { onRequestHookHandler } from 'fastify';
import { ISchema, InferType, array, boolean, mixed, number, object, string } from 'yup';
import { ControlReach, controlAction, controlView, customerReceipt, passport, passportAction, signedPassport, withdraw } from '../../db/collection/control';
import { PROOF_CHANNELS } from '../../db/rules/proof-eligibility';
import { ServiceError } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { dataOf, timestamp, errorOf } from '../plugins/responses';
import { openObject, RouteApp, strictObject } from '../plugins/validation';
import { customerAuth, secretOf } from './customer-auth';
import { redeemInboxPersonLink, requestPersonLink } from '../../db/collection/control-links';
import { sha256Hex } from '../../db/rules/secrets';
import { enforceRate } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { endUserOf } from '../plugins/product-tenant';
import { decideReview, reviewQueue } from '../../db/collection/review';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';
import { LINK_UNAUTHORIZED, NOT_FOUND_FOR_TENANT, STATE_CONFLICT } from './collection-schemas';

const id = () => string().required().max(100);

type Shape = ReturnType<typeof strictObject>;
/** One of the shapes, its `action` the name it is listed under. */
type ActionOf<S extends Record<string, Shape>> = { [A in keyof S & string]: InferType<S[A]> & { action: A } }[keyof S & string];

/**
 * A body whose `action` picks the strict shape of its other fields; its type is the union of those shapes,
 * which yup cannot infer from a test, so it is stated here once for every such body.
 */
function actionBody<S extends Record<string, Shape>>(shapes: S): ISchema<ActionOf<S>> {
  return object({ action: string().required().oneOf(Object.keys(shapes)) })
    .test('fields', 'unexpected or missing fields for this action', function check(v: Record<string, unknown> | undefined) {
      const shape = v ? shapes[String(v.action)] : undefined;
      if (!shape) return true;
      try {
        shape.validateSync(v, { strict: true, abortEarly: false });
        return true;
      } catch (err) {
        return this.createError({ message: (err as Error).message });
      }
    }).required() as unknown as ISchema<ActionOf<S>>;
}

const controlBody = actionBody({
  approve_wording: strictObject({ action: string(), proofItemId: id(), versionId: id(), contentHash: string().required().max(200) }),
  decline_wording: strictObject({ action: string(), proofItemId: id(), versionId: id(), reason: string().max(2000) }),
  request_correction: strictObject({ action: string(), proofItemId: id(), message: string().required().min(3).max(2000), versionId: string().max(100) }),
  pause: strictObject({ action: string(), proofItemId: id() }),
  resume: strictObject({ action: string(), proofItemId: id() }),
  withdraw: strictObject({ action: string(), proofItemId: id(), confirm: boolean().required().oneOf([true], 'confirm must be true') }),
});

const passportBody = actionBody({
  remove_use: strictObject({ action: string(), proofItemId: id(), placementId: id() }),
  limit_channels: strictObject({ action: string(), proofItemId: id(), channels: array(string().required().oneOf([...PROOF_CHANNELS])).required().min(1) }),
});

const storySchema = object({
  proofItemId: string().required(), type: string().required(), status: string().required(), paused: boolean().required(),
  revokedAt: timestamp().nullable().defined(), currentVersion: openObject().nullable().defined(), pendingApprovals: array(openObject()).defined(),
  activeUseCount: number().required(), consent: openObject().nullable().defined(), corrections: array(openObject()).defined(),
});
const passportSchema = object({
  proofItemId: string().required(), contentHash: string().nullable().defined(), consent: openObject().nullable().defined(),
  uses: array(object({
    placementId: string().required(), name: string().required(), placementType: string().required(), channel: string().required(),
    placementState: string().required(), rendersNow: boolean().required(), reasons: array(string().defined()).defined(),
  })).defined(),
  assets: array(openObject()).defined(),
});
const itemQuery = strictObject({ proofItemId: id(), download: mixed().oneOf(['1', 1] as const) });
const receiptQuery = strictObject({ proofItemId: id(), receiptId: string().max(100) });
const signedFile = object({ receipt: openObject(), passport: openObject(), signature: object({ alg: string(), kid: string(), value: string() }).required() });

/** What the link reaches: the scope it was issued with (a story link its own story, a person link all the person's). */
const reachOf = (request: Parameters<typeof secretOf>[0]): ControlReach => {
  const s = secretOf(request);
  if (!s.personRef) throw new ServiceError('UNAUTHORIZED', 'this control link names no person');
  return { organizationId: s.organizationId, productId: s.productId, personRef: s.personRef, proofItemId: s.scope === 'story' ? s.proofItemId : null };
};

/** The customer's control link: their stories, wording decisions, corrections, pause, withdraw; passport; receipts. */
export async function collectControlRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  // Customer routes answer 415 for any body type they do not take (Fastify would read text/plain).
  app.removeContentTypeParser('text/plain');
  const auth = customerAuth(ds, deps.config, 'control');

  app.get('/api/proof/collect/control', {
    schema: { response: { 401: LINK_UNAUTHORIZED, 200: dataOf(object({ person: openObject().required(), stories: array(storySchema).defined() })) } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getControl',
      summary: 'The customer\'s stories, pending wording approvals, active uses and corrections' },
  }, async (request) => ({ data: await controlView(ds, reachOf(request)) }));

  app.post('/api/proof/collect/control', {
    schema: { body: controlBody, response: { 404: NOT_FOUND_FOR_TENANT, 409: STATE_CONFLICT, 200: dataOf(openObject()), 201: dataOf(openObject()) } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'controlStory',
      summary: 'approve_wording, decline_wording, request_correction, pause, resume or withdraw (completed at once, final)' },
  }, async (request, reply) => {
    const person = reachOf(request);
    const body = request.body;
    if (body.action === 'withdraw') {
      return { data: (await withdraw(ds, person, body.proofItemId)).result };
    }
    const { status, data } = await controlAction(ds, person, body);
    return reply.code(status).send({ data });
  });

  app.get('/api/proof/collect/control/passport', {
    schema: { querystring: itemQuery, response: { 404: NOT_FOUND_FOR_TENANT, 200: dataOf(passportSchema) } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getPassport',
      summary: 'Every use of the story and whether it renders now; download=1 answers the signed file' },
  }, async (request, reply) => {
    const person = reachOf(request);
    if (request.query.download !== undefined) {
      const file = await signedPassport(ds, person, request.query.proofItemId);
      return reply.header('content-disposition', `attachment; filename="passport-${request.query.proofItemId}.json"`)
        .header('cache-control', 'no-store').send(file);
    }
    return { data: await passport(ds, person, request.query.proofItemId) };
  });

  app.post('/api/proof/collect/control/passport', {
    schema: { body: passportBody, response: { 404: NOT_FOUND_FOR_TENANT, 200: dataOf(openObject()), 201: dataOf(openObject()) } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'changePassport',
      summary: 'remove_use (a placement stops showing it) or limit_channels (a narrowed grant)' },
  }, async (request, reply) => {
    const { status, data } = await passportAction(ds, reachOf(request), request.body);
    return reply.code(status).send({ data });
  });

  app.get('/api/proof/collect/control/receipt', {
    schema: { querystring: receiptQuery, response: { 404: NOT_FOUND_FOR_TENANT, 200: signedFile } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getCustomerReceipt',
      summary: 'The story\'s signed receipt (newest grant), as a downloadable JSON file' },
  }, async (request, reply) => {
    const receipt = await customerReceipt(ds, reachOf(request), request.query.proofItemId, request.query.receiptId);
    return reply.header('content-disposition', `attachment; filename="receipt-${request.query.proofItemId}.json"`)
      .header('cache-control', 'no-store').send(receipt);
  });

  // Counted per person as well as per link: however many links ask, one person gets few e-mails.
  const personLinkRate: onRequestHookHandler = async (request, reply) => {
    const { organizationId, productId, personRef } = reachOf(request);
    await enforceRate(reply, `person-link:${sha256Hex(`${organizationId}/${productId}/${personRef}`).slice(0, 32)}`, deps.config.personLinkPerMinute);
  };
  app.post('/api/proof/collect/control/person-link', {
    schema: {
      body: strictObject({ email: string().required().email().max(320) }).required(),
      response: { 429: errorOf('RATE_LIMITED: too many person-link requests for this person this minute'),
        202: dataOf(object({ accepted: boolean().required() })) },
    },
    onRequest: [auth, personLinkRate],
    config: {
      tag: 'collection', ...CUSTOMER_ROUTE,
      operationId: 'requestPersonLink',
      summary: 'E-mail the person link (all of the person\'s stories) to an address of one of their own stories; always 202, whether or not it matched',
    },
  }, async (request, reply) => {
    await requestPersonLink(ds, reachOf(request), request.body.email, { pageUrl: deps.config.collectPageUrl, controlTtlDays: deps.config.controlLinkTtlDays });
    return reply.code(202).send({ data: { accepted: true } });
  });
}

/** `/api/v1/inbox/{id}/control-link`: the signed end user redeems the person link an inbox item delivers. */
export async function inboxControlLinkRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  app.post('/api/v1/inbox/:id/control-link', {
    schema: {
      params: idParams,
      response: {
        201: dataOf(object({ controlToken: string().required(), controlUrl: string().required(), controlExpiresAt: timestamp().required() })),
      },
    },
    config: { tag: 'collection', auth: 'identity', operationId: 'redeemInboxControlLink',
      summary: 'The end user\'s person link, delivered in their inbox: a new secret each time, shown once' },
  }, async (request, reply) => {
    const link = await redeemInboxPersonLink(ds, endUserOf(request), request.params.id, deps.config.collectPageUrl);
    return reply.code(201).header('cache-control', 'no-store').send({ data: link });
  });
}

const reviewBody = strictObject({
  kind: string().required().oneOf(['version', 'asset'] as const),
  id: id(),
  decision: string().required().oneOf(['approve', 'decline'] as const),
  contentHash: string().required().max(200),
}).required();

/** `/api/proof/review`: the customer approves or declines the exact words of new versions and assets quoting them. */
export async function customerReviewRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  app.removeContentTypeParser('text/plain');
  const auth = customerAuth(ds, deps.config, 'control');

  app.get('/api/proof/review', {
    schema: { response: { 200: dataOf(object({ versions: array(openObject()).defined(), assets: array(openObject()).defined() })) } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getCustomerReview',
      summary: 'Versions and assets quoting the customer that await their decision' },
  }, async (request) => ({ data: await reviewQueue(ds, reachOf(request)) }));

  app.post('/api/proof/review', {
    schema: { body: reviewBody, response: { 404: NOT_FOUND_FOR_TENANT, 409: STATE_CONFLICT, 200: dataOf(openObject()), 201: dataOf(openObject()) } },
    onRequest: auth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'decideCustomerReview',
      summary: 'Approve or decline exact words (contentHash must match: 409)' },
  }, async (request, reply) => {
    const { status, data } = await decideReview(ds, reachOf(request), request.body);
    return reply.code(status).send({ data });
  });
}
