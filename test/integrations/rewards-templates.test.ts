import assert from 'node:assert/strict';
import { call, createTenant, errorCode, withKey } from '../support/fixtures';
import { IntegrationTenant, asOwner, createIntegrationTenant, ledgerOfProduct, outboxOf } from '../support/integrations';
import { route } from '../support/routes';

describe('integrations: rewards and automation templates', () => {
  let tenant: IntegrationTenant;
  const create = async (body: object) => {
    const res = await asOwner(tenant, 'POST', '/api/workspace/proof/rewards', { productId: tenant.product.id, personRef: 'cus_1', ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  };
  const confirm = (id: string, key = tenant.key) => call(withKey(key, { method: 'POST', url: route('/api/v1/proof/rewards/{id}/confirm', { id }) }));

  before(async () => {
    tenant = await createIntegrationTenant();
  });

  it('issues a participation reward when a person approves it', async () => {
    const reward = await create({ kind: 'gift_card', description: '$25 gift card for taking part' });
    assert.equal(reward.state, 'pending');
    assert.match(reward.id, /^rwd_/);
    const approved = await asOwner(tenant, 'POST', `/api/workspace/proof/rewards/${reward.id}/approve`);
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().data.state, 'issued');
    assert.equal(approved.json().data.approvedBy, tenant.owner.id);
    const issued = await outboxOf(tenant.product.id, 'proof.reward.issued');
    assert.ok(issued.some((o) => (o.payload.properties as Record<string, unknown>).rewardId === reward.id));
    assert.equal(errorCode(await asOwner(tenant, 'POST', `/api/workspace/proof/rewards/${reward.id}/approve`)), 'CONFLICT');
    assert.equal(errorCode(await confirm(reward.id)), 'CONFLICT');
  });

  it('runs a feature unlock: approve announces it, confirm twice answers the same fulfilled reward and announces once', async () => {
    const reward = await create({ kind: 'feature_unlock', description: 'Early access to reports', unlockKey: 'beta.reports' });
    assert.equal(errorCode(await confirm(reward.id)), 'CONFLICT');
    const approved = (await asOwner(tenant, 'POST', `/api/workspace/proof/rewards/${reward.id}/approve`)).json().data;
    assert.equal(approved.state, 'unlock_pending');
    const unlock = (await outboxOf(tenant.product.id, 'proof.reward.feature_unlock'))
      .find((o) => (o.payload.properties as Record<string, unknown>).rewardId === reward.id)!;
    assert.deepEqual(unlock.payload.properties, { rewardId: reward.id, unlockKey: 'beta.reports', personRef: 'cus_1', endUserId: null });
    const first = await confirm(reward.id);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.state, 'fulfilled');
    const second = await confirm(reward.id);
    assert.equal(second.statusCode, 200);
    assert.deepEqual(second.json().data, first.json().data);
    const issued = (await ledgerOfProduct(tenant.product.id, 'proof.reward.issued')).filter((e) => e.properties.rewardId === reward.id);
    assert.equal(issued.length, 1);
  });

  it('cancels pending rewards only; keys hear HUMAN_APPROVAL_REQUIRED or FORBIDDEN; other tenants 404', async () => {
    const reward = await create({ kind: 'donation', description: 'A donation in your name' });
    const byKey = (path: string, method: 'GET' | 'POST' = 'POST') => call(withKey(tenant.key, { method, url: path }));
    assert.equal(errorCode(await byKey(`/api/workspace/proof/rewards/${reward.id}/approve`)), 'HUMAN_APPROVAL_REQUIRED');
    assert.equal(errorCode(await byKey(`/api/workspace/proof/rewards/${reward.id}/cancel`)), 'HUMAN_APPROVAL_REQUIRED');
    assert.equal(errorCode(await byKey('/api/workspace/proof/rewards', 'GET')), 'FORBIDDEN');
    const other = await createTenant(['service:proof:write']);
    assert.equal(errorCode(await asOwner(other as IntegrationTenant, 'POST', `/api/workspace/proof/rewards/${reward.id}/cancel`)), 'NOT_FOUND');
    assert.equal(errorCode(await confirm(reward.id, other.key)), 'NOT_FOUND');
    assert.equal(errorCode(await confirm('rwd_unknown0000000')), 'NOT_FOUND');
    const cancelled = await asOwner(tenant, 'POST', `/api/workspace/proof/rewards/${reward.id}/cancel`);
    assert.equal(cancelled.json().data.state, 'cancelled');
    assert.equal(errorCode(await asOwner(tenant, 'POST', `/api/workspace/proof/rewards/${reward.id}/cancel`)), 'CONFLICT');
    const listed = await asOwner(tenant, 'GET', '/api/workspace/proof/rewards?state=cancelled');
    assert.deepEqual(listed.json().data.map((r: { id: string }) => r.id), [reward.id]);
  });

  it('takes no rating or sentiment condition, and needs an unlockKey exactly for feature unlocks', async () => {
    const conditioned = await asOwner(tenant, 'POST', '/api/workspace/proof/rewards',
      { productId: tenant.product.id, personRef: 'c', kind: 'gift_card', description: 'x', minRating: 4 });
    assert.equal(conditioned.statusCode, 400);
    assert.equal(conditioned.json().error.details[0].path, 'minRating');
    const noKey = await asOwner(tenant, 'POST', '/api/workspace/proof/rewards',
      { productId: tenant.product.id, personRef: 'c', kind: 'feature_unlock', description: 'x' });
    assert.equal(noKey.json().error.details[0].path, 'unlockKey');
    const extraKey = await asOwner(tenant, 'POST', '/api/workspace/proof/rewards',
      { productId: tenant.product.id, personRef: 'c', kind: 'gift_card', description: 'x', unlockKey: 'a' });
    assert.equal(extraKey.statusCode, 400);
  });

  it('serves the automation catalog publicly with a strong ETag and 304', async () => {
    const res = await call({ method: 'GET', url: '/api/public/proof/automation-templates' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['cache-control'], 'public, max-age=3600');
    const etag = String(res.headers.etag);
    assert.match(etag, /^"[0-9a-f]{64}"$/);
    const { data } = res.json();
    assert.equal(data.version, 1);
    const keys = (list: Array<{ key: string }>) => list.map((x) => x.key);
    for (const t of ['proof.opportunity.created', 'proof.moment.detected', 'proof.request.sent', 'proof.reply.captured', 'proof.reward.issued',
      'proof.reward.feature_unlock', 'proof.consent.revoked', 'proof.health.warning', 'proof.brand_mention.created']) {
      assert.ok(keys(data.triggers).includes(t), t);
    }
    for (const trigger of data.triggers) assert.equal(trigger.samplePayload.type, trigger.key);
    assert.deepEqual(keys(data.actions), ['record_value_event', 'confirm_reward', 'draft_request']);
    for (const a of data.actions) assert.equal(a.bodySchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    for (const t of ['zendesk-ticket-solved', 'intercom-conversation-closed', 'hubspot-deal-won', 'product-milestone', 'feature-unlock-confirm']) {
      assert.ok(keys(data.templates).includes(t), t);
    }
    const again = await call({ method: 'GET', url: '/api/public/proof/automation-templates', headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
  });
});
