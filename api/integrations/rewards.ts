import { object, string } from 'yup';
import {
  REWARD_KINDS, REWARD_STATES, UNLOCK_KEY_PATTERN, approveReward, cancelReward, confirmReward, createReward, listRewards,
} from '../../db/integrations/rewards';
import type { AppDeps } from '../app-deps';
import { HUMAN_DECISION, OWNERS_AND_ADMINS, keyPrincipal, sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, pageOf, timestamp, errorOf } from '../plugins/responses';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const rewardSchema = object({
  id: string().required(),
  productId: string().required(),
  proofItemId: string().nullable().defined(),
  personRef: string().nullable().defined(),
  endUserId: string().nullable().defined(),
  kind: string().oneOf([...REWARD_KINDS]).required(),
  description: string().required(),
  unlockKey: string().nullable().defined(),
  state: string().oneOf([...REWARD_STATES]).required(),
  createdAt: timestamp().required(),
  approvedAt: timestamp().nullable().defined(),
  approvedBy: string().nullable().defined(),
  fulfilledAt: timestamp().nullable().defined(),
});

const createBody = strictObject({
  productId: string().required().max(100),
  kind: string().required().oneOf([...REWARD_KINDS]),
  description: string().required().min(1).max(500),
  unlockKey: string().matches(UNLOCK_KEY_PATTERN, 'must be 1 to 100 of A-Z a-z 0-9 . _ : -'),
  proofItemId: string().max(100),
  personRef: string().min(1).max(200),
  endUserId: string().min(1).max(200),
}).required();

const listQuery = strictObject({ ...pageQuery, state: string().oneOf([...REWARD_STATES]), kind: string().oneOf([...REWARD_KINDS]) });

/** Participation rewards: people create, approve and cancel; the product confirms a feature unlock with a key. */
export async function rewardRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.post('/api/v1/proof/rewards/:id/confirm', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no reward with this id in the workspace (the key\'s product for confirm)'),
      409: errorOf('CONFLICT: the reward is not a feature unlock waiting for confirmation (another kind, pending, issued or cancelled)'),
      200: dataOf(rewardSchema) } },
    config: {
      tag: 'integrations', ...PROOF_API_ROUTE,
      auth: 'key', scope: 'service:proof:write', operationId: 'confirmReward',
      summary: 'The product switched a feature unlock on; a repeat answers the same fulfilled reward',
    },
  }, async (request) => ({ data: await confirmReward(ds, productTenant(request), request.params.id, keyPrincipal(request).id) }));

  app.get('/api/workspace/proof/rewards', {
    schema: { querystring: listQuery, response: { 200: pageOf(rewardSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'listRewards', summary: 'Rewards of the workspace, newest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listRewards(ds, sessionPrincipal(request).organizationId, filter, { limit, cursor });
  });

  app.post('/api/workspace/proof/rewards', {
    schema: { body: createBody, response: { 404: errorOf('NOT_FOUND: productId or proofItemId is not one of this workspace'), 201: dataOf(rewardSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'createReward',
      summary: 'A pending participation reward; never conditioned on rating or sentiment' },
  }, async (request, reply) => reply.code(201).send({ data: await createReward(ds, sessionPrincipal(request).organizationId, request.body) }));

  app.post('/api/workspace/proof/rewards/:id/approve', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no reward with this id in the workspace (the key\'s product for confirm)'),
      409: errorOf('CONFLICT: the reward is not pending (already issued, unlock pending, fulfilled or cancelled)'), 200: dataOf(rewardSchema) } },
    config: { tag: 'integrations', ...HUMAN_DECISION, operationId: 'approveReward', summary: 'A person approves the participation: issued, or unlock pending' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await approveReward(ds, s.organizationId, request.params.id, s.teammateId) };
  });

  app.post('/api/workspace/proof/rewards/:id/cancel', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no reward with this id in the workspace (the key\'s product for confirm)'),
      409: errorOf('CONFLICT: the reward is already issued, fulfilled or cancelled'), 200: dataOf(rewardSchema) } },
    config: { tag: 'integrations', ...HUMAN_DECISION, operationId: 'cancelReward', summary: 'Cancel a pending reward' },
  }, async (request) => {
    const s = sessionPrincipal(request);
    return { data: await cancelReward(ds, s.organizationId, request.params.id, s.teammateId) };
  });
}
