import { boolean, number, object, string } from 'yup';
import { ScoringSettings, recordValueEvent } from '../../db/integrations/value-events';
import { getOpportunity, listOpportunities } from '../../db/integrations/opportunities';
import { OPPORTUNITY_STATES } from '../../db/entities/proof-opportunity';
import { EVENT_ID_PATTERN, VALUE_EVENT_TYPES } from '../../db/rules/value-events';
import { Config } from '../../runtime/config';
import type { AppDeps } from '../app-deps';
import { keyPrincipal } from '../plugins/auth';
import { candidateSchema as opportunitySchema } from '../collection/collection-schemas';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, errorOf, pageOf, timestamp } from '../plugins/responses';
import { openObject, pageQuery, RouteApp, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

/** The body of POST /api/v1/proof/events and of every hook call; per-type rules are in db/rules/value-events.ts. */
export const valueEventBody = strictObject({
  eventId: string().required().matches(EVENT_ID_PATTERN, 'must be 8 to 200 of A-Z a-z 0-9 . _ : -'),
  type: string().required().oneOf([...VALUE_EVENT_TYPES]),
  occurredAt: string().required().meta({ format: 'date-time' }),
  personRef: string().min(1).max(200),
  endUserId: string().min(1).max(200),
  properties: openObject().meta({ description: '≤ 50 keys; values string ≤ 1000, number, boolean or null; required keys per type' }),
}).required();

export const valueEventSchema = object({
  id: string().required(),
  eventId: string().required(),
  type: string().oneOf([...VALUE_EVENT_TYPES]).required(),
  occurredAt: timestamp().required(),
  personRef: string().nullable().defined(),
  endUserId: string().nullable().defined(),
  properties: openObject().defined(),
  origin: object({ type: string().oneOf(['api', 'hook', 'payment'] as const).required(), id: string().nullable().defined() }).required(),
  receivedAt: timestamp().required(),
  strength: number().integer().required(),
  momentId: string().nullable().defined(),
  opportunityId: string().nullable().defined(),
  suppressedReason: string().oneOf(['opted_out', 'open_opportunity', 'cooldown'] as const).nullable().defined(),
  replayed: boolean().required(),
});

const opportunityQuery = strictObject({
  ...pageQuery,
  state: string().oneOf([...OPPORTUNITY_STATES]),
  personRef: string().max(200),
});

export function scoringSettings(config: Config): ScoringSettings {
  return {
    momentThreshold: config.proofMomentThreshold,
    cooldownDays: config.proofAskCooldownDays,
    opportunityTtlDays: config.proofOpportunityTtlDays,
  };
}

/** Value events from a key, and the ask candidates they open. Nothing here sends an ask. */
export async function valueEventRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const settings = scoringSettings(deps.config);

  app.post('/api/v1/proof/events', {
    schema: { body: valueEventBody, response: { 200: dataOf(valueEventSchema), 201: dataOf(valueEventSchema) } },
    config: {
      tag: 'integrations', ...PROOF_API_ROUTE,
      auth: 'key', scope: 'service:proof:write', operationId: 'recordValueEvent',
      summary: 'Report a verified value event; stored once per eventId, scored into moments and ask candidates',
    },
  }, async (request, reply) => {
    const origin = { type: 'api' as const, id: keyPrincipal(request).id };
    const { event, replayed } = await recordValueEvent(ds, productTenant(request), request.body, origin, settings);
    return reply.code(replayed ? 200 : 201).send({ data: event });
  });

  app.get('/api/v1/proof/opportunities', {
    schema: { querystring: opportunityQuery, response: { 200: pageOf(opportunitySchema) } },
    config: { tag: 'integrations', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:read', operationId: 'listOpportunities',
      summary: 'Ask candidates, newest first' },
  }, async (request) => {
    const { limit, cursor, ...filter } = request.query;
    return listOpportunities(ds, { productId: productTenant(request).productId }, filter, { limit, cursor });
  });

  app.get('/api/v1/proof/opportunities/:id', {
    schema: { params: idParams, response: { 404: errorOf('NOT_FOUND: no ask candidate with this id in the key\'s product'), 200: dataOf(opportunitySchema) } },
    config: { tag: 'integrations', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:read', operationId: 'getOpportunity', summary: 'One ask candidate' },
  }, async (request) => ({ data: await getOpportunity(ds, productTenant(request).productId, request.params.id) }));
}
