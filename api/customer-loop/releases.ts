import { array, boolean, string } from 'yup';
import { publishRelease, recordReceipt } from '../../db/customer-loop/releases';
import { OWNERS_AND_ADMINS, sessionPrincipal } from '../plugins/auth';
import type { AppDeps } from '../app-deps';
import { endUserOf } from '../plugins/product-tenant';
import { idParams } from '../plugins/path-params';
import { RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf } from '../plugins/responses';
import { releaseReceiptSchema, releaseSchema } from './schemas';

const releaseBody = strictObject({
  productId: string().required().max(100),
  title: string().required().min(1).max(200),
  featureIds: array(string().required().max(100)).required().min(1).max(50),
}).required();

const confirmationBody = strictObject({
  fixed: boolean().required(),
  comment: string().max(2_000),
}).required();

/** Releases: teammates publish them; end users confirm whether a release fixed their problem. */
export async function releaseRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.post('/api/workspace/releases', {
    schema: { body: releaseBody, response: { 201: dataOf(releaseSchema), 404: errorOf('NOT_FOUND: no such product, or a feature is not of it') } },
    config: { tag: 'customer-loop', ...OWNERS_AND_ADMINS, operationId: 'publishRelease',
      summary: 'Publish a release; voters and followers hear of it in their inbox, and those the team may ask get a draft personal request' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    return reply.code(201).send({ data: await publishRelease(ds, {
      ...request.body, organizationId: s.organizationId, teammateId: s.teammateId, cooldownDays: deps.config.proofAskCooldownDays,
    }) });
  });

  app.post('/api/v1/releases/:id/confirmation', {
    schema: { params: idParams, body: confirmationBody, response: { 200: dataOf(releaseReceiptSchema) } },
    config: { tag: 'customer-loop', auth: 'identity', operationId: 'confirmRelease',
      summary: 'The signed end user says whether the release fixed their problem' },
  }, async (request) => {
    return { data: await recordReceipt(ds, endUserOf(request), request.params.id, request.body) };
  });
}
