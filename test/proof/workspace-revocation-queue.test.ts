import assert from 'node:assert/strict';
import { asTeammate, call, createTenant, errorCode, sessionFor, withKey } from '../support/fixtures';
import {
  PlacementTenant, approvedItem, createPlacementTenant, publishedPlacement, requestApproval, submit,
} from '../support/proof-fixtures';

describe('workspace: revocations awaiting completion and the review queue\'s context (console views)', function () {
  this.timeout(60_000);
  let t: PlacementTenant;

  before(async () => {
    t = await createPlacementTenant();
  });

  const open = (session: { cookie: string; csrfToken: string }) =>
    call(asTeammate(session, { method: 'GET', url: '/api/workspace/proof/revocations?limit=100' }));

  it('lists open revocations oldest first with the SLA deadline and the placements still listing the item; a completed one leaves', async () => {
    const s = await approvedItem(t);
    const placementId = await publishedPlacement(t, [s.proofItemId]);
    const filed = await call(withKey(t.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke`, payload: { requestText: 'Take it down.' } }));
    const revocation = filed.json().data.revocation;
    const res = await open(t.owner);
    assert.equal(res.statusCode, 200);
    const [entry] = res.json().data.filter((r: { id: string }) => r.id === revocation.id);
    assert.deepEqual({ ...entry, createdAt: undefined }, {
      id: revocation.id, proofItemId: s.proofItemId, productId: t.product.id, requestText: 'Take it down.', resolutionState: 'pending',
      immediatePolicyAction: 'stop_new_renders', slaDeadlineAt: revocation.slaDeadlineAt, requestedBy: entry.requestedBy, createdAt: undefined,
      listedIn: [{ placementId, name: 'Home wall', state: 'active' }],
    });
    const done = await call(asTeammate(t.owner, { method: 'POST', url: `/api/workspace/proof/revocations/${revocation.id}/complete` }));
    assert.equal(done.statusCode, 200);
    assert.ok(!(await open(t.owner)).json().data.some((r: { id: string }) => r.id === revocation.id));
  });

  it('pages with a cursor; owners and admins only; a key is FORBIDDEN; another workspace sees none of them', async () => {
    for (let i = 0; i < 2; i += 1) {
      const s = await approvedItem(t);
      await call(withKey(t.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke`, payload: {} }));
    }
    const first = await call(asTeammate(t.owner, { method: 'GET', url: '/api/workspace/proof/revocations?limit=1' }));
    assert.equal(first.json().data.length, 1);
    const cursor = first.json().nextCursor as string;
    const second = await call(asTeammate(t.owner, { method: 'GET', url: `/api/workspace/proof/revocations?limit=1&cursor=${encodeURIComponent(cursor)}` }));
    assert.notEqual(second.json().data[0].id, first.json().data[0].id);
    assert.equal((await open(await sessionFor(t.organizationId, 'admin'))).statusCode, 200);
    const member = await open(await sessionFor(t.organizationId, 'member'));
    assert.equal(member.statusCode, 403);
    assert.equal(errorCode(member), 'FORBIDDEN');
    const key = await call(withKey(t.key, { method: 'GET', url: '/api/workspace/proof/revocations' }));
    assert.equal(key.statusCode, 403);
    assert.equal(errorCode(key), 'FORBIDDEN');
    const other = await createTenant();
    assert.deepEqual((await open(other.owner)).json().data, []);
    const bad = await call(asTeammate(t.owner, { method: 'GET', url: '/api/workspace/proof/revocations?limit=0' }));
    assert.equal(bad.statusCode, 400);
  });

  it('the review queue carries the consent summary, and the original beside a derivative', async () => {
    const s = await submit(t);
    const derived = await call(withKey(t.key, {
      method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`,
      payload: { parentVersionId: s.originalVersionId, content: { text: 'Onboarding went from 9 days to 2.', title: 'Faster onboarding', rating: 5 },
        changeReason: 'shorter wording' },
    }));
    assert.equal(derived.statusCode, 201, derived.body);
    const versionId = derived.json().data.id as string;
    assert.equal((await requestApproval(t, s.proofItemId, versionId)).statusCode, 200);
    const queue = (await call(asTeammate(t.owner, { method: 'GET', url: '/api/workspace/proof/review-queue?limit=100' }))).json().data;
    const entry = queue.find((r: { versionId: string }) => r.versionId === versionId);
    assert.equal(entry.original.id, s.originalVersionId);
    assert.equal(entry.original.content.text, 'We cut onboarding from 9 days to 2.');
    assert.equal(entry.consent.proofItemId, s.proofItemId);
    assert.equal(entry.consent.grants[0].id, s.consentGrantId);
  });
});
