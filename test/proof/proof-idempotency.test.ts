import assert from 'node:assert/strict';
import { FastifyInstance, InjectOptions } from 'fastify';
import { call, withKey } from '../support/fixtures';
import { PlacementTenant, approvedItem, createPlacement, createPlacementTenant, place, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';

/**
 * Every proof write that takes an Idempotency-Key stores its answer in its own transaction: an API that
 * dies after the commit and before answering leaves a record the retry replays, and nothing is written twice.
 */
describe('proof idempotency: the answer commits with the write', () => {
  let tenant: PlacementTenant;
  let crashing: FastifyInstance;

  before(async () => {
    tenant = await createPlacementTenant();
    // The answer is lost between the commit and the reply, as if the process had died there.
    crashing = await ctx.buildApp({}, (a) => {
      a.addHook('preSerialization', async (request, _reply, payload) => {
        if (request.headers['x-test-lose-answer'] && !(payload as { error?: unknown }).error) throw new Error('process died');
        return payload;
      });
    }, { checkAnswers: false });
  });

  /** Every row the service writes for a product's proof: ledger, versions, assets, placements, placed items, revocations, workflow commands. */
  async function writes(): Promise<Record<string, number>> {
    const [row] = await ctx.dataSource.query(
      `SELECT (SELECT count(*) FROM proof_events WHERE product_id = $1)::int AS ledger,
              (SELECT count(*) FROM proof_versions v JOIN proof_items i ON i.id = v.proof_item_id WHERE i.product_id = $1)::int AS versions,
              (SELECT count(*) FROM proof_assets WHERE product_id = $1)::int AS assets,
              (SELECT count(*) FROM proof_placements WHERE product_id = $1)::int AS placements,
              (SELECT count(*) FROM proof_placement_items pi JOIN proof_placements p ON p.id = pi.placement_id WHERE p.product_id = $1)::int AS placed,
              (SELECT count(*) FROM proof_revocations r JOIN proof_items i ON i.id = r.proof_item_id WHERE i.product_id = $1)::int AS revocations,
              (SELECT count(*) FROM proof_approval_requests r JOIN proof_items i ON i.id = r.proof_item_id WHERE i.product_id = $1)::int AS approvals`,
      [tenant.product.id]);
    return row;
  }

  async function crashThenRetry(name: string, request: (key: string) => InjectOptions, status: number): Promise<void> {
    const headers = { 'idempotency-key': `crash-${name}-${Date.now()}` };
    const base = request(headers['idempotency-key']);
    const before = await writes();
    const lost = await call({ ...base, headers: { ...base.headers, ...headers, 'x-test-lose-answer': '1' } }, crashing);
    assert.equal(lost.statusCode, 500, `${name}: the answer was lost`);
    const afterFirst = await writes();
    assert.notDeepEqual(afterFirst, before, `${name}: the first call wrote`);
    const retry = await call({ ...base, headers: { ...base.headers, ...headers } });
    assert.equal(retry.statusCode, status, `${name}: ${retry.body}`);
    assert.equal(retry.headers['idempotent-replayed'], 'true', `${name}: the retry replays the stored answer`);
    assert.ok(retry.json().data, `${name}: the stored answer is the data envelope`);
    assert.deepEqual(await writes(), afterFirst, `${name}: nothing written twice`);
  }

  it('item writes: new version, approval request, revocation of an item and of a consent, quote card', async () => {
    const s = await submit(tenant);
    const version = { content: { text: 'We cut onboarding from 9 days to 3.', title: 'Faster onboarding', rating: 4 }, changeReason: 'shorter' };
    await crashThenRetry('version', () => withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`, payload: version }), 201);
    await crashThenRetry('approval', () => withKey(tenant.key, {
      method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/request-approval`, payload: { versionId: s.originalVersionId },
    }), 200);
    const a = await approvedItem(tenant);
    await crashThenRetry('quote-card', () => withKey(tenant.key, {
      method: 'POST', url: '/api/v1/proof/assets/generate', payload: { proofItemId: a.proofItemId, format: 'square', channel: 'website' },
    }), 201);
    await crashThenRetry('revoke-item', () => withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke`, payload: {} }), 202);
    await crashThenRetry('revoke-consent', () => withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/consents/${a.consentGrantId}/revoke` }), 202);
  });

  it('placement writes: create, update, place an item, remove it, publish, archive', async () => {
    const a = await approvedItem(tenant);
    await crashThenRetry('create-placement', () => withKey(tenant.publishKey, {
      method: 'POST', url: '/api/v1/proof/placements', payload: { name: 'Pricing wall', placementType: 'wall', channel: 'website' },
    }), 201);
    const p = await createPlacement(tenant);
    await crashThenRetry('update-placement', () => withKey(tenant.publishKey,
      { method: 'PATCH', url: `/api/v1/proof/placements/${p.id}`, payload: { name: 'Renamed' } }), 200);
    await crashThenRetry('place-item', () => withKey(tenant.publishKey,
      { method: 'POST', url: `/api/v1/proof/placements/${p.id}/items`, payload: { proofItemId: a.proofItemId } }), 201);
    const b = await approvedItem(tenant);
    const placed = (await place(tenant, p.id, { proofItemId: b.proofItemId })).json().data;
    await crashThenRetry('remove-item', () => withKey(tenant.publishKey, { method: 'DELETE', url: `/api/v1/proof/placements/${p.id}/items/${placed.id}` }),
      200);
    await crashThenRetry('publish', () => withKey(tenant.publishKey, { method: 'POST', url: `/api/v1/proof/placements/${p.id}/publish` }), 200);
    await crashThenRetry('archive', () => withKey(tenant.publishKey, { method: 'DELETE', url: `/api/v1/proof/placements/${p.id}` }), 200);
  });
});
