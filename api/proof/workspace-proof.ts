import { FastifyInstance } from 'fastify';
import { string } from 'yup';
import { PageRequest } from '../../db/pagination';
import { decideApproval, reviewQueue } from '../../db/proof/proof-approvals';
import { deleteItem, restoreItem } from '../../db/proof/proof-deletions';
import { approveAsset } from '../../db/proof/proof-assets';
import { exportRaw } from '../../db/proof/proof-exports';
import { placementScope, publishPlacement } from '../../db/proof/proof-placements';
import { ConsentTerms, grantConsent } from '../../db/proof/proof-items';
import { completeRevocation } from '../../db/proof/proof-revocations';
import { sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app';
import { idParams } from '../plugins/path-params';
import { consentTermsSchema } from './proof-submissions';
import { pageQuery, strictObject } from '../plugins/validation';

const approveBody = strictObject({ versionId: string().required().max(100) }).required();
const rejectBody = strictObject({
  reason: string().required().min(3).max(2000),
  versionId: string().max(100).meta({ description: 'the version reviewed; refused with 409 if a newer request replaced it' }),
}).required();
const consentBody = strictObject({ versionId: string().required().max(100), consent: consentTermsSchema }).required();
const rawExportBody = strictObject({ productId: string().required().max(100) }).required();

/**
 * The human side of proof: decisions, completing revocations, deletion and raw exports. A service key
 * here hears HUMAN_APPROVAL_REQUIRED for decisions and FORBIDDEN for the rest.
 */
export async function workspaceProofRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const people = { auth: 'session' as const, roles: ['owner' as const, 'admin' as const] };
  const decision = { ...people, keyRefusal: 'HUMAN_APPROVAL_REQUIRED' as const };

  app.get<{ Querystring: PageRequest }>('/api/workspace/proof/review-queue', {
    schema: { querystring: strictObject(pageQuery) },
    config: { ...people, summary: 'Versions awaiting a person, oldest request first' },
  }, async (request) => reviewQueue(ds, sessionPrincipal(request).organizationId, request.query));

  app.post<{ Params: { id: string }; Body: { versionId: string } }>('/api/workspace/proof/items/:id/approve', {
    schema: { params: idParams, body: approveBody },
    config: { ...decision, summary: 'Approve the queued version; it becomes the public version' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const decided = await decideApproval(ds, s.organizationId, request.params.id, { kind: 'approve', versionId: request.body.versionId }, s.teammateId);
    return { data: { item: decided.item, version: decided.version } };
  });

  app.post<{ Params: { id: string }; Body: { reason: string; versionId?: string } }>('/api/workspace/proof/items/:id/reject', {
    schema: { params: idParams, body: rejectBody },
    config: { ...decision, summary: 'Reject the queued version with a reason' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const decided = await decideApproval(ds, s.organizationId, request.params.id, { kind: 'reject', reason: request.body.reason, versionId: request.body.versionId }, s.teammateId);
    return { data: { item: decided.item, version: decided.version } };
  });

  app.post<{ Params: { id: string } }>('/api/workspace/proof/placements/:id/publish', {
    schema: { params: idParams },
    config: { ...decision, summary: 'Publish a placement as a person: the only way to make paid use live' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const scope = await placementScope(ds, s.organizationId, request.params.id);
    return { data: await publishPlacement(ds, scope, request.params.id, false, { type: 'teammate', id: s.teammateId }) };
  });

  app.post<{ Params: { id: string }; Body: { versionId: string; consent: ConsentTerms } }>('/api/workspace/proof/items/:id/consents', {
    schema: { params: idParams, body: consentBody },
    config: { ...people, summary: 'Record the customer\'s consent for an exact version; it supersedes the item\'s active grants' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    return reply.code(201).send({ data: await grantConsent(ds, s.organizationId, request.params.id, request.body, s.teammateId) });
  });

  app.post<{ Params: { id: string } }>('/api/workspace/proof/assets/:id/approve', {
    schema: { params: idParams },
    config: { ...decision, summary: 'Approve a generated asset; only approved assets are served as public media' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await approveAsset(ds, s.organizationId, request.params.id, { type: 'teammate', id: s.teammateId }) };
  });

  app.post<{ Params: { id: string } }>('/api/workspace/proof/revocations/:id/complete', {
    schema: { params: idParams },
    config: { ...decision, summary: 'Complete a filed revocation; final for the item' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const done = await completeRevocation(ds, s.organizationId, request.params.id, s.teammateId);
    return { data: done.result };
  });

  app.delete<{ Params: { id: string } }>('/api/workspace/proof/items/:id', {
    schema: { params: idParams },
    config: { ...people, summary: 'Delete an item; it may be restored inside the recovery window' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await deleteItem(ds, s.organizationId, request.params.id, s.teammateId, deps.config.proofDeletionRecoveryMs) };
  });

  app.post<{ Params: { id: string } }>('/api/workspace/proof/items/:id/restore', {
    schema: { params: idParams },
    config: { ...people, summary: 'Restore a deleted item inside its recovery window' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await restoreItem(ds, s.organizationId, request.params.id, s.teammateId) };
  });

  app.post<{ Body: { productId: string } }>('/api/workspace/proof/exports/raw', {
    schema: { body: rawExportBody },
    config: { auth: 'session', roles: ['owner'], summary: 'Raw originals of a product (owner only), with a sha256 digest' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    return reply.code(201).send({ data: await exportRaw(ds, s.organizationId, request.body.productId) });
  });
}
