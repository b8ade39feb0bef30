import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { approvedItem, createPlacementTenant, PlacementTenant, publishedPlacement, submissionBody } from '../support/proof-fixtures';
import { call, createTenant, errorCode, eventually, withKey } from '../support/fixtures';
import { asOwner } from '../support/integrations';
import { ctx } from '../support/root-hooks';

describe('integrations: health workflow and the video host webhook', () => {
  let tenant: PlacementTenant;
  const warnings = async (productId: string): Promise<Array<Record<string, unknown>>> =>
    (await ctx.dataSource.query(`SELECT properties, proof_item_id, placement_id FROM proof_events WHERE product_id = $1 AND event_type = 'proof.health.warning'`, [productId]));

  before(async () => {
    tenant = await createPlacementTenant();
  });

  it('warns once per finding for expiring consents and placements with excluded items, on a short interval', async () => {
    const soon = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const expiring = await approvedItem(tenant, submissionBody({ consent: { ...submissionBody().consent, validUntil: soon } }));
    const fine = await approvedItem(tenant);
    const placementId = await publishedPlacement(tenant, [fine.proofItemId, expiring.proofItemId]);
    // A revocation filed for an item excludes it from every render at once.
    const revoke = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${fine.proofItemId}/revoke` }));
    assert.equal(revoke.statusCode, 202, revoke.body);

    const app = await ctx.buildApp({ proofHealthIntervalMs: 200 });
    const run = await call({ method: 'POST', url: '/api/workspace/proof/health/run', payload: { productId: tenant.product.id },
      headers: { cookie: tenant.owner.cookie, 'x-csrf-token': tenant.owner.csrfToken } }, app);
    assert.equal(run.statusCode, 202, run.body);
    assert.equal(run.json().data.workflowId, `proof-health/${tenant.product.id}`);
    // The route only writes the command; the outbox relay signals (or starts) the workflow.
    const commands = await ctx.dataSource.query(`SELECT command FROM workflow_commands WHERE ordering_key = $1`, [`proof-health/${tenant.product.id}`]);
    assert.deepEqual(commands.map((c: { command: { type: string; intervalMs: number } }) => [c.command.type, c.command.intervalMs]),
      [['proof.health.run', 200]]);

    const found = await eventually(async () => {
      const w = await warnings(tenant.product.id);
      return w.length >= 2 ? w : null;
    });
    // Several more rounds pass (200 ms each) without a second warning for the same findings.
    const handle = ctx.temporal.workflow.getHandle(`proof-health/${tenant.product.id}`);
    const before = (await handle.fetchHistory()).events?.length ?? 0;
    await eventually(async () => ((await handle.fetchHistory()).events?.length ?? 0) > before + 12);
    const after = await warnings(tenant.product.id);
    assert.equal(after.length, 2, JSON.stringify(after));
    const consent = found.find((w) => (w.properties as Record<string, unknown>).check === 'consent_expiring')!;
    assert.equal(consent.proof_item_id, expiring.proofItemId);
    assert.equal((consent.properties as Record<string, unknown>).dueAt, soon);
    const placement = found.find((w) => (w.properties as Record<string, unknown>).check === 'placement_excluded_items')!;
    assert.equal(placement.placement_id, placementId);
    assert.equal((placement.properties as Record<string, unknown>).count, 1);
    const outbox = await ctx.dataSource.query(`SELECT payload FROM outbox_events WHERE product_id = $1 AND event_type = 'proof.health.warning'`,
      [tenant.product.id]);
    assert.equal(outbox.length, 2);

    const open = await asOwner(tenant, 'GET', `/api/workspace/proof/health?productId=${tenant.product.id}`);
    assert.deepEqual(open.json().data.map((f: { check: string }) => f.check).sort(), ['consent_expiring', 'placement_excluded_items']);
    await handle.terminate('test done');
  });

  it('keeps health to the own organization and to people', async () => {
    const other = await createTenant();
    assert.equal(errorCode(await asOwner(other, 'POST', '/api/workspace/proof/health/run', { productId: tenant.product.id })), 'NOT_FOUND');
    assert.equal((await asOwner(other, 'GET', '/api/workspace/proof/health')).json().data.length, 0);
    assert.equal(errorCode(await call(withKey(tenant.key, { method: 'GET', url: '/api/workspace/proof/health' }))), 'FORBIDDEN');
  });

  it('answers 404 on the video host webhook unless its secret is configured, then verifies its signature', async () => {
    const payload = JSON.stringify({ uid: 'abc123', readyToStream: true, status: { state: 'ready' }, meta: { mediaAssetId: 'med_x' } });
    const off = await call({ method: 'POST', url: '/api/public/proof/stream/webhook', payload, headers: { 'content-type': 'application/json' } });
    assert.equal(off.statusCode, 404);
    const app = await ctx.buildApp({ proofStreamWebhookSecret: 'stream-secret' });
    const sign = (time: number, secret = 'stream-secret') => `time=${time},sig1=${createHmac('sha256', secret).update(`${time}.${payload}`).digest('hex')}`;
    const send = (header?: string) => call({ method: 'POST', url: '/api/public/proof/stream/webhook', payload,
      headers: { 'content-type': 'application/json', ...(header ? { 'webhook-signature': header } : {}) } }, app);
    const now = Math.floor(Date.now() / 1000);
    const ok = await send(sign(now));
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json().data, { received: true });
    // A minute beyond the 300 s tolerance either way, so a slow run cannot slip back inside it.
    for (const header of [undefined, sign(now - 360), sign(now + 360), sign(now, 'other')]) {
      const res = await send(header);
      assert.equal(res.statusCode, 400, `${header}: ${res.body}`);
      assert.equal(res.json().error.details[0].path, 'webhook-signature');
    }
  });
});
