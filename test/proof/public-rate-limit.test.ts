import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { call, errorCode, withKey, withinOneMinuteWindow } from '../support/fixtures';
import { PlacementTenant, approvedItem, createPlacementTenant, publishedPlacement, rawQuery, submissionBody } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { sha256Hex } from '../../db/rules/secrets';

const LIMIT = 3;
const keys = (from: string, app: FastifyInstance, headers: Record<string, string> = {}) =>
  call({ method: 'GET', url: '/api/public/proof/receipts/keys', remoteAddress: from, headers }, app);

/** Keeps a burst inside one UTC minute window (the window is the unit counted; this proves no negative). */
async function atWindowStart(): Promise<void> {
  await withinOneMinuteWindow();
}

describe('public routes: per-address rate limit, trustProxy, beacon once per token', () => {
  let first: FastifyInstance;
  let second: FastifyInstance;
  let proxied: FastifyInstance;

  before(async () => {
    // Two API instances on one database stand for two processes behind a load balancer.
    first = await ctx.buildApp({ publicRateLimitPerMinute: LIMIT });
    second = await ctx.buildApp({ publicRateLimitPerMinute: LIMIT });
    proxied = await ctx.buildApp({ publicRateLimitPerMinute: LIMIT, trustProxy: ['127.0.0.1'] });
  });

  it('counts one window per address across API instances, then 429 RATE_LIMITED in the public envelope with retry-after', async () => {
    await atWindowStart();
    const address = '198.51.100.10';
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await keys(address, i % 2 === 0 ? first : second);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['x-ratelimit-limit'], String(LIMIT));
      remaining.push(String(res.headers['x-ratelimit-remaining']));
      const reset = Number(res.headers['x-ratelimit-reset']);
      assert.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 60, `reset ${reset} is the window's end`);
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const limited = await keys(address, second);
    assert.equal(limited.statusCode, 429);
    assert.equal(errorCode(limited), 'RATE_LIMITED');
    assert.equal(typeof limited.json().error.message, 'string');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    // A write route too, before its body is read: no beacon is counted while over the limit.
    const beacon = await call({ method: 'POST', url: '/api/public/proof/events', remoteAddress: address, payload: '{}',
      headers: { 'content-type': 'text/plain' } }, first);
    assert.equal(beacon.statusCode, 429);
    // Another address has its own window.
    assert.equal((await keys('198.51.100.11', first)).statusCode, 200);
  });

  it('a process spends units taken in blocks: across instances the window reaches the limit exactly, never past it', async () => {
    await atWindowStart();
    const limit = 640;
    const [a, b] = await Promise.all([ctx.buildApp({ publicRateLimitPerMinute: limit }), ctx.buildApp({ publicRateLimitPerMinute: limit })]);
    const address = '198.51.100.30';
    const answers: number[] = [];
    for (let i = 0; i < limit + 20; i++) answers.push((await keys(address, i % 3 === 0 ? a : b)).statusCode);
    const served = answers.filter((code) => code === 200).length;
    // Units the other instance took and left unspent are the only ones refused early: at most one and
    // a half blocks (a block of 10, and half of the one before it, taken ahead).
    assert.ok(served <= limit && served >= limit - 15, `served ${served}`);
    assert.equal(answers.filter((code) => code !== 200 && code !== 429).length, 0);
    const [row]: Array<{ count: number }> = await ctx.dataSource.query(
      `SELECT count FROM rate_limit_windows WHERE key_id = $1 AND window_start = date_trunc('minute', now())`,
      [`public-ip:${sha256Hex(address).slice(0, 32)}`]);
    assert.equal(row.count, limit, 'the shared window stops at the limit');
    await Promise.all([a.close(), b.close()]);
  });

  it('without trustProxy X-Forwarded-For is ignored: a client cannot pick its own address', async () => {
    await atWindowStart();
    const address = '198.51.100.20';
    for (let i = 0; i <= LIMIT; i++) {
      const res = await keys(address, first, { 'x-forwarded-for': `203.0.113.${i}` });
      assert.equal(res.statusCode, i < LIMIT ? 200 : 429, `request ${i + 1}`);
    }
  });

  it('with trustProxy the client behind the proxy is counted, and recorded in consent evidence', async () => {
    await atWindowStart();
    const proxy = '127.0.0.1';
    for (let i = 0; i <= LIMIT; i++) {
      const res = await keys(proxy, proxied, { 'x-forwarded-for': '203.0.113.50' });
      assert.equal(res.statusCode, i < LIMIT ? 200 : 429, `request ${i + 1}`);
    }
    // The proxy's other clients are not held back by that one.
    assert.equal((await keys(proxy, proxied, { 'x-forwarded-for': '203.0.113.51' })).statusCode, 200);

    const tenant = await createPlacementTenant();
    const viaProxy = await call(withKey(tenant.key, {
      method: 'POST', url: '/api/v1/proof/submissions', payload: submissionBody(), remoteAddress: proxy,
      headers: { 'x-forwarded-for': '203.0.113.77', 'idempotency-key': 'trust-proxy-1' },
    }), proxied);
    assert.equal(viaProxy.statusCode, 201, viaProxy.body);
    const direct = await call(withKey(tenant.key, {
      method: 'POST', url: '/api/v1/proof/submissions', payload: submissionBody(), remoteAddress: '192.0.2.5',
      headers: { 'x-forwarded-for': '203.0.113.77', 'idempotency-key': 'trust-proxy-2' },
    }), first);
    assert.equal(direct.statusCode, 201, direct.body);
    const evidence = async (itemId: string) => ((await rawQuery(`SELECT evidence FROM consent_grants WHERE proof_item_id = $1`,
      [itemId])) as Array<{ evidence: { ip: string } }>)[0].evidence.ip;
    assert.equal(await evidence(viaProxy.json().data.proofItemId), '203.0.113.77');
    assert.equal(await evidence(direct.json().data.proofItemId), '192.0.2.5');
  });

  it('a beacon counts once per token, type and UTC day: replays add nothing', async () => {
    const tenant: PlacementTenant = await createPlacementTenant();
    const a = await approvedItem(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId]);
    const token: string = (await call({ method: 'GET', url: `/api/public/proof/render/${id}` })).json().manifest.items[0].eventToken;
    for (const type of ['impression', 'impression', 'click', 'impression', 'click']) {
      const res = await call({ method: 'POST', url: '/api/public/proof/events', payload: JSON.stringify({ token, type }),
        headers: { 'content-type': 'text/plain' } });
      assert.equal(res.statusCode, 204, res.body);
    }
    const items = (await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/placements/${id}/items` }))).json().data;
    assert.deepEqual(items[0].engagement, { impression: 1, click: 1 });
  });
});
