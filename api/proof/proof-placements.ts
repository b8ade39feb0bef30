import { FastifyRequest } from 'fastify';
import { answerWithWrite } from '../plugins/idempotency';
import { array, boolean, mixed, number, object, string } from 'yup';
import { EMBED_ORIGIN, MAX_EMBED_ORIGINS } from '../../db/rules/embed-origins';
import { HOST_CONTEXTS, PLACEMENT_STATES } from '../../db/entities/proof-placement';
import { PLACEMENT_TYPES, PROOF_CHANNELS } from '../../db/rules/proof-eligibility';
import {
  addPlacementItem, archivePlacement, createPlacement, listPlacementItems, listPlacements, publishPlacement, getPlacement, removePlacementItem, updatePlacement,
} from '../../db/proof/proof-placements';
import { Actor } from '../../db/proof/proof-ledger';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { closedList } from './proof-content';
import { idParams, pathParams } from '../plugins/path-params';
import { pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf, pageOf } from '../plugins/responses';
import {
  PLACEMENT_ARCHIVED, placementItemSchema, placementItemWithEngagementSchema, placementReadSchema, placementSchema, publishResultSchema,
  removedPlacementItemSchema,
} from './schemas';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const IDENTITY_FIELDS = ['name', 'company', 'title', 'photo', 'logo', 'location'];

/** A placement's own rules; documented in the README. Unknown rules are refused, not ignored. */
const policySchema = strictObject({
  requireVerified: boolean(),
  excludeIncentivized: boolean(),
  minRating: number().min(0).max(5),
  requiredIdentityFields: array(string().required().oneOf(IDENTITY_FIELDS)).max(6),
  paidUse: boolean(),
}).default(undefined);

/** Free-form, except `allowedOrigins`: the origins that may frame the wall's HTML form (docs/proof.md#the-wall). */
const renderConfigSchema = object({
  allowedOrigins: array(string().required().max(200).matches(EMBED_ORIGIN, 'must be an https origin (http only on a loopback host)'))
    .max(MAX_EMBED_ORIGINS),
}).default(undefined);

const createBody = strictObject({
  name: string().required().min(1).max(200),
  placementType: string().required().oneOf([...PLACEMENT_TYPES]),
  channel: string().required().oneOf([...PROOF_CHANNELS]),
  hostContext: string().oneOf([...HOST_CONTEXTS]),
  locale: string().matches(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP 47 language tag'),
  geography: string().matches(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code'),
  eligibilityPolicy: policySchema,
  renderConfig: renderConfigSchema,
}).required();

const patchBody = strictObject({
  name: string().min(1).max(200),
  state: string().oneOf(['active', 'paused', 'archived'] as const),
  renderConfig: renderConfigSchema,
  eligibilityPolicy: policySchema,
}).test('not-empty', 'send at least one of name, state, renderConfig, eligibilityPolicy', (v) => v == null || Object.keys(v).length > 0)
  .required();

const itemBody = strictObject({
  proofItemId: string().required().max(100),
  versionId: string().max(100),
  position: number().integer().min(0).max(100_000),
}).required();

const listQuery = strictObject({ ...pageQuery, state: string().oneOf([...PLACEMENT_STATES]) });
const readQuery = strictObject({
  expand: mixed().meta({ jsonSchema: { type: 'array', items: { type: 'string', enum: ['items'] }, maxItems: 1 },
    description: 'items: embed the first 50 placed items' }),
});
const publishQuery = strictObject({ dryRun: boolean().default(false) });
const itemParams = pathParams('id', 'itemId');

function scopeOf(request: FastifyRequest) {
  const key = keyPrincipal(request);
  const actor: Actor = { type: 'service_key', id: key.id };
  return { scope: productTenant(request), actor };
}

export async function proofPlacementRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const read = { auth: 'key' as const, scope: 'service:proof:read' };
  const publish = { auth: 'key' as const, scope: 'service:proof:publish', idempotency: 'optional' as const };

  app.get('/api/v1/proof/placements', {
    schema: { querystring: listQuery, response: { 200: pageOf(placementSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'listPlacements',
      summary: 'Placements of the key\'s product, newest first; optional state filter' },
  }, async (request) => {
    const { limit, cursor, state } = request.query;
    return listPlacements(ds, scopeOf(request).scope.productId, state, { limit, cursor });
  });

  app.post('/api/v1/proof/placements', {
    schema: { body: createBody, response: { 201: dataOf(placementSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...publish, operationId: 'createPlacement',
      summary: 'Create a placement (state draft); the product comes from the key' },
  }, async (request, reply) => {
    const { scope, actor } = scopeOf(request);
    return reply.code(201).send({ data: await createPlacement(ds, scope, request.body, actor, answerWithWrite(request, 201)) });
  });

  app.get('/api/v1/proof/placements/:id', {
    schema: { params: idParams, querystring: readQuery, response: { 200: dataOf(placementReadSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'getPlacement',
      summary: 'One placement; expand=items adds the first 50 placed items with their live decision' },
  }, async (request) => {
    const expand = closedList('expand', request.query.expand, ['items'] as const, { max: 1, unique: true });
    return { data: await getPlacement(ds, scopeOf(request).scope, request.params.id, expand.length > 0) };
  });

  app.patch('/api/v1/proof/placements/:id', {
    schema: { params: idParams, body: patchBody, response: { 200: dataOf(placementSchema), 409: PLACEMENT_ARCHIVED } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...publish, operationId: 'updatePlacement',
      summary: 'Change name, state, renderConfig or eligibilityPolicy; renderCacheVersion increases' },
  }, async (request) => {
    const { scope, actor } = scopeOf(request);
    return { data: await updatePlacement(ds, scope, request.params.id, request.body, actor, answerWithWrite(request, 200)) };
  });

  app.delete('/api/v1/proof/placements/:id', {
    schema: { params: idParams, response: { 200: dataOf(placementSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...publish, operationId: 'archivePlacement', summary: 'Archive the placement; its history is kept' },
  }, async (request) => {
    const { scope, actor } = scopeOf(request);
    return { data: await archivePlacement(ds, scope, request.params.id, actor, answerWithWrite(request, 200)) };
  });

  app.get('/api/v1/proof/placements/:id/items', {
    schema: { params: idParams, response: { 200: pageOf(placementItemWithEngagementSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...read, operationId: 'listPlacementItems',
      summary: 'Placed items in position order, each with its live eligibility decision and engagement counts' },
  }, async (request) => listPlacementItems(ds, scopeOf(request).scope, request.params.id));

  app.post('/api/v1/proof/placements/:id/items', {
    schema: { params: idParams, body: itemBody, response: { 201: dataOf(placementItemSchema),
      409: errorOf('CONFLICT: the item is already placed, or the placement is archived') } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...publish, operationId: 'addPlacementItem',
      summary: 'Place an item; the answer carries the current eligibility decision' },
  }, async (request, reply) => {
    const { scope, actor } = scopeOf(request);
    return reply.code(201).send({ data: await addPlacementItem(ds, scope, request.params.id, request.body, actor, answerWithWrite(request, 201)) });
  });

  app.delete('/api/v1/proof/placements/:id/items/:itemId', {
    schema: { params: itemParams, response: { 200: dataOf(removedPlacementItemSchema) } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...publish, operationId: 'removePlacementItem', summary: 'Remove a placed item (the row stays as history)' },
  }, async (request) => {
    const { scope, actor } = scopeOf(request);
    return { data: await removePlacementItem(ds, scope, request.params.id, request.params.itemId, actor, answerWithWrite(request, 200)) };
  });

  app.post('/api/v1/proof/placements/:id/publish', {
    schema: { params: idParams, querystring: publishQuery, response: { 200: dataOf(publishResultSchema), 409: PLACEMENT_ARCHIVED } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, ...publish, operationId: 'publishPlacement',
      summary: 'Publish (state active); ineligible items are excluded and counted; dryRun writes nothing' },
  }, async (request) => {
    const { scope, actor } = scopeOf(request);
    return { data: await publishPlacement(ds, scope, request.params.id, request.query.dryRun, actor, answerWithWrite(request, 200)) };
  });
}
