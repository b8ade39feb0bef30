import { array, boolean, number, object, string } from 'yup';
import { FEATURE_STATES } from '../../db/entities/feature';
import {
  createFeature, getFeature, linkSignal, listWorkspaceFeatures, unlinkSignal, updateFeature, workspaceFeatureProduct,
} from '../../db/customer-loop/features';
import { findSimilar } from '../../db/customer-loop/duplicates';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../db/pagination';
import { markNotDuplicate, mergeFeature, unmergeFeature } from '../../db/customer-loop/feature-merges';
import { validationFailed } from '../../runtime/service-error';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { idParams, pathParams } from '../plugins/path-params';
import { RouteApp, strictObject } from '../plugins/validation';
import { NO_SUCH_PRODUCT, dataOf, errorOf, named, pageOf } from '../plugins/responses';
import { featureMergeSchema, featureSchema, featureWithEvidenceSchema, similarCandidateSchema } from './schemas';

const title = string().min(1).max(200);
const problem = string().min(1).max(5_000);
const state = string().oneOf([...FEATURE_STATES]);

const createBody = strictObject({
  productId: string().required().max(100),
  title: title.required(),
  problem: problem.required(),
  state,
  publicBoard: boolean(),
}).required();

const patchBody = strictObject({ title, problem, state, publicBoard: boolean() }).required();
const linkBody = strictObject({ signalId: string().required().max(100) }).required();
const linkParams = pathParams('id', 'signalId');
const mergeBody = strictObject({ intoFeatureId: string().required().max(100) }).required();
const notDuplicateBody = strictObject({ featureId: string().required().max(100) }).required();
const notDuplicateSchema = named('FeatureNotDuplicate', object({ featureId: string().required(), notDuplicateOf: string().required() }));
const listQuery = strictObject({
  limit: number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  productId: string().max(100),
  state,
  publicBoard: string().oneOf(['true', 'false'] as const),
  merged: string().oneOf(['true', 'false']).meta({ description: 'true lists the merged features (each names the one it lives on in) instead of the others' }),
});
const NO_SUCH_FEATURE = errorOf('NOT_FOUND: no such feature in the workspace');
const NOT_FOUND_OR_OTHER_PRODUCT = errorOf('NOT_FOUND: no such feature in the workspace, or the other one is of another product');

/** Teammates shape the feature board: features and the signals that are their evidence. */
export async function workspaceFeatureRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const org = (request: Parameters<typeof sessionPrincipal>[0]) => sessionPrincipal(request).organizationId;

  app.get('/api/workspace/features', {
    schema: { querystring: listQuery, response: { 200: pageOf(featureSchema) } },
    config: { tag: 'customer-loop', auth: 'session', operationId: 'listTeamFeatures',
      summary: 'Features of the workspace (every product, or one) by score, highest first' },
  }, async (request) => ({ data: await listWorkspaceFeatures(ds, org(request), request.query), nextCursor: null }));

  app.get('/api/workspace/features/:id', {
    schema: { params: idParams, response: { 200: dataOf(featureWithEvidenceSchema), 404: NO_SUCH_FEATURE } },
    config: { tag: 'customer-loop', auth: 'session', operationId: 'getTeamFeature', summary: 'One feature with its linked evidence' },
  }, async (request) => ({ data: await getFeature(ds, await workspaceFeatureProduct(ds, org(request), request.params.id), request.params.id) }));

  app.get('/api/workspace/features/:id/similar', {
    schema: { params: idParams, response: { 200: dataOf(array(similarCandidateSchema).defined()), 404: NO_SUCH_FEATURE } },
    config: { tag: 'customer-loop', auth: 'session', operationId: 'similarToTeamFeature',
      summary: 'Features and unlinked signals most like this feature (at most 10), as GET /api/v1/features/{id}/similar' },
  }, async (request) => {
    const productId = await workspaceFeatureProduct(ds, org(request), request.params.id);
    return { data: await findSimilar(ds, { type: 'feature', productId, id: request.params.id, threshold: deps.config.duplicateThreshold }) };
  });

  app.post('/api/workspace/features', {
    schema: { body: createBody, response: { 201: dataOf(featureSchema), 404: NO_SUCH_PRODUCT } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'createFeature', summary: 'Create a feature candidate' },
  }, async (request, reply) => {
    const { productId, ...input } = request.body;
    return reply.code(201).send({ data: await createFeature(ds, sessionPrincipal(request).organizationId, productId, input) });
  });

  app.patch('/api/workspace/features/:id', {
    schema: { params: idParams, body: patchBody, response: { 200: dataOf(featureSchema) } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'updateFeature', summary: 'Edit a feature or move its state' },
  }, async (request) => {
    if (Object.keys(request.body).length === 0) throw validationFailed([{ path: '', message: 'send at least one property' }]);
    return { data: await updateFeature(ds, sessionPrincipal(request).organizationId, request.params.id, request.body) };
  });

  app.post('/api/workspace/features/:id/signals', {
    schema: { params: idParams, body: linkBody, response: { 200: dataOf(featureSchema) } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'linkFeatureSignal', summary: 'Link a signal as evidence; the score is recomputed' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await linkSignal(ds, s.organizationId, request.params.id, request.body.signalId, s.teammateId) };
  });

  app.delete('/api/workspace/features/:id/signals/:signalId', {
    schema: { params: linkParams, response: { 200: dataOf(featureSchema) } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'unlinkFeatureSignal', summary: 'Unlink a signal; the score is recomputed' },
  }, async (request) => ({
    data: await unlinkSignal(ds, sessionPrincipal(request).organizationId, request.params.id, request.params.signalId),
  }));

  app.post('/api/workspace/features/:id/merge', {
    schema: { params: idParams, body: mergeBody, response: {
      200: dataOf(featureMergeSchema), 404: NOT_FOUND_OR_OTHER_PRODUCT,
      409: errorOf('CONFLICT: either feature is already merged, or another feature is merged into this one'),
    } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'mergeFeature',
      summary: 'Merge a duplicate into another feature: votes (one per end user), followers and signals move; feature.merged' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await mergeFeature(ds, s.organizationId, request.params.id, request.body.intoFeatureId, s.teammateId) };
  });

  app.post('/api/workspace/features/:id/unmerge', {
    schema: { params: idParams, response: { 200: dataOf(featureMergeSchema), 409: errorOf('CONFLICT: the feature is not merged') } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'unmergeFeature',
      summary: 'Undo a merge: both features as they were before it; feature.unmerged' },
  }, async (request) => ({ data: await unmergeFeature(ds, sessionPrincipal(request).organizationId, request.params.id) }));

  app.post('/api/workspace/features/:id/not-duplicate', {
    schema: { params: idParams, body: notDuplicateBody, response: { 200: dataOf(notDuplicateSchema), 404: NOT_FOUND_OR_OTHER_PRODUCT } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'markFeatureNotDuplicate',
      summary: 'Keep this pair out of each other\'s similar features for good' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await markNotDuplicate(ds, s.organizationId, request.params.id, request.body.featureId, s.teammateId) };
  });
}
