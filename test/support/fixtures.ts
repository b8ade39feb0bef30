import { randomBytes } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { signIdentityToken } from '../../api/plugins/identity-token';
import { Product } from '../../db/entities';
import { createServiceKey } from '../../db/platform/service-keys';
import { createSession } from '../../db/platform/sessions';
import { createOrganization, createProduct, createTeammate } from '../../db/platform/tenancy';
import { ctx } from './root-hooks';

export interface Tenant {
  organizationId: string;
  product: Product;
  /** A key with the given scopes, for the production environment. */
  key: string;
  keyId: string;
  owner: { id: string; cookie: string; csrfToken: string };
}

export async function sessionFor(organizationId: string, role: 'owner' | 'admin' | 'member') {
  const teammate = await createTeammate(ctx.dataSource, {
    organizationId, email: `${role}-${randomBytes(4).toString('hex')}@example.com`, role,
  });
  const session = await createSession(ctx.dataSource, teammate.id, 1);
  return { id: teammate.id, cookie: session.cookie, csrfToken: session.csrfToken };
}

export async function createTenant(scopes: string[] = ['service:proof:read']): Promise<Tenant> {
  const org = await createOrganization(ctx.dataSource, { name: 'Test workspace', sponsored: true });
  const product = await createProduct(ctx.dataSource, { organizationId: org.id, name: 'Test product' });
  const issued = await createServiceKey(ctx.dataSource, {
    organizationId: org.id, productId: product.id, environment: 'production', scopes,
  });
  return {
    organizationId: org.id, product, key: issued.secret, keyId: issued.key.id, owner: await sessionFor(org.id, 'owner'),
  };
}

export function endUserToken(product: Product, claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  return signIdentityToken(product.identityKeyId, product.identitySecret, {
    sub: 'user-1', iat: now, exp: now + 120, nonce: `nonce-${randomBytes(8).toString('hex')}`, ...claims,
  });
}

export function withKey(key: string, opts: InjectOptions): InjectOptions {
  return { ...opts, headers: { ...opts.headers, authorization: `Bearer ${key}` } };
}

export function asTeammate(session: { cookie: string; csrfToken: string }, opts: InjectOptions): InjectOptions {
  return { ...opts, headers: { ...opts.headers, cookie: session.cookie, 'x-csrf-token': session.csrfToken } };
}

export async function call(opts: InjectOptions, app: FastifyInstance = ctx.app): Promise<LightMyRequestResponse> {
  return app.inject(opts);
}

/** Waits for the next minute when fewer than `seconds` are left in this one, so a burst meets one rate window. */
export async function withinOneMinuteWindow(seconds = 5): Promise<void> {
  const secondsLeft = 60 - new Date().getUTCSeconds();
  if (secondsLeft < seconds) await new Promise((r) => setTimeout(r, secondsLeft * 1000 + 100));
}

/** Puts an app on a free loopback port for tests that need real HTTP; answers its base URL. */
export async function listenOnLoopback(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export function errorCode(res: LightMyRequestResponse): string | undefined {
  return res.json<{ error?: { code: string } }>().error?.code;
}

/** Polls `check` until it answers a value (anything but undefined, null or false); fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A workflow's handle once every command the API committed for it has reached Temporal. */
export async function settledHandle(workflowId: string) {
  await eventually(async () => {
    const pending: unknown[] = await ctx.dataSource.query(
      'SELECT 1 FROM workflow_commands WHERE ordering_key = $1 AND processed_at IS NULL LIMIT 1', [workflowId],
    );
    return pending.length === 0;
  });
  return ctx.temporal.workflow.getHandle(workflowId);
}
