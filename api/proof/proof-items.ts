import { FastifyRequest } from 'fastify';
import { answerWithWrite } from '../plugins/idempotency';
import { mixed, string } from 'yup';
import { PROOF_ITEM_STATUSES, PROOF_TYPES } from '../../db/entities/proof-item';
import { requestApproval } from '../../db/proof/proof-approvals';
import { EXPANDABLE, listItems, getItem } from '../../db/proof/proof-items';
import { getConsent } from '../../db/proof/proof-consent';
import { createVersion, listVersions } from '../../db/proof/proof-versions';
import { requestRevocation } from '../../db/proof/proof-revocations';
import { ServiceError, forbidden } from '../../runtime/service-error';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { closedList, proofContentSchema } from './proof-content';
import { idParams } from '../plugins/path-params';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import {
  approvalRequestedSchema, consentSummarySchema, proofItemListEntrySchema, proofItemReadSchema, proofVersionSchema, revocationFiledSchema,
} from './schemas';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const MAX_EXPAND = 2;
// The spec's own filter example; it names items live on an active placement, which the placement
// work will fill. Until then it is a valid filter that matches nothing, not a 400.
const STATUS_FILTERS = [...PROOF_ITEM_STATUSES, 'published'] as const;
const MAX_PAGE_WITH_EXPAND = 50;
const GONE = errorOf('GONE: the item was deleted (it may be restored in the workspace inside its recovery window)');

/** A list parameter: repeated (`a=x&a=y`) or comma-separated (`a=x,y`). */
const listParam = (values: readonly string[], description: string, maxItems?: number) => mixed().meta({
  jsonSchema: { type: 'array', items: { type: 'string', enum: [...values] }, ...(maxItems ? { maxItems } : {}) },
  description: `${description}; repeat the parameter or separate values by commas`,
});
const expandParam = () => listParam(EXPANDABLE, 'embed each item\'s latest versions and/or consent summary', MAX_EXPAND);

const listQuery = strictObject({
  ...pageQuery,
  status: listParam(STATUS_FILTERS, 'only items with one of these statuses'),
  type: string().oneOf([...PROOF_TYPES]),
  expand: expandParam(),
});
const readQuery = strictObject({ expand: expandParam() });
const versionBody = strictObject({
  content: proofContentSchema,
  changeReason: string().required().min(3).max(1000),
  parentVersionId: string().max(100),
  modelId: string().min(1).max(200),
  locale: string().matches(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP 47 language tag'),
}).required();
const requestApprovalBody = strictObject({ versionId: string().required().max(100) }).required();
// The body is optional: Fastify hands a request without one to the validator as null.
const revokeBody = strictObject({ requestText: string().max(2000) }).nullable().default(undefined);

const expandOf = (raw: unknown) => closedList('expand', raw, EXPANDABLE, { max: MAX_EXPAND, unique: true });

function scopeOf(request: FastifyRequest) {
  const key = keyPrincipal(request);
  return { ...productTenant(request), keyId: key.id, readPrivate: key.scopes.includes('service:proof:read_private') };
}

const humanOnly = () => new ServiceError('HUMAN_APPROVAL_REQUIRED', 'only a person in the workspace may approve or reject proof');

type Filed = Awaited<ReturnType<typeof requestRevocation>>;

export async function proofItemRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const read = { auth: 'key' as const, scope: 'service:proof:read' };
  const write = { auth: 'key' as const, scope: 'service:proof:write', idempotency: 'optional' as const };

  app.get('/api/v1/proof/items', {
    schema: { querystring: listQuery, response: { 200: pageOf(proofItemListEntrySchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'listProofItems',
      summary: 'Proof items, newest first; status comma-separated or repeated; optional expand' },
  }, async (request) => {
    const s = scopeOf(request);
    const expand = expandOf(request.query.expand);
    const statuses = closedList('status', request.query.status, STATUS_FILTERS);
    const limit = expand.length > 0 ? Math.min(request.query.limit, MAX_PAGE_WITH_EXPAND) : request.query.limit;
    return listItems(ds, s.productId, { statuses, type: request.query.type }, { limit, cursor: request.query.cursor }, expand, s.readPrivate);
  });

  app.get('/api/v1/proof/items/:id', {
    schema: { params: idParams, querystring: readQuery, response: { 200: dataOf(proofItemReadSchema), 410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'getProofItem', summary: 'One item with its public version and per-channel eligibility' },
  }, async (request) => {
    const s = scopeOf(request);
    return { data: await getItem(ds, s, request.params.id, expandOf(request.query.expand), s.readPrivate) };
  });

  app.get('/api/v1/proof/items/:id/versions', {
    schema: { params: idParams, response: { 200: pageOf(proofVersionSchema), 410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'listProofVersions',
      summary: 'Versions, oldest first; unapproved ones only with proof:read_private' },
  }, async (request) => {
    const s = scopeOf(request);
    return listVersions(ds, s, request.params.id, s.readPrivate);
  });

  app.post('/api/v1/proof/items/:id/versions', {
    schema: { params: idParams, body: versionBody, response: { 201: dataOf(proofVersionSchema),
      409: errorOf('CONFLICT: the parent version is not of this item, or the item is revoked'), 410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...write, operationId: 'createProofVersion',
      summary: 'Create a draft derivative with a semantic diff against its parent' },
  }, async (request, reply) => {
    const s = scopeOf(request);
    const version = await createVersion(ds, s, request.params.id, request.body, { type: 'service_key', id: s.keyId }, answerWithWrite(request, 201));
    return reply.code(201).send({ data: version });
  });

  app.post('/api/v1/proof/items/:id/request-approval', {
    schema: { params: idParams, body: requestApprovalBody, response: { 200: dataOf(approvalRequestedSchema),
      409: errorOf('CONFLICT: the version cannot be queued (already decided, or the item is revoked)'), 410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...write, operationId: 'requestProofApproval',
      summary: 'Queue a version for a person; requesting is not approving' },
  }, async (request) => {
    const s = scopeOf(request);
    const answer = (r: Awaited<ReturnType<typeof requestApproval>>) => ({ item: r.item, version: r.version, approvalRequestId: r.approvalRequestId });
    const result = await requestApproval(ds, s, request.params.id, request.body.versionId, { type: 'service_key', id: s.keyId },
      deps.config.proofApprovalReminderMs,
      answerWithWrite(request, 200, answer));
    return { data: answer(result) };
  });

  // No scope on purpose: whatever the key holds, a key never decides.
  for (const action of ['approve', 'reject']) {
    app.post(`/api/v1/proof/items/:id/${action}`, {
      schema: { params: idParams, response: { 403: errorOf('HUMAN_APPROVAL_REQUIRED, always') } },
      config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', operationId: `${action}ProofItemByKey`,
        summary: `Always 403 HUMAN_APPROVAL_REQUIRED: ${action} is a person's decision in the workspace` },
    }, async () => {
      throw humanOnly();
    });
  }

  // Consent is granted, changed and withdrawn by a person (spec principle 1); a key only files revocations.
  const consentByKey = () => {
    throw forbidden('consent is granted, changed and withdrawn by a person in the workspace; a key may only file a revocation request');
  };
  app.post('/api/v1/proof/items/:id/consents', {
    schema: { params: idParams, response: { 403: errorOf('FORBIDDEN, always') } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', operationId: 'createConsentByKey',
      summary: 'Always 403 FORBIDDEN: consent is recorded by a person (POST /api/workspace/proof/items/{id}/consents)' },
  }, consentByKey);
  app.patch('/api/v1/proof/consents/:id', {
    schema: { params: idParams, response: { 403: errorOf('FORBIDDEN, always') } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', operationId: 'updateConsentByKey',
      summary: 'Always 403 FORBIDDEN: consent is changed by a person in the workspace' },
  }, consentByKey);

  app.get('/api/v1/proof/items/:id/consent', {
    schema: { params: idParams, response: { 200: dataOf(consentSummarySchema), 410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'getProofConsent',
      summary: 'Consent status with grant summaries; evidence never leaves' },
  }, async (request) => ({ data: await getConsent(ds, scopeOf(request), request.params.id) }));

  app.post('/api/v1/proof/items/:id/revoke', {
    schema: { params: idParams, body: revokeBody, response: { 202: dataOf(revocationFiledSchema), 409: errorOf('CONFLICT: the item is already revoked'),
      410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...write, operationId: 'revokeProofItem',
      summary: 'File a revocation request (202); new renders stop at once, a person completes it' },
  }, async (request, reply) => {
    const s = scopeOf(request);
    const filed = await requestRevocation(ds, s, { proofItemId: request.params.id }, {
      requestText: request.body?.requestText, slaMs: deps.config.proofRevocationSlaMs,
    }, { type: 'service_key', id: s.keyId }, answerWithWrite(request, 202, (r: Filed) => r.result));
    return reply.code(202).send({ data: filed.result });
  });

  app.post('/api/v1/proof/consents/:id/revoke', {
    schema: { params: idParams, response: { 202: dataOf(revocationFiledSchema), 409: errorOf('CONFLICT: the item is already revoked'), 410: GONE } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...write, operationId: 'revokeConsent', summary: 'File a revocation request for the grant\'s item (202)' },
  }, async (request, reply) => {
    const s = scopeOf(request);
    const filed = await requestRevocation(ds, s, { consentGrantId: request.params.id }, {
      slaMs: deps.config.proofRevocationSlaMs,
    }, { type: 'service_key', id: s.keyId }, answerWithWrite(request, 202, (r: Filed) => r.result));
    return reply.code(202).send({ data: filed.result });
  });
}
