import { randomBytes } from 'node:crypto';
import { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createServiceKey } from '../../db/platform/service-keys';
import { Tenant, asTeammate, call, createTenant, withKey } from './fixtures';
import { ctx } from './root-hooks';

export const INTEGRATION_SCOPES = [
  'service:proof:read', 'service:proof:read_private', 'service:proof:write', 'service:sources:read', 'service:proof:submissions:write',
];

export interface IntegrationTenant extends Tenant {
  /** Same product: proof:read and sources:read only (no read_private). */
  readKey: string;
}

export async function createIntegrationTenant(): Promise<IntegrationTenant> {
  const tenant = await createTenant(INTEGRATION_SCOPES);
  const read = await createServiceKey(ctx.dataSource, {
    organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production',
    scopes: ['service:proof:read', 'service:sources:read'],
  });
  return { ...tenant, readKey: read.secret };
}

export function uniqueId(prefix = 'evt'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export function valueEvent(overrides: Record<string, unknown> = {}) {
  return {
    eventId: uniqueId(), type: 'milestone', occurredAt: new Date().toISOString(), personRef: uniqueId('cus'),
    properties: { name: 'first_report_shared' }, ...overrides,
  };
}

export async function postValueEvent(tenant: Tenant, body: object, app: FastifyInstance = ctx.app): Promise<LightMyRequestResponse> {
  return call(withKey(tenant.key, { method: 'POST', url: '/api/v1/proof/events', payload: body }), app);
}

export function asOwner(tenant: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: object) {
  return call(asTeammate(tenant.owner, { method, url, ...(payload === undefined ? {} : { payload }) }));
}

export async function ledgerOfProduct(productId: string, type: string): Promise<Array<{ id: string; properties: Record<string, unknown> }>> {
  return ctx.dataSource.query(
    `SELECT id, properties FROM proof_events WHERE product_id = $1 AND event_type = $2 ORDER BY created_at, id`, [productId, type]);
}

export async function outboxOf(productId: string, type: string): Promise<Array<{ id: string; payload: Record<string, unknown> }>> {
  return ctx.dataSource.query(`SELECT id, payload FROM outbox_events WHERE product_id = $1 AND event_type = $2`, [productId, type]);
}
