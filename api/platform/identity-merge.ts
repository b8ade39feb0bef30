import { FastifyInstance } from 'fastify';
import { string } from 'yup';
import { mergeEndUsers } from '../../db/platform/end-users';
import type { AppDeps } from '../app';
import { endUserOf } from '../plugins/product-tenant';
import { strictObject } from '../plugins/validation';
import { dataOf, errorOf } from '../plugins/responses';
import { identityMergeSchema } from './schemas';

/**
 * Anonymous ids are minted by the SDK as `anon_` plus at least 16 random characters: unguessable, so
 * that a signed user can only claim the anonymous history their own device carried.
 */
export const ANONYMOUS_ID = /^anon_[A-Za-z0-9_-]{16,100}$/;

const mergeBody = strictObject({
  anonymousId: string().required().matches(ANONYMOUS_ID, 'must be an anonymous id: anon_ and 16 to 100 random characters'),
}).required();

export async function identityMergeRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post<{ Body: { anonymousId: string } }>('/api/v1/identity/merge', {
    schema: { body: mergeBody, response: { 200: dataOf(identityMergeSchema), 404: errorOf('NOT_FOUND: no such anonymous end user in this product') } },
    config: { auth: 'identity', operationId: 'mergeIdentity', summary: 'Move an anonymous end user\'s history onto the signed end user (same product)' },
  }, async (request) => {
    const me = endUserOf(request);
    return { data: await mergeEndUsers(deps.dataSource, me, request.body.anonymousId, me.endUserId) };
  });
}
