import { array, boolean, number, object, string } from 'yup';
import { FEATURE_STATES } from '../../db/entities/feature';
import { setFollow, vote, withdrawVote } from '../../db/customer-loop/features';
import { assertPublicFeature, publicFeature, publicRoadmap, voterState } from '../../db/customer-loop/roadmap';
import { notFound } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { endUserOf } from '../plugins/product-tenant';
import { pathParams } from '../plugins/path-params';
import { RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf, named, timestamp } from '../plugins/responses';

const productParams = pathParams('productId');
const featureParams = pathParams('productId', 'featureId');
// A PUT may come without a body (fetch with no content): Fastify hands the schema null.
const voteBody = strictObject({ follow: boolean() }).nullable().default(undefined);
const withdrawQuery = strictObject({ follow: string().oneOf(['false'] as const) });

const releaseRef = object({ id: string().required(), title: string().required(), publishedAt: timestamp().required() });

const boardFeature = object({
  id: string().required(),
  title: string().required(),
  problem: string().required(),
  state: string().required().oneOf([...FEATURE_STATES]),
  voteCount: number().integer().required(),
  releases: array(releaseRef).defined().meta({ description: 'releases that shipped it, newest first' }),
});

export const publicRoadmapSchema = named('PublicRoadmap', object({
  product: object({ id: string().required(), name: string().required() }).required(),
  features: array(boardFeature).defined().meta({ description: 'features with publicBoard true and not merged, most votes first; never who voted' }),
  releases: array(releaseRef.shape({
    features: array(object({ id: string().required(), title: string().required(), problem: string().required() })).defined(),
  })).defined().meta({ description: 'the newest 100 releases that shipped a public feature, with those features (a merged one as its survivor)' }),
}));

const publicFeatureSchema = named('PublicFeature', boardFeature.shape({
  mergedFrom: string().nullable().defined().meta({ description: 'the id asked for when that feature was merged into this one; null otherwise' }),
}));

const publicVoteSchema = named('PublicFeatureVote', object({
  featureId: string().required(),
  voted: boolean().required(),
  following: boolean().required(),
  voteCount: number().integer().required(),
}));

const voterSchema = named('RoadmapVoter', object({
  endUserId: string().required(),
  votedFeatureIds: array(string().required()).defined(),
  followedFeatureIds: array(string().required()).defined(),
}));

const publicVote = (r: { featureId: string; voted: boolean; following: boolean; voteCount: number }) =>
  ({ featureId: r.featureId, voted: r.voted, following: r.following, voteCount: r.voteCount });
const missing = errorOf('NOT_FOUND: no such active product, or the feature is not on its public board (or the token is of another product)');

/**
 * The public roadmap (PAGES.md §7, docs/customer-loop.md#public-roadmap): anyone reads the board; an end user
 * with a token the product minted votes and follows, on public-board features of the token's product only.
 */
export async function publicRoadmapRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.get('/api/public/roadmap/:productId', {
    schema: { params: productParams, response: { 200: dataOf(publicRoadmapSchema), 404: errorOf('NOT_FOUND: no such active product') } },
    config: { tag: 'customer-loop', operationId: 'getPublicRoadmap', summary: 'The product\'s public board: features by votes (counts only) and the releases ' +
      'that shipped them' },
  }, async (request, reply) => {
    const roadmap = await publicRoadmap(ds, request.params.productId);
    if (!roadmap) throw notFound('product');
    reply.header('cache-control', 'no-cache');
    return { data: roadmap };
  });

  app.get('/api/public/roadmap/:productId/features/:featureId', {
    schema: { params: featureParams, response: { 200: dataOf(publicFeatureSchema),
      404: errorOf('NOT_FOUND: no such active product, or the feature is not on its public board') } },
    config: { tag: 'customer-loop', operationId: 'getPublicFeature', summary: 'One feature of the board by any id it had: a merged feature answers the one ' +
      'it was merged into (mergedFrom)' },
  }, async (request, reply) => {
    const feature = await publicFeature(ds, request.params.productId, request.params.featureId);
    if (!feature) throw notFound('feature');
    reply.header('cache-control', 'no-cache');
    return { data: feature };
  });

  app.get('/api/public/roadmap/:productId/me', {
    schema: { params: productParams, response: { 200: dataOf(voterSchema), 404: missing } },
    config: { tag: 'customer-loop', auth: 'identity', endUserWindow: true, operationId: 'getRoadmapVoter',
      summary: 'The end user\'s own votes and follows on the board (end-user token; reading keeps the nonce)' },
  }, async (request, reply) => {
    const who = endUserOf(request);
    if (who.productId !== request.params.productId) throw notFound('product');
    reply.header('cache-control', 'no-store');
    return { data: await voterState(ds, who.productId, who.endUserId) };
  });

  app.put('/api/public/roadmap/:productId/features/:featureId/vote', {
    schema: { params: featureParams, body: voteBody, response: { 200: dataOf(publicVoteSchema), 404: missing } },
    config: { tag: 'customer-loop', auth: 'identity', operationId: 'votePublicFeature',
      summary: 'Vote as the token\'s end user (idempotent); follows too unless follow is false' },
  }, async (request) => {
    const who = endUserOf(request);
    await assertPublicFeature(ds, who, request.params.productId, request.params.featureId);
    return { data: publicVote(await vote(ds, who, request.params.featureId, who.endUserId, request.body?.follow !== false)) };
  });

  app.delete('/api/public/roadmap/:productId/features/:featureId/vote', {
    schema: { params: featureParams, querystring: withdrawQuery, response: { 200: dataOf(publicVoteSchema), 404: missing } },
    config: { tag: 'customer-loop', auth: 'identity', operationId: 'withdrawPublicFeatureVote',
      summary: 'Withdraw the end user\'s vote; ?follow=false also stops following' },
  }, async (request) => {
    const who = endUserOf(request);
    await assertPublicFeature(ds, who, request.params.productId, request.params.featureId);
    const follow = request.query.follow === 'false' ? false : undefined;
    return { data: publicVote(await withdrawVote(ds, who, request.params.featureId, who.endUserId, follow)) };
  });

  for (const [method, following] of [['PUT', true], ['DELETE', false]] as const) {
    app.route({
      method, url: '/api/public/roadmap/:productId/features/:featureId/follow',
      schema: { params: featureParams, response: { 200: dataOf(publicVoteSchema), 404: missing } },
      config: {
        tag: 'customer-loop', auth: 'identity', operationId: following ? 'followPublicFeature' : 'unfollowPublicFeature',
        summary: following ? 'Follow a feature (hear of its release in the inbox) without voting' : 'Stop following; the vote stays',
      },
      handler: async (request) => {
        const who = endUserOf(request);
        await assertPublicFeature(ds, who, request.params.productId, request.params.featureId);
        return { data: publicVote(await setFollow(ds, who, request.params.featureId, who.endUserId, following)) };
      },
    });
  }
}
