import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { sha256Hex } from '../../db/rules/secrets';
import { Tenant, call, createTenant, errorCode, eventually, withKey, withinOneMinuteWindow } from '../support/fixtures';
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
    await withinOneMinuteWindow();
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

  /** The key's window row of this minute. */
  const windowCount = async (key: string): Promise<number | undefined> => {
    const rows: Array<{ count: number }> = await ctx.dataSource.query(
      `SELECT w.count FROM rate_limit_windows w JOIN service_keys k ON k.id = w.key_id
        WHERE k.digest = $1 AND w.window_start = date_trunc('minute', now())`, [sha256Hex(key)]);
    return rows[0]?.count;
  };
  const inOneWindow = async (seconds: number) => {
    await withinOneMinuteWindow(seconds);
  };

  it('holds a small limit exactly under concurrency: one unit a take, a refusal takes nothing', async () => {
    const limit = 39;
    const tight = await ctx.buildApp({ rateLimitPerMinute: limit });
    const t = await createTenant();
    await inOneWindow(10);
    const answers = await Promise.all(Array.from({ length: 64 }, () => whoami(tight, t.key)));
    const statuses = answers.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 200).length, limit, 'never more than the limit');
    assert.equal(statuses.filter((s) => s === 429).length, 64 - limit, 'never refused early');
    assert.equal(await windowCount(t.key), limit, 'refused requests count nothing');
    const remaining = answers.filter((r) => r.statusCode === 200).map((r) => Number(r.headers['x-ratelimit-remaining']));
    assert.deepEqual(remaining.sort((a, b) => a - b), Array.from({ length: limit }, (_, i) => i), 'each answer its own place in the window');
  });

  it('takes a big limit in blocks of a 64th, shared across processes, and never passes it', async () => {
    const limit = 640;
    const [a, b] = await Promise.all([ctx.buildApp({ rateLimitPerMinute: limit }), ctx.buildApp({ rateLimitPerMinute: limit })]);
    const t = await createTenant();
    await inOneWindow(15);
    const first = await whoami(a, t.key);
    assert.equal(first.statusCode, 200);
    assert.equal(await windowCount(t.key), 10, 'one statement took a block of ⌈640 / 64⌉ units');
    assert.equal(first.headers['x-ratelimit-remaining'], String(limit - 1));
    const second = await whoami(b, t.key);
    assert.equal(await windowCount(t.key), 20, 'the other process took its own block');
    assert.equal(second.headers['x-ratelimit-remaining'], String(limit - 11), 'the first block counts as used');
    for (let i = 0; i < 3; i++) assert.equal((await whoami(a, t.key)).statusCode, 200);
    assert.equal(await windowCount(t.key), 20, 'spent from the block without a statement');
    // Half-way through its block (five left of ten) the process takes the next one in the background.
    assert.equal((await whoami(a, t.key)).statusCode, 200);
    await eventually(async () => (await windowCount(t.key)) === 30, 5_000);
    for (let i = 0; i < 5; i++) assert.equal((await whoami(a, t.key)).statusCode, 200);
    assert.equal(await windowCount(t.key), 30);
    const rest = await Promise.all(Array.from({ length: limit }, (_, i) => whoami(i % 2 === 0 ? a : b, t.key)));
    let ok = rest.filter((r) => r.statusCode === 200).length + 11;
    assert.equal(await windowCount(t.key), limit, 'the window stops at the limit');
    assert.ok(ok <= limit, `${ok} answered: never more than the limit`);
    assert.ok(ok >= limit - 15, `${ok} answered: refused early by at most one and a half blocks (two processes)`);
    assert.equal(errorCode(rest.find((r) => r.statusCode === 429)!), 'RATE_LIMITED');
    // What a process still holds it spends: in all, exactly the limit is answered.
    for (const app of [a, b]) while ((await whoami(app, t.key)).statusCode === 200) ok += 1;
    assert.equal(ok, limit);
    assert.equal((await whoami(a, t.key)).statusCode, 429, 'a full window stays full until it ends');
    assert.equal(await windowCount(t.key), limit);
  });
});
