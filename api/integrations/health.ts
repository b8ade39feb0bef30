import { object, string } from 'yup';
import { HEALTH_CHECKS, openFindings, requestHealthRun } from '../../db/integrations/health';
import { assertOwnProduct } from '../../db/collection/scope';
import type { AppDeps } from '../app-deps';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import { UNKNOWN_PRODUCT_ID, dataOf, pageOf, timestamp } from '../plugins/responses';
import { openObject, pageQuery, RouteApp, strictObject } from '../plugins/validation';

const findingSchema = object({
  id: string().required(),
  productId: string().required(),
  check: string().oneOf([...HEALTH_CHECKS]).required(),
  proofItemId: string().nullable().defined(),
  placementId: string().nullable().defined(),
  properties: openObject().required(),
  firstSeenAt: timestamp().required(),
  lastSeenAt: timestamp().required(),
});
const runBody = strictObject({ productId: string().required().max(100) }).required();
const listQuery = strictObject({ ...pageQuery, productId: string().max(100) });

/** The health checks a person can read and run now; the workflow `proof-health/<productId>` runs them on its interval. */
export async function healthCheckRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.post('/api/workspace/proof/health/run', {
    schema: { body: runBody, response: { 404: UNKNOWN_PRODUCT_ID, 202: dataOf(object({ workflowId: string().required(), productId: string().required() })) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'runProofHealth', summary: 'Run the product\'s health checks now' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    await assertOwnProduct(ds, s.organizationId, request.body.productId);
    const workflowId = await requestHealthRun(ds, { organizationId: s.organizationId, productId: request.body.productId }, deps.config.proofHealthIntervalMs);
    return reply.code(202).send({ data: { workflowId, productId: request.body.productId } });
  });

  app.get('/api/workspace/proof/health', {
    schema: { querystring: listQuery, response: { 200: pageOf(findingSchema) } },
    config: { tag: 'integrations', ...OWNERS_AND_ADMINS, operationId: 'listProofHealthFindings', summary: 'Open health findings, newest first' },
  }, async (request) => {
    const { limit, cursor, productId } = request.query;
    return openFindings(ds, sessionPrincipal(request).organizationId, { limit, cursor }, productId);
  });
}
