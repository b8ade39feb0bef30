import { object, string } from 'yup';
import { createKeyRequest } from '../../db/collection/key-requests';
import { captureReply } from '../../db/collection/request-replies';
import { viewKeyRequest, viewRequest } from '../../db/collection/requests';
import { REQUEST_CHANNELS } from '../../db/entities/proof-request';
import type { AppDeps } from '../app-deps';
import { keyPrincipal, sessionPrincipal } from '../plugins/auth';
import { idParams } from '../plugins/path-params';
import { productTenant } from '../plugins/product-tenant';
import { dataOf, errorOf } from '../plugins/responses';
import { isoDateTime, RouteApp, strictObject } from '../plugins/validation';
import { keyRequestSchema, requestSchema, writers } from './collection-schemas';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

const createBody = strictObject({
  channel: string().oneOf([...REQUEST_CHANNELS]).required(),
  recipientId: string().min(1).max(200),
  opportunityId: string().max(100),
  formId: string().max(100),
  message: string().max(4000),
}).required();

const replyBody = strictObject({
  text: string().required().min(1).max(10000),
  receivedAt: isoDateTime().required(),
}).required();

/**
 * Story requests from an AI draft (docs/ai.md#requests-and-reply-capture): a key makes a draft in the one `proof_requests` table,
 * a person sends it (`POST /api/proof/collect/requests/{id}`), and a person captures the e-mail reply.
 */
export async function keyRequestRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;

  app.post('/api/v1/proof/requests', {
    schema: {
      body: createBody,
      response: {
        201: dataOf(keyRequestSchema),
        404: errorOf('NOT_FOUND: no such opportunity or form (details name the path)'),
        409: errorOf('CONFLICT: the product has no live flow, the form is not live, the opportunity was decided, or the recipient opted out (details.reason ' +
          'opted_out)'),
        422: errorOf('ASK_POLICY_FAILED: the message gates reviews or conditions a reward on sentiment'),
      },
    },
    config: {
      tag: 'collection', ...PROOF_API_ROUTE,
      auth: 'key', scope: 'service:proof:write', idempotency: 'optional', operationId: 'createProofRequestDraft',
      summary: 'A draft story request (from an AI draft); nothing is sent, no link secret is issued and the recipient is answered by id only: a person sends ' +
        'it from the workspace',
    },
  }, async (request, reply) => {
    const made = await createKeyRequest(ds, productTenant(request), keyPrincipal(request).id, request.body);
    return reply.code(201).send({ data: viewKeyRequest(made) });
  });

  app.post('/api/workspace/proof/requests/:id/replies', {
    schema: {
      params: idParams,
      body: replyBody,
      response: {
        201: dataOf(object({ request: requestSchema.required(), proofItemId: string().required(), versionId: string().required() })),
        409: errorOf('CONFLICT: the request is not sent or reminded'),
      },
    },
    config: {
      tag: 'collection',
      ...writers, operationId: 'captureRequestReply',
      summary: 'Capture a customer\'s e-mail reply to a sent request: a submitted story with no consent (renders nowhere), the request responded',
    },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const captured = await captureReply(ds, { organizationId: s.organizationId, teammateId: s.teammateId }, request.params.id, request.body);
    return reply.code(201).send({ data: { request: viewRequest(captured.request), proofItemId: captured.proofItemId, versionId: captured.versionId } });
  });
}
