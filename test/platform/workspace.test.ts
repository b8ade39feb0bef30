import assert from 'node:assert/strict';
import { TeammateSession } from '../../db/entities';
import { Tenant, asTeammate, call, createTenant, errorCode, sessionFor, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const createKeyBody = (productId: string) => ({ productId, environment: 'production', scopes: ['service:proof:read'] });

describe('workspace sessions and key management', () => {
  let tenant: Tenant;

  before(async () => {
    tenant = await createTenant();
  });

  it('a session cookie identifies the teammate', async () => {
    const res = await call({ method: 'GET', url: '/api/workspace/session', headers: { cookie: tenant.owner.cookie } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      { id: res.json().data.teammateId, org: res.json().data.organizationId, role: res.json().data.role },
      { id: tenant.owner.id, org: tenant.organizationId, role: 'owner' },
    );
  });

  it('refuses a missing, malformed or expired session with 401', async () => {
    const expired = await sessionFor(tenant.organizationId, 'owner');
    await ctx.dataSource.getRepository(TeammateSession).update({ teammateId: expired.id }, { expiresAt: new Date(Date.now() - 1000) });
    for (const cookie of [undefined, 'sv_session=nope', `sv_session=svs_${'a'.repeat(43)}`, expired.cookie]) {
      const res = await call({ method: 'GET', url: '/api/workspace/session', headers: cookie ? { cookie } : {} });
      assert.equal(res.statusCode, 401, String(cookie));
      assert.equal(errorCode(res), 'INVALID_API_KEY');
    }
  });

  it('a service key is FORBIDDEN on workspace endpoints', async () => {
    const res = await call(withKey(tenant.key, { method: 'GET', url: '/api/workspace/keys' }));
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'FORBIDDEN');
  });

  it('a write without the matching x-csrf-token is FORBIDDEN and changes nothing', async () => {
    const body = createKeyBody(tenant.product.id);
    const before = await ctx.dataSource.query('SELECT count(*)::int AS n FROM service_keys WHERE organization_id = $1', [tenant.organizationId]);
    for (const csrf of [undefined, 'wrong', tenant.owner.csrfToken.slice(1)]) {
      const headers: Record<string, string> = { cookie: tenant.owner.cookie };
      if (csrf) headers['x-csrf-token'] = csrf;
      const res = await call({ method: 'POST', url: '/api/workspace/keys', headers, payload: body });
      assert.equal(res.statusCode, 403);
      assert.equal(errorCode(res), 'FORBIDDEN');
    }
    const other = await sessionFor(tenant.organizationId, 'owner');
    const crossed = await call({
      method: 'POST', url: '/api/workspace/keys', payload: body,
      headers: { cookie: tenant.owner.cookie, 'x-csrf-token': other.csrfToken },
    });
    assert.equal(crossed.statusCode, 403, 'another session\'s CSRF token does not count');
    const after = await ctx.dataSource.query('SELECT count(*)::int AS n FROM service_keys WHERE organization_id = $1', [tenant.organizationId]);
    assert.equal(after[0].n, before[0].n);
  });

  it('the owner creates a key shown once; it works against whoami', async () => {
    const res = await call(asTeammate(tenant.owner, { method: 'POST', url: '/api/workspace/keys', payload: createKeyBody(tenant.product.id) }));
    assert.equal(res.statusCode, 201);
    const { key, secret } = res.json().data;
    assert.equal(key.createdBy, tenant.owner.id);
    const who = await call(withKey(secret, { method: 'GET', url: '/api/v1/auth/whoami' }));
    assert.equal(who.json().data.id, key.id);
    const list = await call(asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/keys' }));
    assert.ok(!list.body.includes(secret), 'a listing never shows the key');
  });

  it('roles: an admin lists but may not create; a member may do neither', async () => {
    const admin = await sessionFor(tenant.organizationId, 'admin');
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await call(asTeammate(admin, { method: 'GET', url: '/api/workspace/keys' }))).statusCode, 200);
    const adminCreate = await call(asTeammate(admin, { method: 'POST', url: '/api/workspace/keys', payload: createKeyBody(tenant.product.id) }));
    assert.equal(adminCreate.statusCode, 403);
    const memberList = await call(asTeammate(member, { method: 'GET', url: '/api/workspace/keys' }));
    assert.equal(memberList.statusCode, 403);
    assert.equal(errorCode(memberList), 'FORBIDDEN');
  });

  const badBodies: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown property', { extra: 1 }, 'extra'],
    ['a string where a number belongs', { expiresInDays: '10' }, 'expiresInDays'],
    ['six scopes', { scopes: ['service:proof:read', 'service:proof:write', 'service:signals:read', 'service:signals:write', 'service:inbox:read',
      'service:rooms:read'] }, 'scopes'],
    ['an unknown scope', { scopes: ['service:everything'] }, 'scopes[0]'],
    ['a lifetime of 366 days', { expiresInDays: 366 }, 'expiresInDays'],
    ['a fractional lifetime', { expiresInDays: 1.5 }, 'expiresInDays'],
  ];
  for (const [name, patch, path] of badBodies) {
    it(`refuses ${name} with 400 VALIDATION_FAILED at ${path}`, async () => {
      const res = await call(asTeammate(tenant.owner, {
        method: 'POST', url: '/api/workspace/keys', payload: { ...createKeyBody(tenant.product.id), ...patch },
      }));
      assert.equal(res.statusCode, 400);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
      const details: Array<{ path: string; message: string }> = res.json().error.details;
      assert.ok(details.some((d) => d.path === path), JSON.stringify(details));
    });
  }

  it('another workspace\'s product or key answers 404', async () => {
    const other = await createTenant();
    const create = await call(asTeammate(tenant.owner, { method: 'POST', url: '/api/workspace/keys', payload: createKeyBody(other.product.id) }));
    assert.equal(create.statusCode, 404);
    for (const action of ['rotate', 'revoke']) {
      const res = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/keys/${other.keyId}/${action}` }));
      assert.equal(res.statusCode, 404);
      assert.equal(errorCode(res), 'NOT_FOUND');
    }
    assert.equal((await call(withKey(other.key, { method: 'GET', url: '/api/v1/auth/whoami' }))).statusCode, 200, 'untouched');
  });

  it('rotate answers the new key once; revoke stops it at once', async () => {
    const rotated = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/keys/${tenant.keyId}/rotate` }));
    assert.equal(rotated.statusCode, 201);
    const { key, secret } = rotated.json().data;
    assert.equal((await call(withKey(tenant.key, { method: 'GET', url: '/api/v1/auth/whoami' }))).statusCode, 401);
    const revoked = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/keys/${key.id}/revoke` }));
    assert.equal(revoked.statusCode, 200);
    assert.ok(revoked.json().data.revokedAt);
    assert.equal((await call(withKey(secret, { method: 'GET', url: '/api/v1/auth/whoami' }))).statusCode, 401);
    const again = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/keys/${key.id}/rotate` }));
    assert.equal(again.statusCode, 409);
    assert.equal(errorCode(again), 'CONFLICT');
  });
});

describe('cursor pagination', () => {
  let tenant: Tenant;
  const page = async (query: string, session = tenant.owner) =>
    call(asTeammate(session, { method: 'GET', url: `/api/workspace/keys${query}` }));

  before(async () => {
    tenant = await createTenant();
    for (let i = 0; i < 4; i++) {
      const res = await call(asTeammate(tenant.owner, {
        method: 'POST', url: '/api/workspace/keys', payload: { productId: tenant.product.id, environment: 'production', scopes: ['service:proof:read'] },
      }));
      assert.equal(res.statusCode, 201);
    }
  });

  it('walks every row once, newest first, and ends with nextCursor null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await page(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.ok(body.data.length <= 2);
      seen.push(...body.data.map((k: { id: string }) => k.id));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(seen.length, 5);
    assert.equal(new Set(seen).size, 5);
    const all = (await page('')).json();
    assert.deepEqual(all.data.map((k: { id: string }) => k.id), seen);
    assert.equal(all.nextCursor, null);
  });

  for (const [query, why] of [['?limit=0', 'limit 0'], ['?limit=101', 'limit 101'], ['?limit=abc', 'a word for limit'], ['?limit=2.5', 'a fraction'],
    ['?cursor=not-a-cursor!', 'a garbled cursor'], [`?cursor=${Buffer.from('["2020-01-01T00:00:00.000Z","x"]').toString('base64url')}`, 'a forged cursor'],
    [`?cursor=${Buffer.from('["-271821-04-20T00:00:00.000Z","key_0123456789"]').toString('base64url')}`, 'a well-formed cursor out of range'],
    [`?cursor=${Buffer.from('["+275760-09-13T00:00:00.000Z","key_0123456789"]').toString('base64url')}`, 'a cursor far in the future'],
    ['?unknown=1', 'an unknown parameter']]) {
    it(`refuses ${why} with 400`, async () => {
      const res = await page(query);
      assert.equal(res.statusCode, 400);
      assert.equal(errorCode(res), 'VALIDATION_FAILED');
    });
  }

  it('a cursor taken from one workspace never shows another workspace\'s rows', async () => {
    const first = (await page('?limit=1')).json();
    const other = await createTenant();
    const res = await page(`?limit=100&cursor=${first.nextCursor}`, other.owner);
    assert.equal(res.statusCode, 200);
    for (const key of res.json().data) assert.equal(key.organizationId, other.organizationId);
  });
});
