import { InjectOptions, LightMyRequestResponse } from 'fastify';
import { Tenant, call, createTenant, endUserToken, withKey } from './fixtures';

export const ROOM_SCOPES = ['service:rooms:read', 'service:rooms:write'];

export async function roomsTenant(): Promise<Tenant> {
  return createTenant(ROOM_SCOPES);
}

/** A request as the end user `sub` of the tenant's product, with a fresh token (a write consumes its nonce). */
export function asUser(tenant: Tenant, sub: string, opts: InjectOptions): Promise<LightMyRequestResponse> {
  return call({ ...opts, headers: { ...opts.headers, authorization: `Bearer ${endUserToken(tenant.product, { sub })}` } });
}

export function asKey(tenant: Tenant, opts: InjectOptions): Promise<LightMyRequestResponse> {
  return call(withKey(tenant.key, opts));
}

export async function openRoom(tenant: Tenant, sub: string, body: Record<string, unknown> = {}): Promise<{ id: string; headSeq: number }> {
  const res = await asUser(tenant, sub, { method: 'POST', url: '/api/v1/rooms', payload: { title: 'Export pains', ...body } });
  if (res.statusCode !== 201) throw new Error(`room not created: ${res.body}`);
  return res.json().data;
}

export async function say(tenant: Tenant, sub: string, roomId: string, body: string): Promise<{ id: string; seq: number }> {
  const res = await asUser(tenant, sub, { method: 'POST', url: `/api/v1/rooms/${roomId}/messages`, payload: { body } });
  if (res.statusCode !== 201) throw new Error(`message not posted: ${res.body}`);
  return res.json().data;
}
