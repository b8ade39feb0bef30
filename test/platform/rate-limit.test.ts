import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { Tenant, call, createTenant, errorCode, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

describe('rate limit', () => {
  const LIMIT = 4;
  let tenant: Tenant;
  let first: FastifyInstance;
  let second: FastifyInstance;
  const whoami = (app: FastifyInstance, key = tenant.key) => call(withKey(key, { method: 'GET', url: '/api/v1/auth/whoami' }), app);

  before(async () => {
    tenant = await createTenant();
    // Two API instances on one database stand for two processes behind a load balancer.
    first = await ctx.buildApp({ rateLimitPerMinute: LIMIT }, (a) => {
      a.get('/api/v1/scoped', { config: { auth: 'key', scope: 'service:signals:write' } }, async () => ({ data: 'ok' }));
    });
    second = await ctx.buildApp({ rateLimitPerMinute: LIMIT });
  });

  it('counts one window across API instances, with the headers on every key response, then 429 with retry-after', async () => {
    // Keep the whole burst inside one minute window.
    const secondsLeft = 60 - new Date().getUTCSeconds();
    if (secondsLeft < 5) await new Promise((r) => setTimeout(r, secondsLeft * 1000 + 100));
    const remaining: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await whoami(i % 2 === 0 ? first : second);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-ratelimit-limit'], String(LIMIT));
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
      const reset = Number(res.headers['x-ratelimit-reset']);
      assert.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 60, `reset ${reset} is the window's end`);
    }
    assert.deepEqual(remaining, [3, 2, 1, 0]);
    const limited = await whoami(second);
    assert.equal(limited.statusCode, 429);
    assert.equal(errorCode(limited), 'RATE_LIMITED');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.equal(limited.headers['x-ratelimit-remaining'], '0');
  });

  it('limits each key on its own and puts the headers on refusals too', async () => {
    const other = await createTenant();
    const refused = await call(withKey(other.key, { method: 'GET', url: '/api/v1/scoped' }), first);
    assert.equal(refused.statusCode, 403);
    assert.equal(errorCode(refused), 'INSUFFICIENT_SCOPE');
    assert.equal(refused.headers['x-ratelimit-limit'], String(LIMIT));
    assert.equal(refused.headers['x-ratelimit-remaining'], String(LIMIT - 1));
    assert.ok(refused.headers['x-ratelimit-reset']);
    const ok = await whoami(first, other.key);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers['x-ratelimit-remaining'], String(LIMIT - 2));
  });
});
