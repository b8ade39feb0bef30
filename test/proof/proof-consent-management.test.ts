import assert from 'node:assert/strict';
import { asTeammate, call, errorCode, sessionFor, withKey } from '../support/fixtures';
import {
  ProofTenant, approvedItem, createProofTenant, getItem, ledgerTypes, submissionBody,
} from '../support/proof-fixtures';

describe('consent management (people only)', () => {
  let tenant: ProofTenant;
  const terms = (patch: Record<string, unknown> = {}) => ({ ...submissionBody().consent, ...patch });
  const record = (itemId: string, body: object, session = tenant.owner) =>
    call(asTeammate(session, { method: 'POST', url: `/api/workspace/proof/items/${itemId}/consents`, payload: body }));

  before(async () => {
    tenant = await createProofTenant();
  });

  it('a person records changed terms: they supersede the active grant at once, with a receipt and a ledger row', async () => {
    const s = await approvedItem(tenant);
    const before = (await getItem(tenant.key, s.proofItemId)).json().data;
    assert.ok(before.eligibleChannels.includes('website'));

    const res = await record(s.proofItemId, { versionId: s.originalVersionId, consent: terms({ channels: ['email'] }) });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().data.channels, ['email']);
    assert.equal(res.json().data.state, 'active');
    assert.ok(res.json().data.receiptHash);

    const after = (await getItem(tenant.key, s.proofItemId)).json().data;
    assert.deepEqual(after.eligibleChannels, ['email'], 'the narrower terms win at once');
    const consent = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/consent` }))).json().data;
    const states = Object.fromEntries(consent.grants.map((g: { id: string; state: string }) => [g.id, g.state]));
    assert.equal(states[s.consentGrantId], 'superseded');
    assert.equal(states[res.json().data.id], 'active');
    assert.equal((await ledgerTypes(s.proofItemId)).filter((t) => t === 'proof.consent.granted').length, 2);
  });

  it('keys are FORBIDDEN to grant or change consent, on their own routes and on the workspace route', async () => {
    const s = await approvedItem(tenant);
    const body = { versionId: s.originalVersionId, consent: terms() };
    for (const [method, url] of [['POST', `/api/v1/proof/items/${s.proofItemId}/consents`], ['PATCH', `/api/v1/proof/consents/${s.consentGrantId}`]] as const) {
      const res = await call(withKey(tenant.key, { method, url, payload: body }));
      assert.equal(res.statusCode, 403, url);
      assert.equal(errorCode(res), 'FORBIDDEN');
    }
    const onWorkspace = await call(withKey(tenant.key, { method: 'POST', url: `/api/workspace/proof/items/${s.proofItemId}/consents`, payload: body }));
    assert.equal(errorCode(onWorkspace), 'FORBIDDEN');
    const member = await sessionFor(tenant.organizationId, 'member');
    assert.equal((await record(s.proofItemId, body, member)).statusCode, 403);
    assert.equal((await getItem(tenant.key, s.proofItemId)).json().data.eligibleChannels.length, 3, 'nothing changed');
  });

  it('refuses another workspace\'s item, a version of another item, and bad terms', async () => {
    const s = await approvedItem(tenant);
    const other = await createProofTenant();
    const theirs = await approvedItem(other);
    assert.equal((await record(theirs.proofItemId, { versionId: theirs.originalVersionId, consent: terms() })).statusCode, 404);
    assert.equal((await record(s.proofItemId, { versionId: theirs.originalVersionId, consent: terms() })).statusCode, 404);
    const bad = await record(s.proofItemId, { versionId: s.originalVersionId, consent: terms({ channels: ['billboards'] }) });
    assert.equal(bad.statusCode, 400);
    assert.equal(errorCode(bad), 'VALIDATION_FAILED');
  });
});
