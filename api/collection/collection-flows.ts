import QRCode from 'qrcode';
import { boolean, number, object, string } from 'yup';
import { addDomain, listDomains, removeDomain, viewDomain } from '../../db/collection/domains';
import { createFlow, findFlow, listFlows, liveUrlOf, publishFlow, getFlow, saveFlow, setIncentive } from '../../db/collection/flows';
import { CollectionDomain } from '../../db/entities';
import { INCENTIVE_APPLIES_TO, INCENTIVE_KINDS, Incentive, incentiveConditionReason } from '../../db/rules/collection-flow';
import { FieldIssue, ServiceError, conflict, validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { dataOf, errorOf, fileOf, noContent, pageOf } from '../plugins/responses';
import { openObject, pageQuery, RouteApp, strictObject } from '../plugins/validation';
import {
  definitionSchema, domainSchema, flowDetail, flowSummary, flowVersionSchema, NOT_FOUND_FOR_TENANT, readers, STATE_CONFLICT, writers,
} from './collection-schemas';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';

const createBody = strictObject({
  productId: string().required().max(100),
  name: string().required().min(1).max(120),
  definition: definitionSchema,
}).required();

const patchBody = strictObject({
  draftRevision: number().integer().min(1).required(),
  name: string().min(1).max(120),
  definition: definitionSchema,
  state: string().oneOf(['live', 'paused', 'archived'] as const),
}).required();

const publishBody = strictObject({ draftRevision: number().integer().min(1).required() }).required();

// Properties that would make the reward depend on how the customer feels: refused by name, with the reason.
const CONDITION_KEYS = ['condition', 'conditions', 'minRating', 'rating', 'band', 'bands', 'sentiment', 'minScore', 'score', 'onlyIf'];
const UNLOCK_KEY = /^[A-Za-z0-9._:-]{1,100}$/;

const incentiveBody = object({
  offered: boolean().required(),
  kind: string().oneOf([...INCENTIVE_KINDS]),
  description: string().min(3).max(280),
  unlockKey: string().matches(UNLOCK_KEY, 'must be 1 to 100 of A-Z a-z 0-9 . _ : -'),
  appliesTo: string().oneOf([...INCENTIVE_APPLIES_TO]),
}).test('no-feeling-condition', function check(value) {
  if (!value || typeof value !== 'object') return true;
  const conditioned = Object.keys(value).filter((k) => CONDITION_KEYS.includes(k));
  if (conditioned.length > 0) {
    return this.createError({
      path: conditioned[0], message: 'an incentive may not depend on a rating, band or sentiment: every response gets the same offer',
    });
  }
  const extra = Object.keys(value).filter((k) => !['offered', 'kind', 'description', 'unlockKey', 'appliesTo'].includes(k));
  if (extra.length > 0) return this.createError({ path: extra[0], message: `${extra[0]} is not an allowed property` });
  const v = value as Record<string, unknown>;
  if (v.offered === false) {
    const given = Object.keys(v).filter((k) => k !== 'offered');
    return given.length === 0 || this.createError({ path: given[0], message: 'clearing the incentive takes only {offered:false}' });
  }
  for (const field of ['kind', 'description', 'appliesTo']) {
    if (v[field] === undefined) return this.createError({ path: field, message: `${field} is required when an incentive is offered` });
  }
  if ((v.kind === 'feature_unlock') !== (v.unlockKey !== undefined)) {
    return this.createError({ path: 'unlockKey', message: 'unlockKey is required for feature_unlock and only for it' });
  }
  const reason = incentiveConditionReason(String(v.description));
  return reason === null || this.createError({ path: 'description', message: reason });
}).required();

/** A validation refusal whose message names each problem. */
function withReasons(error: Error): ServiceError {
  const issues = error instanceof ServiceError && Array.isArray(error.details) ? error.details as FieldIssue[] : [];
  const reasons = issues.map((i) => (i.message.startsWith(i.path) ? i.message : `${i.path}: ${i.message}`)).join('; ');
  return new ServiceError('VALIDATION_FAILED', reasons ? `the incentive is refused: ${reasons}` : error.message, issues);
}

const listQuery = strictObject({ ...pageQuery, productId: string().max(100) });
const readQuery = strictObject({ version: number().integer().min(1) });
const domainBody = strictObject({ hostname: string().required().min(1).max(253) }).required();
const domainQuery = strictObject({ hostname: string().required().min(1).max(253) });
const qrQuery = strictObject({ download: string().oneOf(['0', '1'] as const), domain: string().max(253) });

/** Collection setup: flows and their versions, domains, the incentive and the QR code of the live link. */
export async function collectionFlowRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const settings = { collectPageUrl: deps.config.collectPageUrl, monthlyAllowance: deps.config.proofMonthlySubmissionAllowance };
  const who = (request: Parameters<typeof sessionPrincipal>[0]) => {
    const s = sessionPrincipal(request);
    return { organizationId: s.organizationId, teammateId: s.teammateId };
  };

  app.get('/api/proof/collect/forms', {
    schema: { querystring: listQuery, response: { 200: pageOf(flowSummary) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listCollectionFlows',
      summary: 'Flows with their consent template and the monthly allowance' },
  }, async (request) => listFlows(ds, who(request).organizationId, settings, request.query));

  app.post('/api/proof/collect/forms', {
    schema: { body: createBody, response: { 404: NOT_FOUND_FOR_TENANT, 201: dataOf(flowDetail) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'createCollectionFlow',
      summary: 'Create a flow (state draft) with an optional draft definition' },
  }, async (request, reply) => reply.code(201).send({ data: await createFlow(ds, who(request), request.body, settings) }));

  app.get('/api/proof/collect/forms/:id', {
    schema: { params: idParams, querystring: readQuery, response: { 200: dataOf(flowDetail) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'getCollectionFlow',
      summary: 'A flow, its draft definition and versions; ?version=N adds that version' },
  }, async (request) => ({ data: await getFlow(ds, who(request).organizationId, request.params.id, settings, request.query.version) }));

  app.patch('/api/proof/collect/forms/:id', {
    schema: { params: idParams, body: patchBody, response: { 409: STATE_CONFLICT, 200: dataOf(flowDetail) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'updateCollectionFlow',
      summary: 'Save the draft (revision checked) or pause, resume or archive the flow' },
  }, async (request) => ({ data: await saveFlow(ds, who(request).organizationId, request.params.id, request.body, settings) }));

  app.post('/api/proof/collect/forms/:id', {
    schema: { params: idParams, body: publishBody, response: { 409: STATE_CONFLICT, 201: dataOf(object({ flowVersion: flowVersionSchema.required() })) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'publishCollectionFlow',
      summary: 'Publish the draft as a new immutable version; the live link serves it' },
  }, async (request, reply) => reply.code(201).send({ data: await publishFlow(ds, who(request), request.params.id, request.body.draftRevision) }));

  // A test makes kind, description and appliesTo required together when offered; yup's type cannot say so.
  app.put<{ Params: { id: string }; Body: Incentive }>('/api/proof/collect/forms/:id/incentive', {
    schema: { params: idParams, body: incentiveBody, response: { 200: dataOf(object({ incentive: openObject().required(),
      appliesFrom: string().required() })) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'setCollectionIncentive',
      summary: 'Set or clear the participation reward; it applies from the next publish' },
    // The customer routes' error body has no details, so the refusal's reasons go into its message.
    attachValidation: true,
  }, async (request) => {
    if (request.validationError) throw withReasons(request.validationError);
    const b = request.body;
    const incentive: Incentive = b.offered
      ? { offered: true, kind: b.kind, description: b.description, unlockKey: b.unlockKey ?? null, appliesTo: b.appliesTo }
      : { offered: false };
    return { data: await setIncentive(ds, who(request).organizationId, request.params.id, incentive) };
  });

  app.get('/api/proof/collect/forms/:id/domains', {
    schema: { params: idParams, response: { 200: pageOf(domainSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listCollectionDomains',
      summary: 'Custom domains of the flow with their DNS records and verification state' },
  }, async (request) => {
    const rows = await listDomains(ds, who(request).organizationId, request.params.id);
    // At most five: always one page.
    return { data: rows.map((d: CollectionDomain) => viewDomain(d, deps.config.collectCnameTarget)), nextCursor: null };
  });

  app.post('/api/proof/collect/forms/:id/domains', {
    schema: {
      params: idParams, body: domainBody,
      response: { 409: errorOf('CONFLICT: the hostname is verified for another flow'), 201: dataOf(domainSchema), 200: dataOf(domainSchema) },
    },
    config: {
      tag: 'collection', ...CUSTOMER_ROUTE,
      ...writers, operationId: 'addCollectionDomain',
      summary: 'Claim a custom domain (at most five): 201 with the DNS records to set; the flow\'s own hostname again: 200, checked now; 409 once another ' +
        'flow verified it',
    },
  }, async (request, reply) => {
    const { domain, created } = await addDomain(ds, who(request).organizationId, request.params.id, request.body.hostname, {
      checkIntervalMs: deps.config.domainCheckIntervalMs, verifyTtlMs: deps.config.domainVerifyTtlMs,
    });
    return reply.code(created ? 201 : 200).send({ data: viewDomain(domain, deps.config.collectCnameTarget) });
  });

  app.delete('/api/proof/collect/forms/:id/domains', {
    schema: { params: idParams, querystring: domainQuery, response: { 204: noContent('removed') } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'removeCollectionDomain', summary: 'Remove a custom domain' },
  }, async (request, reply) => {
    await removeDomain(ds, who(request).organizationId, request.params.id, request.query.hostname);
    return reply.code(204).send();
  });

  app.get('/api/proof/collect/forms/:id/qr', {
    schema: { params: idParams, querystring: qrQuery, response: { 409: STATE_CONFLICT, 200: fileOf('image/svg+xml', 'the QR code') } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'getCollectionFlowQr',
      summary: 'Printable SVG QR code of the live link; download=1 saves it' },
  }, async (request, reply) => {
    const { organizationId } = who(request);
    const flow = await findFlow(ds.manager, organizationId, request.params.id);
    if (!flow.liveVersionId) throw conflict('the flow was never published');
    let url = liveUrlOf(deps.config.collectPageUrl, flow.publicId);
    if (request.query.domain !== undefined) {
      const host = request.query.domain.toLowerCase();
      const domain = (await listDomains(ds, organizationId, flow.id)).find((d) => d.hostname === host);
      if (!domain) throw validationFailed([{ path: 'domain', message: 'is not a domain of this flow' }]);
      // A claim that failed (its window closed, or another flow verified the hostname first) serves nothing.
      if (domain.status === 'failed') throw conflict('this domain failed verification; add it again to claim it');
      url = `https://${host}/f/${flow.publicId}`;
    }
    const svg = await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
    reply.type('image/svg+xml').header('x-qr-url', url).header('cache-control', 'no-store');
    if (request.query.download === '1') reply.header('content-disposition', `attachment; filename="${flow.publicId}-qr.svg"`);
    return reply.send(svg);
  });
}
