import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { sha256Hex } from '../../db/rules/secrets';
import { call, createTenant, errorCode, withKey, withinOneMinuteWindow } from '../support/fixtures';
import { IntegrationTenant, asOwner, createIntegrationTenant, valueEvent } from '../support/integrations';
import { ctx } from '../support/root-hooks';

describe('integrations: value-event hooks', () => {
  let tenant: IntegrationTenant;
  const createHook = async (t = tenant, body: object = {}) => {
    const res = await asOwner(t, 'POST', '/api/workspace/proof/hooks', { productId: t.product.id, name: 'Zendesk solved', source: 'zendesk', ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data as { hook: { id: string; tokenPrefix: string }; url: string; token: string };
  };
  const callHook = (token: string, payload: object = valueEvent(), app = ctx.app) =>
    call({ method: 'POST', url: `/api/public/proof/hooks/${token}`, payload }, app);

  before(async () => {
    tenant = await createIntegrationTenant();
  });

  it('creates a hook whose token is shown once and stored only as a digest; 202 first, 200 duplicate', async () => {
    const { hook, url, token } = await createHook();
    assert.match(token, /^svhk_[A-Za-z0-9_-]{43}$/);
    assert.equal(url, `/api/public/proof/hooks/${token}`);
    assert.equal(hook.tokenPrefix, token.slice(0, 9));
    const [row] = await ctx.dataSource.query(`SELECT * FROM proof_hooks WHERE id = $1`, [hook.id]);
    assert.equal(row.token_digest, createHash('sha256').update(token).digest('hex'));
    assert.ok(!JSON.stringify(row).includes(token));
    const listed = await asOwner(tenant, 'GET', '/api/workspace/proof/hooks');
    assert.ok(!listed.body.includes(token));
    assert.ok(listed.json().data.some((h: { id: string }) => h.id === hook.id));

    const body = valueEvent({ type: 'resolved_ticket', properties: { ticketId: '4521' } });
    const first = await callHook(token, body);
    assert.equal(first.statusCode, 202, first.body);
    assert.equal(first.json().data.eventId, body.eventId);
    assert.equal(first.json().data.replayed, false);
    assert.equal(first.headers['access-control-allow-origin'], undefined);
    const again = await callHook(token, body);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json().data, { ...first.json().data, replayed: true });
    const [ve] = await ctx.dataSource.query(`SELECT origin_type, origin_id FROM proof_value_events WHERE id = $1`, [first.json().data.valueEventId]);
    assert.deepEqual(ve, { origin_type: 'hook', origin_id: hook.id });
    const bad = await callHook(token, { ...valueEvent(), type: 'nope' });
    assert.equal(bad.statusCode, 400);
  });

  it('answers one 404 for unknown, malformed, rotated, disabled, other-product and inactive-product tokens', async () => {
    const other = await createTenant();
    const theirs = await createHook(other as IntegrationTenant);
    const rotated = await createHook();
    const fresh = await asOwner(tenant, 'POST', `/api/workspace/proof/hooks/${rotated.hook.id}/rotate`);
    assert.equal(fresh.statusCode, 200);
    assert.notEqual(fresh.json().data.token, rotated.token);
    assert.equal((await callHook(fresh.json().data.token)).statusCode, 202);
    const disabled = await createHook();
    assert.equal((await asOwner(tenant, 'DELETE', `/api/workspace/proof/hooks/${disabled.hook.id}`)).json().data.state, 'disabled');
    const inactiveTenant = await createTenant();
    const inactive = await createHook(inactiveTenant as IntegrationTenant);
    await ctx.dataSource.query(`UPDATE products SET active = false WHERE id = $1`, [inactiveTenant.product.id]);

    const bodies: string[] = [];
    for (const token of ['svhk_' + 'A'.repeat(43), 'not-a-token', rotated.token, disabled.token, inactive.token]) {
      const res = await callHook(token);
      assert.equal(res.statusCode, 404, token);
      assert.equal(errorCode(res), 'NOT_FOUND');
      bodies.push(JSON.stringify({ ...res.json().error, requestId: null }));
    }
    // Even a bad body hears the 404 first.
    assert.equal((await callHook(disabled.token, { nonsense: true })).statusCode, 404);
    assert.equal(new Set(bodies).size, 1);
    // Another product's valid hook records into that product only.
    const res = await callHook(theirs.token);
    assert.equal(res.statusCode, 202);
    const [row] = await ctx.dataSource.query(`SELECT product_id FROM proof_value_events WHERE id = $1`, [res.json().data.valueEventId]);
    assert.equal(row.product_id, other.product.id);
  });

  it('keeps workspace hook routes to the own organization and to people', async () => {
    const other = await createTenant();
    const mine = await createHook();
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'POST', `/api/workspace/proof/hooks/${mine.hook.id}/rotate`)), 'NOT_FOUND');
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'DELETE', `/api/workspace/proof/hooks/${mine.hook.id}`)), 'NOT_FOUND');
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'POST', '/api/workspace/proof/hooks',
      { productId: tenant.product.id, name: 'x', source: 'generic' })), 'NOT_FOUND');
    const listed = await asOwner(other as IntegrationTenant, 'GET', '/api/workspace/proof/hooks');
    assert.ok(!listed.json().data.some((h: { id: string }) => h.id === mine.hook.id));
    const byKey = await call(withKey(tenant.key, { method: 'POST', url: '/api/workspace/proof/hooks',
      payload: { productId: tenant.product.id, name: 'x', source: 'generic' } }));
    assert.equal(errorCode(byKey), 'FORBIDDEN');
  });

  it('limits each hook per minute with 429 RATE_LIMITED and retry-after', async () => {
    const app = await ctx.buildApp({ proofHookRatePerMinute: 2 });
    const { token } = await createHook();
    await withinOneMinuteWindow();
    assert.equal((await callHook(token, valueEvent(), app)).statusCode, 202);
    assert.equal((await callHook(token, valueEvent(), app)).statusCode, 202);
    const third = await callHook(token, valueEvent(), app);
    assert.equal(third.statusCode, 429);
    assert.equal(errorCode(third), 'RATE_LIMITED');
    assert.ok(Number(third.headers['retry-after']) >= 1);
    assert.deepEqual([third.headers['x-ratelimit-limit'], third.headers['x-ratelimit-remaining']], ['2', '0']);
    const [{ count }] = await ctx.dataSource.query(
      `SELECT w.count FROM rate_limit_windows w JOIN proof_hooks h ON h.id = w.key_id
        WHERE h.token_digest = $1 AND w.window_start = date_trunc('minute', now())`, [sha256Hex(token)]);
    assert.equal(count, 2, 'the refused call counted nothing');
  });

  it('refuses a body over 64 KB', async () => {
    const { token } = await createHook();
    const res = await callHook(token, valueEvent({ properties: { name: 'x', pad: 'y'.repeat(1000) }, padding: 'z'.repeat(70 * 1024) }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error.message, /larger than this endpoint accepts/);
  });
});
