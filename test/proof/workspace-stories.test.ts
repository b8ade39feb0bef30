import assert from 'node:assert/strict';
import { createProduct } from '../../db/platform/tenancy';
import { createServiceKey } from '../../db/platform/service-keys';
import { asTeammate, call, errorCode, sessionFor, withKey } from '../support/fixtures';
import { ProofTenant, approvedItem, createProofTenant, submissionBody, submit } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';

type Json = Record<string, any>;

describe('proof: the workspace\'s stories and draft assets for the console (list, one item with versions and consent, assets by state)', () => {
  let tenant: ProofTenant;
  let stranger: ProofTenant;
  const get = (url: string, session = tenant.owner) => call(asTeammate(session, { method: 'GET', url }));

  before(async () => {
    tenant = await createProofTenant();
    stranger = await createProofTenant();
  });

  it('lists every product\'s items of the workspace with their excerpt, by status and product, paged; any teammate reads, a key is refused', async () => {
    const other = await createProduct(ctx.dataSource, { organizationId: tenant.organizationId, name: 'Second product' });
    const otherKey = await createServiceKey(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: other.id, environment: 'production', scopes: ['service:proof:submissions:write'],
    });
    const approved = await approvedItem(tenant);
    const long = 'Long words. '.repeat(20);
    const pending = await submit({ ...tenant, key: otherKey.secret }, submissionBody({ content: { text: long } }));
    const hidden = await submit(stranger);

    const listed = await get('/api/workspace/proof/items');
    assert.equal(listed.statusCode, 200, listed.body);
    const rows = listed.json().data as Json[];
    assert.deepEqual(rows.map((i) => [i.id, i.productId, i.status]), [
      [pending.proofItemId, other.id, 'submitted'], [approved.proofItemId, tenant.product.id, 'approved'],
    ], 'newest first, both products, not another workspace\'s');
    assert.ok(!rows.some((i) => i.id === hidden.proofItemId));
    assert.equal(rows[1].excerpt, 'Faster onboarding', 'the original\'s title');
    assert.equal(rows[0].excerpt, `${long.slice(0, 139)}…`, 'else the start of its text, cut at 140 characters');

    assert.deepEqual((await get('/api/workspace/proof/items?status=approved')).json().data.map((i: Json) => i.id), [approved.proofItemId]);
    assert.deepEqual((await get(`/api/workspace/proof/items?productId=${other.id}`)).json().data.map((i: Json) => i.id), [pending.proofItemId]);
    const paged = (await get('/api/workspace/proof/items?limit=1')).json();
    assert.deepEqual(paged.data.map((i: Json) => i.id), [pending.proofItemId]);
    assert.equal((await get(`/api/workspace/proof/items?limit=1&cursor=${paged.nextCursor}`)).json().data[0].id, approved.proofItemId);
    assert.equal(errorCode(await get('/api/workspace/proof/items?status=live')), 'VALIDATION_FAILED');

    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await get('/api/workspace/proof/items', member)).json().data.length, 2, 'a member reads the stories');
    assert.equal((await call(withKey(tenant.key, { method: 'GET', url: '/api/workspace/proof/items' }))).statusCode, 403, 'a key is refused');
  });

  it('one item answers every version, approved or not, and its consent grants; another workspace\'s is not found', async () => {
    const s = await approvedItem(tenant);
    const derived = await call(withKey(tenant.key, {
      method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`,
      payload: { content: { text: 'We cut onboarding from 9 days to 2 days.' }, changeReason: 'spelled out', parentVersionId: s.originalVersionId },
    }));
    assert.equal(derived.statusCode, 201, derived.body);
    const member = await sessionFor(tenant.organizationId, 'member');
    const read = await get(`/api/workspace/proof/items/${s.proofItemId}`, member);
    assert.equal(read.statusCode, 200, read.body);
    const d = read.json().data;
    assert.equal(d.item.id, s.proofItemId);
    assert.deepEqual(d.versions.map((v: Json) => [v.versionNumber, v.isOriginal, v.approvalState]), [[1, true, 'approved'], [2, false, 'draft']]);
    assert.equal(d.consent.status, 'granted');
    assert.deepEqual(d.consent.grants.map((g: Json) => [g.id, g.approvedVersionId, g.state]), [[s.consentGrantId, s.originalVersionId, 'active']]);
    assert.equal((await get(`/api/workspace/proof/items/${s.proofItemId}`, stranger.owner)).statusCode, 404);
  });

  it('lists the workspace\'s assets by approval state, not those quoting a revoked story; approving moves one from draft to approved', async () => {
    const item = await approvedItem(tenant);
    const card = await call(withKey(tenant.key, {
      method: 'POST', url: '/api/v1/proof/assets/generate', payload: { proofItemId: item.proofItemId, channel: 'website' },
    }));
    assert.equal(card.statusCode, 201, card.body);
    const asset = card.json().data;
    const drafts = async () => ((await get('/api/workspace/proof/assets?state=draft')).json().data as Json[]).map((a) => a.id);
    assert.ok((await drafts()).includes(asset.id));
    const listed = ((await get('/api/workspace/proof/assets?state=draft')).json().data as Json[]).find((a) => a.id === asset.id)!;
    assert.deepEqual([listed.productId, listed.assetType, listed.sourceProofIds], [tenant.product.id, 'quote_card', [item.proofItemId]]);
    assert.deepEqual((await get('/api/workspace/proof/assets?state=draft', stranger.owner)).json().data, [], 'not another workspace\'s');
    assert.equal(errorCode(await get('/api/workspace/proof/assets?state=pending')), 'VALIDATION_FAILED');

    const approved = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/proof/assets/${asset.id}/approve` }));
    assert.equal(approved.statusCode, 200, approved.body);
    assert.ok(!(await drafts()).includes(asset.id));
    assert.ok(((await get('/api/workspace/proof/assets?state=approved')).json().data as Json[]).some((a) => a.id === asset.id));

    const second = await call(withKey(tenant.key, {
      method: 'POST', url: '/api/v1/proof/assets/generate', payload: { proofItemId: item.proofItemId, channel: 'website' },
    }));
    assert.equal(second.statusCode, 201, second.body);
    const filed = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${item.proofItemId}/revoke` }));
    assert.equal(filed.statusCode, 202, filed.body);
    const completed = await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/workspace/proof/revocations/${filed.json().data.revocation.id}/complete`,
    }));
    assert.equal(completed.statusCode, 200, completed.body);
    assert.ok(!((await get('/api/workspace/proof/assets')).json().data as Json[]).some((a) => a.id === asset.id), 'its story is revoked');
    const late = await call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/proof/assets/${second.json().data.id}/approve` }));
    assert.equal(late.statusCode, 409, 'a draft quoting a revoked story cannot be approved');
    assert.equal(errorCode(late), 'CONFLICT');
  });
});
