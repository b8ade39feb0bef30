import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { ServiceKey } from '../../db/entities';
import { createServiceKey, revokeServiceKey, rotateServiceKey } from '../../db/platform/service-keys';
import { createOrganization, setProductActive } from '../../db/platform/tenancy';
import { Tenant, call, createTenant, endUserToken, errorCode, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const WHOAMI = { method: 'GET' as const, url: '/api/v1/auth/whoami' };

describe('service key authentication', () => {
  let tenant: Tenant;
  let app: FastifyInstance;

  before(async () => {
    tenant = await createTenant(['service:signals:read', 'service:proof:read']);
    // A product route that needs a scope: the guard under test is the real one every route uses.
    app = await ctx.buildApp({}, (a) => {
      a.get('/api/v1/signals-probe', { config: { auth: 'key', scope: 'service:signals:write' } }, async () => ({ data: 'ok' }));
      a.get('/api/v1/proof/probe', { config: { auth: 'key', scope: 'service:proof:read' } }, async () => ({ data: 'ok' }));
    });
  });

  it('whoami answers the key\'s safe identity, never the key or its digest', async () => {
    const res = await call(withKey(tenant.key, WHOAMI));
    assert.equal(res.statusCode, 200);
    const data = res.json().data;
    assert.equal(data.id, tenant.keyId);
    assert.equal(data.organizationId, tenant.organizationId);
    assert.equal(data.productId, tenant.product.id);
    assert.equal(data.environment, 'production');
    assert.deepEqual(data.scopes, ['service:signals:read', 'service:proof:read']);
    assert.equal(data.prefix, tenant.key.slice(0, 12));
    assert.ok(!res.body.includes(tenant.key), 'the full key must not be echoed');
    const stored = await ctx.dataSource.getRepository(ServiceKey).findOneByOrFail({ id: tenant.keyId });
    assert.ok(!res.body.includes(stored.digest), 'the digest must not be echoed');
    assert.equal(stored.digest.length, 64);
    assert.ok(stored.lastUsedAt, 'use is recorded');
  });

  const invalid: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a Basic credential', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a key one character short', { authorization: `Bearer svk_${'a'.repeat(42)}` }],
    ['a key one character long', { authorization: `Bearer svk_${'a'.repeat(44)}` }],
    ['a key with the wrong prefix', { authorization: `Bearer sk_${'a'.repeat(43)}` }],
    ['an unknown well-formed key', { authorization: `Bearer svk_${'a'.repeat(43)}` }],
    ['a key of 10 kB', { authorization: `Bearer svk_${'a'.repeat(10_000)}` }],
  ];
  for (const [name, headers] of invalid) {
    it(`answers 401 INVALID_API_KEY for ${name}`, async () => {
      const res = await call({ ...WHOAMI, headers });
      assert.equal(res.statusCode, 401);
      assert.equal(errorCode(res), 'INVALID_API_KEY');
    });
  }

  it('never accepts a workspace session cookie on key endpoints', async () => {
    const res = await call({ ...WHOAMI, headers: { cookie: tenant.owner.cookie, 'x-csrf-token': tenant.owner.csrfToken } });
    assert.equal(res.statusCode, 401);
    assert.equal(errorCode(res), 'INVALID_API_KEY');
  });

  it('answers 401 for a revoked key', async () => {
    const t = await createTenant();
    await revokeServiceKey(ctx.dataSource, t.keyId);
    const res = await call(withKey(t.key, WHOAMI));
    assert.equal(res.statusCode, 401);
    assert.match(res.json().error.message, /revoked/);
  });

  it('answers 401 for an expired key', async () => {
    const t = await createTenant();
    await ctx.dataSource.getRepository(ServiceKey).update(t.keyId, { expiresAt: new Date(Date.now() - 1000) });
    const res = await call(withKey(t.key, WHOAMI));
    assert.equal(res.statusCode, 401);
    assert.match(res.json().error.message, /expired/);
  });

  it('rotation keeps the scopes and stops the old key at once', async () => {
    const t = await createTenant(['service:signals:read', 'service:inbox:read']);
    const rotated = await rotateServiceKey(ctx.dataSource, t.keyId);
    assert.deepEqual(rotated.key.scopes, ['service:signals:read', 'service:inbox:read']);
    assert.equal(rotated.key.rotatedFromId, t.keyId);
    assert.equal((await call(withKey(t.key, WHOAMI))).statusCode, 401);
    const res = await call(withKey(rotated.secret, WHOAMI));
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.rotatedFromId, t.keyId);
  });

  it('refuses to rotate an expired key into a working one', async () => {
    const t = await createTenant();
    await ctx.dataSource.getRepository(ServiceKey).update(t.keyId, { expiresAt: new Date(Date.now() - 1000) });
    await assert.rejects(rotateServiceKey(ctx.dataSource, t.keyId), (err: { code: string }) => err.code === 'CONFLICT');
  });

  it('answers 403 ENVIRONMENT_SCOPE_MISMATCH for a key of another environment', async () => {
    const staging = await createServiceKey(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'staging', scopes: ['service:proof:read'],
    });
    const res = await call(withKey(staging.secret, WHOAMI));
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'ENVIRONMENT_SCOPE_MISMATCH');
  });

  it('answers 403 PRODUCT_SCOPE_REQUIRED for a key without a product on a product endpoint', async () => {
    const bare = await createServiceKey(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: null, environment: 'production', scopes: ['service:proof:read'],
    });
    assert.equal((await call(withKey(bare.secret, WHOAMI))).statusCode, 200, 'whoami needs no product');
    const res = await call(withKey(bare.secret, { method: 'GET', url: '/api/v1/proof/probe' }), app);
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'PRODUCT_SCOPE_REQUIRED');
  });

  it('answers 403 PRODUCT_SCOPE_UNAVAILABLE when the key\'s product is inactive', async () => {
    const t = await createTenant();
    await setProductActive(ctx.dataSource, t.product.id, false);
    const res = await call(withKey(t.key, { method: 'GET', url: '/api/v1/proof/probe' }), app);
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'PRODUCT_SCOPE_UNAVAILABLE');
    await setProductActive(ctx.dataSource, t.product.id, true);
    assert.equal((await call(withKey(t.key, { method: 'GET', url: '/api/v1/proof/probe' }), app)).statusCode, 200);
  });

  it('answers 403 INSUFFICIENT_SCOPE naming the missing scope, and lets a scoped key through', async () => {
    const res = await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/signals-probe' }), app);
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'INSUFFICIENT_SCOPE');
    assert.deepEqual(res.json().error.details, { requiredScope: 'service:signals:write' });
    const writer = await createTenant(['service:signals:write']);
    assert.equal((await call(withKey(writer.key, { method: 'GET', url: '/api/v1/signals-probe' }), app)).statusCode, 200);
  });

  it('answers 403 KEY_AUDIENCE_MISMATCH for a key on an end-user identity endpoint', async () => {
    const res = await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/installation' }));
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'KEY_AUDIENCE_MISMATCH');
    const ok = await call({ method: 'GET', url: '/api/v1/installation', headers: { authorization: `Bearer ${endUserToken(tenant.product)}` } });
    assert.equal(ok.statusCode, 200);
  });

  it('sends no cross-origin headers on /api/v1/proof', async () => {
    const get = await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/proof/probe', headers: { origin: 'https://evil.example' } }), app);
    const preflight = await call({
      method: 'OPTIONS', url: '/api/v1/proof/probe',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    }, app);
    for (const res of [get, preflight]) {
      assert.ok(!Object.keys(res.headers).some((h) => h.startsWith('access-control-')), JSON.stringify(res.headers));
    }
  });

  it('issues keys only to sponsored workspaces, with at most five scopes and a lifetime of at most 365 days', async () => {
    const plain = await createOrganization(ctx.dataSource, { name: 'Not sponsored' });
    await assert.rejects(
      createServiceKey(ctx.dataSource, { organizationId: plain.id, productId: null, environment: 'production', scopes: ['service:proof:read'] }),
      (err: { code: string; status: number }) => err.code === 'FORBIDDEN' && err.status === 403,
    );
    const base = { organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production' };
    const six = ['service:proof:read', 'service:proof:write', 'service:signals:read', 'service:signals:write', 'service:inbox:read', 'service:rooms:read'];
    await assert.rejects(createServiceKey(ctx.dataSource, { ...base, scopes: six }), /scopes|schema/);
    await assert.rejects(createServiceKey(ctx.dataSource, { ...base, scopes: ['service:proof:read'], expiresInDays: 366 }), /schema/);
    const year = await createServiceKey(ctx.dataSource, { ...base, scopes: six.slice(0, 5), expiresInDays: 365 });
    assert.equal(year.key.scopes.length, 5);
    const standard = await createServiceKey(ctx.dataSource, { ...base, scopes: ['service:proof:read'] });
    const days = (Date.parse(standard.key.expiresAt) - Date.parse(standard.key.createdAt)) / 86_400_000;
    assert.ok(Math.abs(days - 180) < 0.01, `default lifetime is 180 days, got ${days}`);
    assert.match(standard.secret, /^svk_[A-Za-z0-9_-]{43}$/);
  });
});
