import assert from 'node:assert/strict';
import { createProduct } from '../../db/platform/tenancy';
import { createServiceKey } from '../../db/platform/service-keys';
import { asTeammate, call, errorCode, sessionFor, withKey } from '../support/fixtures';
import {
  PlacementTenant, approvedItem, createPlacement, createPlacementTenant, place, rawQuery, submit,
} from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';

type Json = Record<string, any>;

describe('proof: the workspace\'s placements for the console (list, items with their decision, publish dry run)', () => {
  let tenant: PlacementTenant;
  let stranger: PlacementTenant;
  const asOwner = (method: 'GET' | 'POST', url: string, session = tenant.owner) => call(asTeammate(session, { method, url }));

  before(async () => {
    tenant = await createPlacementTenant();
    stranger = await createPlacementTenant();
  });

  it('lists every product\'s placements of the workspace with their item counts, by state; only owners and admins, only with a session', async () => {
    const other = await createProduct(ctx.dataSource, { organizationId: tenant.organizationId, name: 'Second product' });
    const otherKey = await createServiceKey(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: other.id, environment: 'production', scopes: ['service:proof:publish'],
    });
    const mine = await createPlacement(tenant);
    const elsewhere = await call(withKey(otherKey.secret, {
      method: 'POST', url: '/api/v1/proof/placements', payload: { name: 'Docs sidebar', placementType: 'widget', channel: 'in_app' },
    }));
    assert.equal(elsewhere.statusCode, 201, elsewhere.body);
    const hidden = await createPlacement(stranger);
    const item = await approvedItem(tenant);
    assert.equal((await place(tenant, mine.id, { proofItemId: item.proofItemId })).statusCode, 201);

    const listed = await asOwner('GET', '/api/workspace/proof/placements');
    assert.equal(listed.statusCode, 200, listed.body);
    const rows = listed.json().data as Json[];
    assert.deepEqual(rows.map((p) => [p.id, p.productId, p.itemCount]), [
      [elsewhere.json().data.id, other.id, 0], [mine.id, tenant.product.id, 1],
    ], 'newest first, both products, not another workspace\'s');
    assert.ok(!rows.some((p) => p.id === hidden.id));
    assert.deepEqual((await asOwner('GET', '/api/workspace/proof/placements?state=active')).json().data, []);
    const paged = (await asOwner('GET', '/api/workspace/proof/placements?limit=1')).json();
    assert.equal(paged.data.length, 1);
    assert.equal((await asOwner('GET', `/api/workspace/proof/placements?limit=1&cursor=${paged.nextCursor}`)).json().data[0].id, mine.id);

    assert.equal(errorCode(await asOwner('GET', '/api/workspace/proof/placements?state=live')), 'VALIDATION_FAILED');
    const admin = await sessionFor(tenant.organizationId, 'admin');
    assert.equal((await asOwner('GET', '/api/workspace/proof/placements', admin)).statusCode, 200);
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal(errorCode(await asOwner('GET', '/api/workspace/proof/placements', member)), 'FORBIDDEN');
    assert.equal((await call(withKey(tenant.publishKey, { method: 'GET', url: '/api/workspace/proof/placements' }))).statusCode, 403, 'a key is refused');
  });

  it('lists a placement\'s items with why each is excluded, and a dry run counts what would render while writing nothing', async () => {
    const placement = await createPlacement(tenant);
    const approved = await approvedItem(tenant);
    const pending = await submit(tenant);
    for (const s of [approved, pending]) assert.equal((await place(tenant, placement.id, { proofItemId: s.proofItemId })).statusCode, 201);

    const items = await asOwner('GET', `/api/workspace/proof/placements/${placement.id}/items`);
    assert.equal(items.statusCode, 200, items.body);
    const byItem = new Map((items.json().data as Json[]).map((i) => [i.proofItemId, i]));
    assert.equal(byItem.get(approved.proofItemId)!.eligible, true);
    assert.equal(byItem.get(pending.proofItemId)!.eligible, false);
    assert.ok(byItem.get(pending.proofItemId)!.reasons.length > 0, 'the reasons it is excluded');
    assert.equal((await asOwner('GET', `/api/workspace/proof/placements/${placement.id}/items`, stranger.owner)).statusCode, 404, 'another workspace\'s placement');

    const ledger = async () => (await rawQuery('SELECT event_type FROM proof_events WHERE placement_id = $1', [placement.id]) as Json[]).length;
    const before = await ledger();
    const dry = await asOwner('POST', `/api/workspace/proof/placements/${placement.id}/publish?dryRun=true`);
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual([dry.json().data.eligibleCount, dry.json().data.excludedCount, dry.json().data.placement.state], [1, 1, 'draft']);
    assert.equal(await ledger(), before, 'a dry run writes nothing');
    assert.equal((await call({ method: 'GET', url: `/api/public/proof/render/${placement.id}` })).statusCode, 404, 'nothing renders yet');
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal(errorCode(await asOwner('POST', `/api/workspace/proof/placements/${placement.id}/publish?dryRun=true`, member)), 'FORBIDDEN');

    const real = await asOwner('POST', `/api/workspace/proof/placements/${placement.id}/publish`);
    assert.deepEqual([real.json().data.eligibleCount, real.json().data.excludedCount, real.json().data.placement.state], [1, 1, 'active']);
    const render = await call({ method: 'GET', url: `/api/public/proof/render/${placement.id}` });
    assert.deepEqual(render.json().manifest.items.map((i: Json) => i.proofItemId), [approved.proofItemId]);
  });
});
