import { string } from 'yup';
import { anonymousProofOf, mergeEndUsers } from '../db/identity-merge';
import { ANONYMOUS_ID } from '../db/rules/ids';
import { forbidden } from '../runtime/service-error';
import type { AppDeps } from './app-deps';
import { endUserOf } from './plugins/product-tenant';
import { RouteApp, strictObject } from './plugins/validation';
import { dataOf, errorOf } from './plugins/responses';
import { anonymousProofSchema, identityMergeSchema } from './platform/schemas';

const mergeBody = strictObject({
  anonymousId: string().required().matches(ANONYMOUS_ID, 'must be an anonymous id: anon_ and 16 to 100 random characters'),
  // Not required by the schema: a merge without it is the same 403 as one with a wrong proof.
  anonymousProof: string().max(200).meta({
    description: 'the anonymous end user\'s proof (GET /api/v1/identity/anonymous-proof); missing or not matching: 403 FORBIDDEN',
  }),
}).required();

export async function identityMergeRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  app.get('/api/v1/identity/anonymous-proof', {
    schema: {
      response: {
        200: dataOf(anonymousProofSchema),
        403: errorOf('FORBIDDEN: the token\'s end user is not anonymous (anon_...), KEY_AUDIENCE_MISMATCH or PRODUCT_SCOPE_UNAVAILABLE'),
      },
    },
    config: { tag: 'platform', auth: 'identity', operationId: 'getAnonymousProof',
      summary: 'The proof an anonymous end user keeps to merge its history after sign-in' },
  }, async (request) => {
    const me = endUserOf(request);
    if (!ANONYMOUS_ID.test(me.endUserId)) throw forbidden('only an anonymous end user (anon_...) has a merge proof');
    return { data: { anonymousId: me.endUserId, anonymousProof: anonymousProofOf(me.productId, me.endUserId) } };
  });

  app.post('/api/v1/identity/merge', {
    schema: {
      body: mergeBody,
      response: {
        200: dataOf(identityMergeSchema),
        403: errorOf('FORBIDDEN: anonymousProof is missing or does not prove anonymousId in this product (nothing moved), KEY_AUDIENCE_MISMATCH or ' +
          'PRODUCT_SCOPE_UNAVAILABLE'),
        404: errorOf('NOT_FOUND: no such anonymous end user in this product'),
      },
    },
    config: { tag: 'platform', auth: 'identity', operationId: 'mergeIdentity',
      summary: 'Move an anonymous end user\'s history onto the signed end user (same product), with its proof' },
  }, async (request) => {
    const me = endUserOf(request);
    return { data: await mergeEndUsers(deps.dataSource, me, request.body, me.endUserId) };
  });
}
