import { answerWithWrite } from '../plugins/idempotency';
import { string } from 'yup';
import { generateQuoteCard, getAsset } from '../../db/proof/proof-assets';
import { PROOF_CHANNELS } from '../../db/rules/proof-eligibility';
import { QUOTE_CARD_FORMATS } from '../../db/rules/proof-quote-card';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { dataOf, errorOf } from '../plugins/responses';
import { assetSchema } from './schemas';
import { idParams } from '../plugins/path-params';
import { RouteApp, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const color = string().matches(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour');
const generateBody = strictObject({
  proofItemId: string().required().max(100),
  versionId: string().max(100),
  format: string().oneOf(Object.keys(QUOTE_CARD_FORMATS) as (keyof typeof QUOTE_CARD_FORMATS)[]),
  channel: string().oneOf([...PROOF_CHANNELS]),
  excerpt: string().min(1).max(1000),
  theme: strictObject({ background: color, foreground: color, accent: color }).default(undefined),
}).required();

export async function proofAssetRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  app.post('/api/v1/proof/assets/generate', {
    schema: {
      body: generateBody,
      response: {
        201: dataOf(assetSchema),
        404: errorOf('NOT_FOUND: no such proof item or version'),
        422: errorOf('NOT_ELIGIBLE: details carry the evaluator\'s reasons'),
      },
    },
    config: {
      tag: 'proof', ...PROOF_API_ROUTE,
      operationId: 'generateQuoteCard',
      auth: 'key', scope: 'service:proof:write', idempotency: 'optional',
      summary: 'Deterministic SVG quote card saved as a draft asset; 422 NOT_ELIGIBLE with the evaluator\'s reasons',
    },
  }, async (request, reply) => {
    const key = keyPrincipal(request);
    const scope = productTenant(request);
    return reply.code(201).send({ data: await generateQuoteCard(deps.dataSource, scope, request.body, { type: 'service_key', id: key.id },
      answerWithWrite(request, 201)) });
  });

  app.get('/api/v1/proof/assets/:id', {
    schema: { params: idParams, response: { 200: dataOf(assetSchema), 409: errorOf('CONFLICT: the asset\'s source is no longer usable') } },
    config: { tag: 'proof', ...PROOF_API_ROUTE, auth: 'key', scope: 'service:proof:read', operationId: 'getAsset',
      summary: 'One asset with its lineage, approval state and file' },
  }, async (request) => {
    return { data: await getAsset(deps.dataSource, productTenant(request), request.params.id) };
  });
}
