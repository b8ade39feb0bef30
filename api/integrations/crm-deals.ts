import { array, number, object, string } from 'yup';
import { influenceReport, pushDeals } from '../../db/integrations/crm-deals';
import { DEAL_FORMATS } from '../../db/rules/crm-deals';
import type { AppDeps } from '../app-deps';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';
import { dataOf } from '../plugins/responses';
import { openObject, RouteApp, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const pushBody = strictObject({
  format: string().required().oneOf([...DEAL_FORMATS]),
  deals: array(openObject().required()).required().min(1).max(100),
}).required();

const counts = object({ open: number().integer().required(), won: number().integer().required(), lost: number().integer().required() });
const wonAmount = array(object({ currency: string().required(), amount: number().required() })).defined();

const pushResult = object({
  received: number().integer().required(),
  created: number().integer().required(),
  updated: number().integer().required(),
  unchanged: number().integer().required(),
  stale: number().integer().required(),
  deals: array(object({
    externalId: string().required(), dealId: string().required(),
    status: string().oneOf(['open', 'won', 'lost'] as const).required().meta({ description: 'the deal\'s status as stored after this push' }),
    outcome: string().oneOf(['created', 'updated', 'unchanged', 'stale'] as const).required().meta({ description: 'what this push did to the deal' }),
    unknownProofItemIds: array(string().defined()).defined(),
  })).defined(),
});

const influence = object({
  items: array(object({ proofItemId: string().required(), deals: counts.required(), wonAmount, dealIds: array(string().defined()).defined() })).defined(),
  totals: object({ items: number().integer().required(), deals: counts.required(), wonAmount }).required(),
});

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const influenceQuery = strictObject({
  since: string().matches(DAY, 'must be YYYY-MM-DD'),
  until: string().matches(DAY, 'must be YYYY-MM-DD'),
  status: string().oneOf(['open', 'won', 'lost'] as const),
  proofItemId: string().max(100),
});

/** Deals from a CRM (generic, HubSpot or Salesforce shape) and which approved proof they used. */
export async function crmDealRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.post('/api/v1/proof/crm/deals', {
    schema: { body: pushBody, response: { 200: dataOf(pushResult) } },
    config: { tag: 'integrations', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:write', operationId: 'pushCrmDeals',
      summary: 'Upsert deal records; stale updates are skipped' },
  }, async (request) => ({
    data: await pushDeals(ds, productTenant(request), request.body.format, request.body.deals, keyPrincipal(request).id),
  }));

  app.get('/api/v1/proof/crm/influence', {
    schema: { querystring: influenceQuery, response: { 200: dataOf(influence) } },
    config: { tag: 'integrations', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:read', operationId: 'getCrmInfluence',
      summary: 'Deals touched by each approved, unrevoked proof item' },
  }, async (request) => ({ data: await influenceReport(ds, productTenant(request).productId, request.query) }));
}
