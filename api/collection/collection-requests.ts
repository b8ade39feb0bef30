import { array, number, object, string } from 'yup';
import { cancelRequest, createBulk, createRequest, linkUrlOf, listRequests, markSent, getRequest, viewRequest } from '../../db/collection/requests';
import { OpportunityDecision, decideOpportunity, listOpportunities } from '../../db/integrations/opportunities';
import { approvalTarget, requestCustomerApproval } from '../../db/collection/approval-links';
import { closeCorrection, listCorrections, listRouting, updateRouting } from '../../db/collection/follow-ups';
import { REQUEST_CHANNELS } from '../../db/entities/proof-request';
import { ROUTING_STATES } from '../../db/entities/proof-routing';
import { mailTransport, mailerUnavailable } from '../../runtime/mailer';
import { conflict } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { HUMAN_DECISION, sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { dataOf, pageOf, timestamp } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import {
  candidateSchema, correctionSchema, NOT_FOUND_FOR_TENANT, readers, recipientSchema, requestSchema, routingSchema, STATE_CONFLICT, writers,
} from './collection-schemas';
import { proofRequestReminders } from './proof-request-workflows';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';

const channel = () => string().oneOf([...REQUEST_CHANNELS]);

const createBody = strictObject({
  flowId: string().required().max(100),
  channel: channel().required(),
  recipient: recipientSchema.required(),
  message: string().max(4000),
  expiresInDays: number().integer().min(1).max(90),
}).required();

const actionBody = strictObject({
  action: string().oneOf(['send', 'remind', 'cancel'] as const).required(),
  remindAfterDays: number().integer().min(1).max(30),
}).test('remind-after', 'remindAfterDays goes with send only', (v) => !v || v.remindAfterDays === undefined || v.action === 'send').required();

const bulkBody = strictObject({
  flowId: string().required().max(100),
  channel: channel().required(),
  message: string().max(4000),
  recipients: array(recipientSchema.required()).min(1).max(500).required(),
}).required();

const outcomeBody = strictObject({
  candidateId: string().required().max(100),
  action: string().oneOf(['accept', 'dismiss'] as const).required(),
  flowId: string().max(100),
  channel: channel(),
}).test('accept-needs', 'accept needs flowId and channel', (v) => !v || v.action !== 'accept' || Boolean(v.flowId && v.channel)).required();

const routingPatch = strictObject({
  state: string().oneOf([...ROUTING_STATES]),
  roomId: string().min(1).max(100),
  note: string().min(1).max(2000),
}).required();

const correctionPatch = strictObject({
  status: string().oneOf(['closed'] as const).required(),
  note: string().required().min(3).max(2000),
}).required();

const approvalLinkBody = strictObject({
  versionId: string().max(100),
  deliver: string().oneOf(['none', 'email', 'in_app'] as const).required(),
}).required();

const requestQuery = strictObject({ ...pageQuery, status: string().max(20), flowId: string().max(100) });
const routingQuery = strictObject({ ...pageQuery, band: string().max(20), state: string().oneOf([...ROUTING_STATES]) });
const correctionQuery = strictObject({ ...pageQuery, status: string().oneOf(['open', 'closed'] as const) });
const candidateQuery = strictObject({ ...pageQuery, state: string().oneOf(['proposed', 'accepted', 'dismissed', 'expired'] as const) });

const issued = object({ request: requestSchema.required(), linkToken: string().required(), linkUrl: string().required() });

/** Personal requests, outcome candidates, routing of scored responses and corrections. */
export async function collectionRequestRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const reminders = proofRequestReminders(deps.temporal, deps.config);
  const linkUrl = (token: string) => linkUrlOf(deps.config.collectPageUrl, token);
  const creator = (request: Parameters<typeof sessionPrincipal>[0]) => {
    const s = sessionPrincipal(request);
    return { organizationId: s.organizationId, teammateId: s.teammateId, createdBy: { type: 'teammate', id: s.teammateId } };
  };

  app.get('/api/proof/collect/requests', {
    schema: { querystring: requestQuery, response: { 200: pageOf(requestSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listProofRequests',
      summary: 'Personal requests, newest first; never their secrets' },
  }, async (request) => listRequests(ds, creator(request).organizationId, request.query));

  app.post('/api/proof/collect/requests', {
    schema: { body: createBody, response: { 409: STATE_CONFLICT, 201: dataOf(issued) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'createProofRequest',
      summary: 'A draft personal request pinned to the live version; its link secret is shown once' },
  }, async (request, reply) => {
    const made = await createRequest(ds, creator(request), request.body);
    return reply.code(201).send({ data: { request: viewRequest(made.request), linkToken: made.linkToken, linkUrl: linkUrl(made.linkToken) } });
  });

  app.post('/api/proof/collect/requests/bulk', {
    schema: {
      body: bulkBody,
      response: {
        201: dataOf(object({
          created: array(object({ index: number().required(), requestId: string().required(), linkToken: string().required(), linkUrl: string().required() }))
            .defined(),
          skipped: array(object({ index: number().required(), reason: string().required() })).defined(),
        })),
      },
    },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'createProofRequestsInBulk',
      summary: 'Draft personal requests for many customers; nothing is sent until a person sends each' },
  }, async (request, reply) => {
    const { created, skipped } = await createBulk(ds, creator(request), request.body);
    return reply.code(201).send({
      data: { created: created.map((c) => ({ index: c.index, requestId: c.request.id, linkToken: c.linkToken, linkUrl: linkUrl(c.linkToken) })), skipped },
    });
  });

  app.get('/api/proof/collect/requests/outcome', {
    schema: { querystring: candidateQuery, response: { 200: pageOf(candidateSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listAskCandidates', summary: 'Outcome-based ask candidates' },
  }, async (request) => {
    const { limit, cursor, state } = request.query;
    return listOpportunities(ds, { organizationId: creator(request).organizationId }, { state }, { limit, cursor });
  });

  // A test makes flowId and channel required for accept; yup's type cannot say so.
  app.post<{ Body: OpportunityDecision }>('/api/proof/collect/requests/outcome', {
    schema: {
      body: outcomeBody,
      response: { 404: NOT_FOUND_FOR_TENANT, 409: STATE_CONFLICT,
        200: dataOf(object({ candidate: candidateSchema.required() })),
        201: dataOf(object({ candidate: candidateSchema.required(), request: requestSchema.required(), linkToken: string().required(),
          linkUrl: string().required() })),
      },
    },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...HUMAN_DECISION, operationId: 'decideAskCandidate',
      summary: 'Accept a candidate into a draft request (nothing sent) or dismiss it' },
  }, async (request, reply) => {
    const { candidate, made } = await decideOpportunity(ds, creator(request), request.body);
    if (!made) return { data: { candidate } };
    return reply.code(201).send({ data: { candidate, request: viewRequest(made.request), linkToken: made.linkToken, linkUrl: linkUrl(made.linkToken) } });
  });

  app.get('/api/proof/collect/requests/:id', {
    schema: { params: idParams, response: { 200: dataOf(object({ request: requestSchema.required() })) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'getProofRequest', summary: 'One personal request' },
  }, async (request) => ({ data: { request: viewRequest(await getRequest(ds, creator(request).organizationId, request.params.id)) } }));

  app.post('/api/proof/collect/requests/:id', {
    schema: {
      params: idParams,
      body: actionBody,
      response: { 409: STATE_CONFLICT, 200: dataOf(object({ request: requestSchema.required(), linkToken: string(), linkUrl: string() })) },
    },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'actOnProofRequest',
      summary: 'Send a request, send its one reminder, or cancel it' },
  }, async (request) => {
    const { organizationId } = creator(request);
    const id = request.params.id;
    if (request.body.action === 'send') {
      const current = await getRequest(ds, organizationId, id);
      if (current.channel === 'email' && !mailTransport(deps.config)) throw mailerUnavailable();
      const { request: sent, linkToken } = await markSent(ds, organizationId, id, request.body.remindAfterDays, deps.config.proofRequestDayMs);
      return { data: { request: viewRequest(sent), ...(linkToken ? { linkToken, linkUrl: linkUrl(linkToken) } : {}) } };
    }
    if (request.body.action === 'remind') {
      const current = await getRequest(ds, organizationId, id);
      if (current.status !== 'sent') throw conflict(`the request is ${current.status}; only a sent request gets its one reminder`);
      if (current.channel === 'email' && !mailTransport(deps.config)) throw mailerUnavailable();
      await reminders.remind(current);
      return { data: { request: viewRequest(await getRequest(ds, organizationId, id)) } };
    }
    const cancelled = await cancelRequest(ds, organizationId, id);
    return { data: { request: viewRequest(cancelled) } };
  });

  app.get('/api/proof/collect/routing', {
    schema: { querystring: routingQuery, response: { 200: pageOf(routingSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listResponseRouting',
      summary: 'Every scored response with its band and follow-up' },
  }, async (request) => listRouting(ds, creator(request).organizationId, request.query));

  app.patch('/api/proof/collect/routing/:id', {
    schema: { params: idParams, body: routingPatch, response: { 409: STATE_CONFLICT, 200: dataOf(routingSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'updateResponseRouting',
      summary: 'Move a follow-up forward, link its room or note it' },
  }, async (request) => ({ data: await updateRouting(ds, creator(request).organizationId, request.params.id, request.body) }));

  app.get('/api/proof/collect/corrections', {
    schema: { querystring: correctionQuery, response: { 200: pageOf(correctionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listCorrections', summary: 'Customer correction requests' },
  }, async (request) => listCorrections(ds, creator(request).organizationId, request.query));

  app.patch('/api/proof/collect/corrections/:id', {
    schema: { params: idParams, body: correctionPatch, response: { 409: STATE_CONFLICT, 200: dataOf(correctionSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'closeCorrection',
      summary: 'Close a correction with a note the customer sees on the control link' },
  }, async (request) => ({ data: await closeCorrection(ds, creator(request), request.params.id, request.body.note) }));

  app.post('/api/proof/collect/items/:id/approval-link', {
    schema: {
      params: idParams,
      body: approvalLinkBody,
      response: { 409: STATE_CONFLICT,
        201: dataOf(object({
          delivered: string().oneOf(['none', 'email', 'in_app'] as const).required(),
          expiresAt: timestamp().nullable().defined().meta({ description: 'the delivered person link\'s expiry; null with deliver: none' }),
        })),
      },
    },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'issueApprovalLink',
      summary: 'Ask the item\'s customer to approve its wording; email or in_app also delivers them a person link (never answered)' },
  }, async (request, reply) => {
    const { organizationId } = creator(request);
    const { versionId, deliver } = request.body;
    const item = await approvalTarget(ds, organizationId, request.params.id, versionId);
    if (deliver === 'email') {
      if (!mailTransport(deps.config)) throw mailerUnavailable();
      if (!item.customerEmail) throw conflict('the customer left no e-mail address');
    }
    return reply.code(201).send({ data: await requestCustomerApproval(ds, item, deps.config.controlLinkTtlDays, deliver) });
  });

}
