import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { createServiceKey } from '../../db/platform/service-keys';
import { Tenant, asTeammate, call, withKey } from './fixtures';
import { ctx } from './root-hooks';

export const LOOP_SCOPES = [
  'service:signals:read', 'service:signals:write', 'service:threads:read', 'service:threads:write', 'service:features:write',
];

export function signalBody(extra: Record<string, unknown> = {}) {
  return {
    endUserId: 'user-1', title: 'Export is slow', body: 'Exports take minutes for big projects.',
    idempotencyKey: `idem-${randomBytes(8).toString('hex')}`, ...extra,
  };
}

export async function postSignal(tenant: Tenant, extra: Record<string, unknown> = {}, app?: FastifyInstance) {
  const res = await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/signals', payload: signalBody(extra) }), app);
  if (res.statusCode !== 201) throw new Error(`signal intake failed: ${res.body}`);
  return res.json().data as { id: string; threadId: string };
}

export function teammate(session: { cookie: string; csrfToken: string }, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
  return asTeammate(session, { method, url, ...(payload ? { payload } : {}) });
}

export { eventually } from './fixtures';

export async function outboxEvents(organizationId: string, type: string): Promise<Array<{ payload: Record<string, unknown> }>> {
  return ctx.dataSource.query(
    'SELECT payload FROM outbox_events WHERE organization_id = $1 AND event_type = $2 ORDER BY created_at', [organizationId, type]);
}

/** A second key of the tenant's product with other scopes. */
export async function keyFor(tenant: Tenant, scopes: string[]): Promise<string> {
  const issued = await createServiceKey(ctx.dataSource, {
    organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production', scopes,
  });
  return issued.secret;
}
