import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { RATE_LIMIT_SHARDS } from '../../db/platform/key-authentication';
import { sha256Hex } from '../../db/rules/secrets';
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

  it('holds the limit exactly under concurrency although the window is spread over shard rows', async () => {
    const limit = 39;
    const tight = await ctx.buildApp({ rateLimitPerMinute: limit });
    const t = await createTenant();
    const secondsLeft = 60 - new Date().getUTCSeconds();
    if (secondsLeft < 10) await new Promise((r) => setTimeout(r, secondsLeft * 1000 + 100));
    const answers = await Promise.all(Array.from({ length: 64 }, () => whoami(tight, t.key)));
    const statuses = answers.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 200).length, limit, 'never more than the limit');
    assert.equal(statuses.filter((s) => s === 429).length, 64 - limit, 'never refused early');
    const [{ id }] = await ctx.dataSource.query('SELECT id FROM service_keys WHERE digest = $1', [sha256Hex(t.key)]);
    const shards: Array<{ count: number }> = await ctx.dataSource.query(
      `SELECT count FROM rate_limit_windows WHERE (key_id = $1 OR key_id LIKE $1 || '#%') AND window_start = date_trunc('minute', now())`, [id]);
    assert.equal(shards.length, RATE_LIMIT_SHARDS, 'every shard took part');
    assert.equal(shards.reduce((a, s) => a + s.count, 0), limit, 'refused requests count nothing');
    const remaining = answers.filter((r) => r.statusCode === 200).map((r) => Number(r.headers['x-ratelimit-remaining']));
    assert.ok(remaining.every((n) => n >= 0 && n < limit), 'the headers stay within the window');
  });
});
