import assert from 'node:assert/strict';
import { asTeammate, call, errorCode, withKey } from '../support/fixtures';
import {
  PlacementTenant, approvedItem, createPlacement, createPlacementTenant, place, publish, rawQuery, submit,
} from '../support/proof-fixtures';

describe('proof placements', () => {
  let tenant: PlacementTenant;
  const as = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    call(withKey(key, { method, url, ...(payload ? { payload } : {}) }));

  before(async () => {
    tenant = await createPlacementTenant();
  });

  it('creates as draft with the key\'s product, lists by state, patches only what it may, archives on DELETE', async () => {
    const created = await createPlacement(tenant, { hostContext: 'third_party', geography: 'de', eligibilityPolicy: { requireVerified: true } });
    assert.equal(created.state, 'draft');
    assert.equal(created.productId, tenant.product.id);
    assert.equal(created.geography, 'DE');
    assert.equal(created.renderCacheVersion, 1);
    const drafts = (await as(tenant.readKey, 'GET', '/api/v1/proof/placements?state=draft')).json();
    assert.ok(drafts.data.some((p: { id: string }) => p.id === created.id));
    assert.equal((await as(tenant.readKey, 'GET', '/api/v1/proof/placements?state=active')).json().data.length, 0);

    const patched = await as(tenant.publishKey, 'PATCH', `/api/v1/proof/placements/${created.id}`,
      { name: 'Pricing', state: 'paused', renderConfig: { theme: 'dark' } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json().data.name, patched.json().data.state, patched.json().data.renderCacheVersion], ['Pricing', 'paused', 2]);
    for (const payload of [{ channel: 'email' }, { state: 'draft' }, {}, { eligibilityPolicy: { unknownRule: true } }]) {
      const res = await as(tenant.publishKey, 'PATCH', `/api/v1/proof/placements/${created.id}`, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
    }
    assert.equal(errorCode(await as(tenant.readKey, 'PATCH', `/api/v1/proof/placements/${created.id}`, { name: 'x' })), 'INSUFFICIENT_SCOPE');
    const archived = await as(tenant.publishKey, 'DELETE', `/api/v1/proof/placements/${created.id}`);
    assert.equal(archived.json().data.state, 'archived');
    assert.equal(archived.json().data.renderCacheVersion, 3);
    assert.equal((await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${created.id}`)).json().data.state, 'archived');
    const ledger = await rawQuery(`SELECT event_type FROM proof_events WHERE placement_id = $1 ORDER BY created_at`,
      [created.id]) as Array<{ event_type: string }>;
    assert.deepEqual(ledger.map((r) => r.event_type), ['proof.placement.created', 'proof.placement.updated', 'proof.placement.archived']);
  });

  it('places items with the current decision, lists them in position order live, removes them', async () => {
    const placement = await createPlacement(tenant);
    const approved = await approvedItem(tenant);
    const pending = await submit(tenant);
    const first = await place(tenant, placement.id, { proofItemId: pending.proofItemId, position: 5 });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().data.eligible, false);
    assert.deepEqual(first.json().data.reasons, ['not_approved']);
    const second = await place(tenant, placement.id, { proofItemId: approved.proofItemId, versionId: approved.originalVersionId, position: 1 });
    assert.deepEqual(second.json().data, {
      id: second.json().data.id, proofItemId: approved.proofItemId, versionId: approved.originalVersionId, position: 1,
      state: 'active', removedReason: null, eligible: true, reasons: [], disclosure: null,
    });
    assert.equal(errorCode(await place(tenant, placement.id, { proofItemId: approved.proofItemId })), 'CONFLICT');
    assert.equal((await place(tenant, placement.id, { proofItemId: approved.proofItemId, extra: 1 })).statusCode, 400);

    const list = (await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${placement.id}/items`)).json();
    assert.deepEqual(list.data.map((i: { proofItemId: string }) => i.proofItemId), [approved.proofItemId, pending.proofItemId]);
    const expanded = (await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${placement.id}?expand=items`)).json().data;
    assert.equal(expanded.expanded.items.data.length, 2);
    assert.equal(expanded.expanded.items.hasMore, false);
    assert.equal(errorCode(await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${placement.id}?expand=versions`)), 'VALIDATION_FAILED');

    const removed = await as(tenant.publishKey, 'DELETE', `/api/v1/proof/placements/${placement.id}/items/${first.json().data.id}`);
    assert.equal(removed.json().data.state, 'removed');
    assert.equal((await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${placement.id}/items`)).json().data.length, 1);
    assert.equal((await as(tenant.publishKey, 'DELETE', `/api/v1/proof/placements/${placement.id}/items/${first.json().data.id}`)).statusCode, 404);
  });

  it('publish counts the excluded; a dry run answers the same counts and writes nothing', async () => {
    const placement = await createPlacement(tenant);
    await place(tenant, placement.id, { proofItemId: (await approvedItem(tenant)).proofItemId });
    await place(tenant, placement.id, { proofItemId: (await submit(tenant)).proofItemId });
    const ledgerCount = async () => ((await rawQuery(`SELECT count(*)::int AS n FROM proof_events WHERE placement_id = $1`,
      [placement.id])) as Array<{ n: number }>)[0].n;
    const placementRow = () => rawQuery(
      `SELECT p.state, p.render_cache_version, p.published_at, p.updated_at,
              (SELECT count(*)::int FROM outbox_events o WHERE o.organization_id = p.organization_id AND o.payload->>'placementId' = p.id) AS events
       FROM proof_placements p WHERE p.id = $1`, [placement.id]);
    const before = await ledgerCount();
    const rowBefore = await placementRow();
    const dry = await publish(tenant, placement.id, '?dryRun=true');
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual([dry.json().data.eligibleCount, dry.json().data.excludedCount, dry.json().data.placement.state], [1, 1, 'draft']);
    assert.equal(await ledgerCount(), before);
    assert.deepEqual(await placementRow(), rowBefore, 'the placement row and the outbox are untouched');
    const real = await publish(tenant, placement.id);
    assert.deepEqual([real.json().data.eligibleCount, real.json().data.excludedCount, real.json().data.placement.state], [1, 1, 'active']);
    const published = (await as(tenant.readKey, 'GET', '/api/v1/proof/items?status=published')).json().data;
    assert.equal(published.length, 2, 'published: placed on an active placement');
    const events = await rawQuery(`SELECT id, properties FROM proof_events WHERE placement_id = $1 AND event_type = 'proof.placement.published'`,
      [placement.id]) as Array<{ id: string }>;
    assert.equal(events.length, 1);
    const outbox = await rawQuery(`SELECT event_type, payload FROM outbox_events WHERE id = $1`,
      [`evt_${events[0].id}`]) as Array<{ event_type: string; payload: { placementId: string; fetchUrl: string; properties: object } }>;
    assert.equal(outbox[0].event_type, 'proof.placement.published');
    assert.equal(outbox[0].payload.placementId, placement.id);
    assert.equal(outbox[0].payload.fetchUrl, `/api/v1/proof/placements/${placement.id}`);
    assert.deepEqual(outbox[0].payload.properties, { renderCacheVersion: real.json().data.placement.renderCacheVersion, eligibleCount: 1, excludedCount: 1 });
  });

  it('expand=items carries the first 50 rows and hasMore', async () => {
    const placement = await createPlacement(tenant);
    for (let i = 0; i < 51; i++) await place(tenant, placement.id, { proofItemId: (await submit(tenant)).proofItemId, position: i });
    const items = (await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${placement.id}?expand=items`)).json().data.expanded.items;
    assert.equal(items.data.length, 50);
    assert.equal(items.hasMore, true);
    assert.deepEqual(items.data.slice(0, 2).map((i: { position: number }) => i.position), [0, 1]);
  });

  it('another product\'s placement or item answers 404', async () => {
    const other = await createPlacementTenant();
    const mine = await createPlacement(tenant);
    const theirs = await approvedItem(other);
    for (const [method, url, payload] of [
      ['GET', `/api/v1/proof/placements/${mine.id}`], ['GET', `/api/v1/proof/placements/${mine.id}/items`],
      ['PATCH', `/api/v1/proof/placements/${mine.id}`, { name: 'x' }], ['DELETE', `/api/v1/proof/placements/${mine.id}`],
      ['POST', `/api/v1/proof/placements/${mine.id}/publish`], ['POST', `/api/v1/proof/placements/${mine.id}/items`, { proofItemId: theirs.proofItemId }],
    ] as Array<['GET' | 'POST' | 'PATCH' | 'DELETE', string, object?]>) {
      assert.equal((await as(other.publishKey, method, url, payload)).statusCode, 404, `${method} ${url}`);
    }
    assert.equal((await place(tenant, mine.id, { proofItemId: theirs.proofItemId })).statusCode, 404);
    assert.ok(!(await as(other.readKey, 'GET', '/api/v1/proof/placements')).json().data.some((p: { id: string }) => p.id === mine.id));
  });
  it('paid use goes live only by a person: a key gets HUMAN_APPROVAL_REQUIRED, the workspace publish works', async () => {
    const paid = await createPlacement(tenant, { channel: 'paid_ads', placementType: 'campaign' });
    const keyPublish = await publish(tenant, paid.id);
    assert.equal(keyPublish.statusCode, 403);
    assert.equal(errorCode(keyPublish), 'HUMAN_APPROVAL_REQUIRED');
    const paidEvents = async () => ((await rawQuery(`SELECT count(*)::int AS n FROM proof_events WHERE placement_id = $1`,
      [paid.id])) as Array<{ n: number }>)[0].n;
    const paidEventsBefore = await paidEvents();
    assert.equal((await publish(tenant, paid.id, '?dryRun=true')).statusCode, 200, 'a dry run writes nothing and is allowed');
    assert.equal(await paidEvents(), paidEventsBefore, 'the dry run wrote nothing');
    const keyActivate = await as(tenant.publishKey, 'PATCH', `/api/v1/proof/placements/${paid.id}`, { state: 'active' });
    assert.equal(errorCode(keyActivate), 'HUMAN_APPROVAL_REQUIRED');
    assert.equal((await as(tenant.readKey, 'GET', `/api/v1/proof/placements/${paid.id}`)).json().data.state, 'draft');

    const website = await createPlacement(tenant);
    assert.equal((await publish(tenant, website.id)).statusCode, 200);
    const turnPaid = await as(tenant.publishKey, 'PATCH', `/api/v1/proof/placements/${website.id}`, { eligibilityPolicy: { paidUse: true } });
    assert.equal(errorCode(turnPaid), 'HUMAN_APPROVAL_REQUIRED', 'a live placement cannot be switched to paid use by a key');

    const url = `/api/workspace/proof/placements/${paid.id}/publish`;
    assert.equal(errorCode(await call(withKey(tenant.publishKey, { method: 'POST', url }))), 'HUMAN_APPROVAL_REQUIRED');
    const stranger = await createPlacementTenant();
    assert.equal((await call(asTeammate(stranger.owner, { method: 'POST', url }))).statusCode, 404);
    const human = await call(asTeammate(tenant.owner, { method: 'POST', url }));
    assert.equal(human.statusCode, 200, human.body);
    assert.equal(human.json().data.placement.state, 'active');
    const ledger = await rawQuery(`SELECT actor_type FROM proof_events WHERE placement_id = $1 AND event_type = 'proof.placement.published'`,
      [paid.id]) as Array<{ actor_type: string }>;
    assert.deepEqual(ledger.map((r) => r.actor_type), ['teammate']);
  });
});
