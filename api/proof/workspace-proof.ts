import { boolean, string } from 'yup';
import { decideApproval, reviewQueue } from '../../db/proof/proof-approvals';
import { deleteItem, restoreItem } from '../../db/proof/proof-deletions';
import { approveAsset, listWorkspaceAssets } from '../../db/proof/proof-assets';
import { getWorkspaceItem, listWorkspaceItems } from '../../db/proof/proof-items';
import { ASSET_APPROVAL_STATES } from '../../db/entities/proof-asset';
import { PROOF_ITEM_STATUSES } from '../../db/entities/proof-item';
import { exportRaw } from '../../db/proof/proof-exports';
import { listPlacementItems, listWorkspacePlacements, placementScope, publishPlacement } from '../../db/proof/proof-placements';
import { PLACEMENT_STATES } from '../../db/entities/proof-placement';
import { grantConsent } from '../../db/proof/proof-consent';
import { completeRevocation } from '../../db/proof/proof-revocations';
import { openRevocations } from '../../db/proof/revocation-queue';
import { HUMAN_DECISION, OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { dataOf, errorOf, NO_SUCH_PRODUCT, pageOf } from '../plugins/responses';
import {
  assetSchema, consentGrantSchema, deletedItemSchema, exportSchema, itemAndVersionSchema, openRevocationSchema, PLACEMENT_ARCHIVED,
  placementItemWithEngagementSchema, publishResultSchema, reviewRequestSchema, revocationFiledSchema, workspaceAssetSchema, workspaceItemDetailSchema,
  workspaceItemSchema, workspacePlacementSchema,
} from './schemas';
import { idParams } from '../plugins/path-params';
import { consentTermsSchema } from './proof-submissions';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';

const approveBody = strictObject({ versionId: string().required().max(100) }).required();
const rejectBody = strictObject({
  reason: string().required().min(3).max(2000),
  versionId: string().max(100).meta({ description: 'the version reviewed; refused with 409 if a newer request replaced it' }),
}).required();
const consentBody = strictObject({ versionId: string().required().max(100), consent: consentTermsSchema }).required();
const NOT_PENDING = errorOf('CONFLICT: no pending request for this version (decided, superseded or replaced)');
const GONE = errorOf('GONE: the item was deleted');
const placementsQuery = strictObject({ ...pageQuery, state: string().oneOf([...PLACEMENT_STATES]) });
const publishQuery = strictObject({ dryRun: boolean().default(false).meta({ description: 'true: count what would render and write nothing' }) });
const itemsQuery = strictObject({
  ...pageQuery,
  status: string().oneOf([...PROOF_ITEM_STATUSES]).meta({ description: 'only items in this status; deleted items are listed only when asked for' }),
  productId: string().max(100),
});
const assetsQuery = strictObject({ ...pageQuery, state: string().oneOf([...ASSET_APPROVAL_STATES]), productId: string().max(100) });
const GONE_FOR_GOOD = errorOf('GONE: the item was deleted and its recovery window has closed');
const rawExportBody = strictObject({ productId: string().required().max(100) }).required();

/**
 * The human side of proof: the workspace's stories and assets to read (any teammate), decisions, consent,
 * completing revocations, deletion and raw exports. A service key here hears HUMAN_APPROVAL_REQUIRED for
 * decisions and FORBIDDEN for the rest.
 */
export async function workspaceProofRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/workspace/proof/review-queue', {
    schema: { querystring: strictObject(pageQuery), response: { 200: pageOf(reviewRequestSchema) } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'listReviewQueue', summary: 'Versions awaiting a person, oldest request first' },
  }, async (request) => reviewQueue(ds, sessionPrincipal(request).organizationId, request.query));

  app.post('/api/workspace/proof/items/:id/approve', {
    schema: { params: idParams, body: approveBody, response: { 200: dataOf(itemAndVersionSchema), 409: NOT_PENDING } },
    config: { tag: 'proof', ...HUMAN_DECISION, operationId: 'approveProofItem', summary: 'Approve the queued version; it becomes the public version' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const decided = await decideApproval(ds, s.organizationId, request.params.id, { kind: 'approve', versionId: request.body.versionId }, s.teammateId);
    return { data: { item: decided.item, version: decided.version } };
  });

  app.post('/api/workspace/proof/items/:id/reject', {
    schema: { params: idParams, body: rejectBody, response: { 200: dataOf(itemAndVersionSchema), 409: NOT_PENDING } },
    config: { tag: 'proof', ...HUMAN_DECISION, operationId: 'rejectProofItem', summary: 'Reject the queued version with a reason' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const decided = await decideApproval(ds, s.organizationId, request.params.id,
      { kind: 'reject', reason: request.body.reason, versionId: request.body.versionId }, s.teammateId);
    return { data: { item: decided.item, version: decided.version } };
  });

  app.get('/api/workspace/proof/placements', {
    schema: { querystring: placementsQuery, response: { 200: pageOf(workspacePlacementSchema) } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'listWorkspacePlacements',
      summary: 'Placements of every product of the workspace, newest first, with how many items each lists' },
  }, async (request) => {
    const { limit, cursor, state } = request.query;
    return listWorkspacePlacements(ds, sessionPrincipal(request).organizationId, state, { limit, cursor });
  });

  app.get('/api/workspace/proof/placements/:id/items', {
    schema: { params: idParams, response: { 200: pageOf(placementItemWithEngagementSchema) } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'listWorkspacePlacementItems',
      summary: 'A placement\'s items in position order, each with its live eligibility decision and the reasons it is excluded' },
  }, async (request) => {
    const scope = await placementScope(ds, sessionPrincipal(request).organizationId, request.params.id);
    return listPlacementItems(ds, scope, request.params.id);
  });

  app.post('/api/workspace/proof/placements/:id/publish', {
    schema: { params: idParams, querystring: publishQuery, response: { 200: dataOf(publishResultSchema), 409: PLACEMENT_ARCHIVED } },
    config: { tag: 'proof', ...HUMAN_DECISION, operationId: 'publishPlacementAsPerson',
      summary: 'Publish a placement as a person (the only way to make paid use live); dryRun=true answers the same counts and writes nothing' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const scope = await placementScope(ds, s.organizationId, request.params.id);
    return { data: await publishPlacement(ds, scope, request.params.id, request.query.dryRun, { type: 'teammate', id: s.teammateId }) };
  });

  app.post('/api/workspace/proof/items/:id/consents', {
    schema: { params: idParams, body: consentBody, response: { 201: dataOf(consentGrantSchema), 409: errorOf('CONFLICT: the item is revoked'), 410: GONE } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'grantConsent',
      summary: 'Record the customer\'s consent for an exact version; it supersedes the item\'s active grants' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    return reply.code(201).send({ data: await grantConsent(ds, s.organizationId, request.params.id, request.body, s.teammateId) });
  });

  app.post('/api/workspace/proof/assets/:id/approve', {
    schema: {
      params: idParams, response: { 200: dataOf(assetSchema), 409: errorOf('CONFLICT: the asset is not a draft, or its source is no longer eligible') },
    },
    config: { tag: 'proof', ...HUMAN_DECISION, operationId: 'approveAsset',
      summary: 'Approve a generated asset; only approved assets are served as public media' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await approveAsset(ds, s.organizationId, request.params.id, { type: 'teammate', id: s.teammateId }) };
  });

  app.get('/api/workspace/proof/revocations', {
    schema: { querystring: strictObject(pageQuery), response: { 200: pageOf(openRevocationSchema) } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'listOpenRevocations',
      summary: 'Revocations awaiting completion, oldest first, with their SLA deadline and the placements that still list the item' },
  }, async (request) => openRevocations(ds, sessionPrincipal(request).organizationId, request.query));

  app.post('/api/workspace/proof/revocations/:id/complete', {
    schema: { params: idParams, response: { 200: dataOf(revocationFiledSchema), 409: errorOf('CONFLICT: the revocation is already completed') } },
    config: { tag: 'proof', ...HUMAN_DECISION, operationId: 'completeRevocation', summary: 'Complete a filed revocation; final for the item' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    const done = await completeRevocation(ds, s.organizationId, request.params.id, s.teammateId);
    return { data: done.result };
  });

  app.get('/api/workspace/proof/items/:id', {
    schema: { params: idParams, response: { 200: dataOf(workspaceItemDetailSchema), 410: GONE_FOR_GOOD } },
    config: { tag: 'proof', auth: 'session', operationId: 'getWorkspaceProofItem',
      summary: 'One item with every version (approved or not) and its consent grants; any teammate reads it' },
  }, async (request) => ({ data: await getWorkspaceItem(ds, sessionPrincipal(request).organizationId, request.params.id) }));

  app.delete('/api/workspace/proof/items/:id', {
    schema: { params: idParams, response: { 200: dataOf(deletedItemSchema), 410: GONE } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'deleteProofItem', summary: 'Delete an item; it may be restored inside the recovery window' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await deleteItem(ds, s.organizationId, request.params.id, s.teammateId, deps.config.proofDeletionRecoveryMs) };
  });

  app.post('/api/workspace/proof/items/:id/restore', {
    schema: { params: idParams, response: { 200: dataOf(deletedItemSchema), 409: errorOf('CONFLICT: the item is not deleted'),
      410: errorOf('GONE: the recovery window has closed') } },
    config: { tag: 'proof', ...OWNERS_AND_ADMINS, operationId: 'restoreProofItem', summary: 'Restore a deleted item inside its recovery window' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await restoreItem(ds, s.organizationId, request.params.id, s.teammateId) };
  });

  app.post('/api/workspace/proof/exports/raw', {
    schema: { body: rawExportBody, response: { 201: dataOf(exportSchema), 404: NO_SUCH_PRODUCT } },
    config: { tag: 'proof', auth: 'session', roles: ['owner'], operationId: 'exportRawProof',
      summary: 'Raw originals of a product (owner only), with a sha256 digest' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    return reply.code(201).send({ data: await exportRaw(ds, s.organizationId, request.body.productId) });
  });

  app.get('/api/workspace/proof/items', {
    schema: { querystring: itemsQuery, response: { 200: pageOf(workspaceItemSchema) } },
    config: { tag: 'proof', auth: 'session', operationId: 'listWorkspaceProofItems',
      summary: 'Proof items of every product of the workspace, newest first, each with its original\'s excerpt; any teammate reads them' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listWorkspaceItems(ds, sessionPrincipal(request).organizationId, filter, { limit, cursor });
  });

  app.get('/api/workspace/proof/assets', {
    schema: { querystring: assetsQuery, response: { 200: pageOf(workspaceAssetSchema) } },
    config: { tag: 'proof', auth: 'session', operationId: 'listWorkspaceAssets',
      summary: 'Generated assets (quote cards, case studies) of the workspace, newest first, by approval state; any teammate reads them' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listWorkspaceAssets(ds, sessionPrincipal(request).organizationId, filter, { limit, cursor });
  });
}
