import { boolean, number, string } from 'yup';
import { FEATURE_STATES } from '../../db/entities/feature';
import { getFeature, listFeatures, vote, withdrawVote } from '../../db/customer-loop/features';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../db/pagination';
import type { AppDeps } from '../app-deps';
import { productTenant } from '../plugins/product-tenant';
import { idParams } from '../plugins/path-params';
import { RouteApp, strictObject } from '../plugins/validation';
import { dataOf, pageOf } from '../plugins/responses';
import { featureSchema, featureWithEvidenceSchema, voteSchema } from './schemas';

const listQuery = strictObject({
  limit: number().integer().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  state: string().oneOf([...FEATURE_STATES]),
  publicBoard: string().oneOf(['true', 'false'] as const),
});

const voteBody = strictObject({
  endUserId: string().required().min(1).max(200),
  follow: boolean(),
}).required();

export async function featureRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/v1/features', {
    schema: { querystring: listQuery, response: { 200: pageOf(featureSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:features:read', operationId: 'listFeatures',
      summary: 'Features of the product by score, highest first' },
  }, async (request) => ({ data: await listFeatures(ds, productTenant(request).productId, request.query), nextCursor: null }));

  app.get('/api/v1/features/:id', {
    schema: { params: idParams, response: { 200: dataOf(featureWithEvidenceSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:features:read', operationId: 'getFeature', summary: 'One feature with its linked evidence' },
  }, async (request) => ({ data: await getFeature(ds, productTenant(request).productId, request.params.id) }));

  app.post('/api/v1/features/:id/votes', {
    schema: { params: idParams, body: voteBody, response: { 200: dataOf(voteSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:features:write', operationId: 'voteFeature',
      summary: 'Vote (idempotent per end user); follows unless follow is false' },
  }, async (request) => {
    const { endUserId, follow } = request.body;
    return { data: await vote(ds, productTenant(request), request.params.id, endUserId, follow !== false) };
  });

  app.delete('/api/v1/features/:id/votes', {
    schema: { params: idParams, body: voteBody, response: { 200: dataOf(voteSchema) } },
    config: { tag: 'customer-loop', auth: 'key', scope: 'service:features:write', operationId: 'withdrawFeatureVote',
      summary: 'Withdraw a vote; follow:false also stops following' },
  }, async (request) => {
    const { endUserId, follow } = request.body;
    return { data: await withdrawVote(ds, productTenant(request), request.params.id, endUserId, follow) };
  });
}
