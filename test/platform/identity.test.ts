import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { verifyIdentityToken } from '../../api/plugins/identity-token';
import { setProductActive } from '../../db/platform/tenancy';
import { Tenant, call, createTenant, endUserToken, errorCode } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

const install = (token: string) => call({ method: 'GET', url: '/api/v1/installation', headers: { authorization: `Bearer ${token}` } });

function forge(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string): string {
  const h = Buffer.from(JSON.stringify(header)).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${h}.${p}.${createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url')}`;
}

describe('signed end-user identity', () => {
  let tenant: Tenant;
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    tenant = await createTenant();
  });

  it('installation check verifies the token without consuming its nonce', async () => {
    const token = endUserToken(tenant.product, { sub: 'end-user-7' });
    for (let i = 0; i < 2; i++) {
      const res = await install(token);
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data.endUserId, 'end-user-7');
      assert.equal(res.json().data.productId, tenant.product.id);
      assert.equal(res.json().data.nonceConsumed, false);
    }
  });

  it('a write consumes the nonce once: the same token is refused the second time', async () => {
    const token = endUserToken(tenant.product);
    const opts = { consumeNonce: true, maxTtlSeconds: 900 };
    const identity = await verifyIdentityToken(ctx.dataSource, token, opts);
    assert.equal(identity.endUserId, 'user-1');
    await assert.rejects(verifyIdentityToken(ctx.dataSource, token, opts), /already used/);
    const noNonce = endUserToken(tenant.product, { nonce: undefined });
    await assert.rejects(verifyIdentityToken(ctx.dataSource, noNonce, opts), /needs a nonce/);
  });

  const refusals: Array<[string, (secret: string, kid: string) => string]> = [
    ['alg none', (s, kid) => forge({ alg: 'none', kid }, { sub: 'u', exp: now() + 60 }, s).replace(/\.[^.]+$/, '.x')],
    ['alg HS512', (s, kid) => forge({ alg: 'HS512', kid }, { sub: 'u', exp: now() + 60 }, s)],
    ['a wrong signature', (_s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u', exp: now() + 60 }, 'not-the-secret')],
    ['an unknown kid', (s) => forge({ alg: 'HS256', kid: 'idk_unknown' }, { sub: 'u', exp: now() + 60 }, s)],
    ['no exp', (s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u' }, s)],
    ['an expired token', (s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u', exp: now() - 1 }, s)],
    ['exp too far ahead', (s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u', exp: now() + 86_400 }, s)],
    ['no sub', (s, kid) => forge({ alg: 'HS256', kid }, { exp: now() + 60 }, s)],
    ['a string exp', (s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u', exp: String(now() + 60) }, s)],
    ['a NUL in the kid', (s) => forge({ alg: 'HS256', kid: 'idk_a\u0000b' }, { sub: 'u', exp: now() + 60 }, s)],
    ['a control character in sub', (s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u\u0000', exp: now() + 60 }, s)],
    ['a future nbf', (s, kid) => forge({ alg: 'HS256', kid }, { sub: 'u', exp: now() + 600, nbf: now() + 300 }, s)],
    ['a crit header this service does not understand', (s, kid) => forge({ alg: 'HS256', kid, crit: ['exp2'], exp2: 1 }, { sub: 'u', exp: now() + 60 }, s)],
    ['a crit header naming nothing', (s, kid) => forge({ alg: 'HS256', kid, crit: [] }, { sub: 'u', exp: now() + 60 }, s)],
    ['a typ other than JWT', (s, kid) => forge({ alg: 'HS256', kid, typ: 'at+jwt' }, { sub: 'u', exp: now() + 60 }, s)],
    ['a non-object payload', (s, kid) => forge({ alg: 'HS256', kid }, [1, 2] as never, s)],
    ['two segments', () => 'abc.def'],
    ['garbage segments', () => 'a!b.c$d.e%f'],
  ];
  it('accepts typ JWT in any case, and no typ at all', async () => {
    for (const header of [{ typ: 'JWT' }, { typ: 'jwt' }, {}]) {
      const token = forge({ alg: 'HS256', kid: tenant.product.identityKeyId, ...header }, { sub: 'u', exp: now() + 60 }, tenant.product.identitySecret);
      assert.equal((await install(token)).statusCode, 200, JSON.stringify(header));
    }
  });

  for (const [name, make] of refusals) {
    it(`refuses ${name} with 401`, async () => {
      const res = await install(make(tenant.product.identitySecret, tenant.product.identityKeyId));
      assert.equal(res.statusCode, 401);
      assert.equal(errorCode(res), 'INVALID_API_KEY');
    });
  }

  it('refuses a token of an inactive product with 403 PRODUCT_SCOPE_UNAVAILABLE', async () => {
    const t = await createTenant();
    await setProductActive(ctx.dataSource, t.product.id, false);
    const res = await install(endUserToken(t.product));
    assert.equal(res.statusCode, 403);
    assert.equal(errorCode(res), 'PRODUCT_SCOPE_UNAVAILABLE');
  });

  it('a token signed with one product\'s secret does not pass as another product', async () => {
    const other = await createTenant();
    const token = forge({ alg: 'HS256', kid: other.product.identityKeyId }, { sub: 'u', exp: now() + 60 }, tenant.product.identitySecret);
    assert.equal((await install(token)).statusCode, 401);
  });
});
