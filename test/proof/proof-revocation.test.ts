import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { asTeammate, call, errorCode, settledHandle, withKey } from '../support/fixtures';
import {
  ProofTenant, approve, approvedItem, createProofTenant, eventually, getItem, ledgerTypes, requestApproval, submit,
} from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { approvalWorkflowId, revocationWorkflowId } from '../../workflows/workflow-ids';

describe('revocation (real Temporal)', () => {
  let tenant: ProofTenant;
  let app: FastifyInstance;
  const revoke = (itemId: string, payload?: object) =>
    call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/revoke`, ...(payload ? { payload } : {}) }), app);
  const complete = (revocationId: string) =>
    call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/proof/revocations/${revocationId}/complete` }), app);
  const exportedIds = async () => {
    const res = await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/proof/exports' }), app);
    return res.json().data.bundle.items.map((i: { id: string }) => i.id);
  };

  before(async () => {
    tenant = await createProofTenant();
    app = await ctx.buildApp({ proofRevocationSlaMs: 1_000 });
  });

  it('a key files a request (202); new renders stop at once; nothing else changes until a person acts', async () => {
    const s = await approvedItem(tenant);
    assert.deepEqual((await getItem(tenant.key, s.proofItemId)).json().data.eligibleChannels, ['website', 'in_app', 'email']);
    const res = await revoke(s.proofItemId, { requestText: 'The customer asked us by phone.' });
    assert.equal(res.statusCode, 202, res.body);
    const data = res.json().data;
    assert.equal(data.requestOnly, true);
    assert.equal(data.revocation.resolutionState, 'pending');
    assert.equal(data.revocation.immediatePolicyAction, 'stop_new_renders');
    assert.ok(Date.parse(data.revocation.slaDeadlineAt) > Date.now());
    const item = (await getItem(tenant.key, s.proofItemId)).json().data;
    assert.deepEqual(item.eligibleChannels, []);
    assert.ok(item.eligibility.every((e: { reasons: string[] }) => e.reasons.includes('revocation_pending')));
    assert.equal(item.item.status, 'approved', 'the status waits for a person');
    const described = await (await settledHandle(revocationWorkflowId(data.revocation.id))).describe();
    assert.equal(described.status.name, 'RUNNING');
    assert.deepEqual(described.memo, { organizationId: tenant.organizationId, productId: tenant.product.id });
    const again = await revoke(s.proofItemId);
    assert.equal(again.json().data.revocation.id, data.revocation.id, 'filing again answers the open request');
    assert.ok(!(await exportedIds()).includes(s.proofItemId), 'on hold: not exported');
  });

  it('the SLA passing escalates once with proof.health.warning; completion afterwards is still final', async () => {
    const s = await approvedItem(tenant);
    const filed = (await revoke(s.proofItemId)).json().data.revocation;
    await eventually(async () => ((await ledgerTypes(s.proofItemId)).includes('proof.health.warning') ? true : undefined));
    const row = await ctx.dataSource.query('SELECT resolution_state FROM proof_revocations WHERE id = $1', [filed.id]);
    assert.equal(row[0].resolution_state, 'escalated');
    const warning = await ctx.dataSource.query(
      `SELECT payload FROM outbox_events WHERE event_type = 'proof.health.warning' AND payload->>'proofItemId' = $1`, [s.proofItemId]);
    assert.deepEqual(warning[0].payload.properties, { check: 'revocation_sla_missed', revocationId: filed.id });
    const done = await complete(filed.id);
    assert.equal(done.statusCode, 200, done.body);
    const handle = (await settledHandle(revocationWorkflowId(filed.id)));
    assert.equal(await handle.result(), 'completed_after_escalation');
    assert.equal((await ledgerTypes(s.proofItemId)).filter((t) => t === 'proof.health.warning').length, 1);
  });

  it('completion is final and wins over an earlier approval: never approved, exported or revoked anew', async () => {
    const s = await approvedItem(tenant);
    assert.ok((await exportedIds()).includes(s.proofItemId));
    const filed = (await revoke(s.proofItemId)).json().data.revocation;
    const done = await complete(filed.id);
    assert.equal(done.statusCode, 200);
    assert.equal(done.json().data.revocation.resolutionState, 'completed');
    assert.equal(await (await settledHandle(revocationWorkflowId(filed.id))).result(), 'completed');
    const item = (await getItem(tenant.key, s.proofItemId)).json().data;
    assert.equal(item.item.status, 'revoked');
    assert.equal(item.item.approvedPublicVersionId, null);
    assert.equal(item.publicVersion, null);
    assert.deepEqual(item.eligibleChannels, []);
    const consent = (await call(withKey(tenant.key, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/consent` }), app)).json().data;
    assert.equal(consent.status, 'revoked');
    assert.ok(consent.grants.every((g: { state: string; revokedAt: string | null }) => g.state === 'revoked' && g.revokedAt));
    assert.ok(!(await exportedIds()).includes(s.proofItemId));
    for (const res of [
      await requestApproval(tenant, s.proofItemId, s.originalVersionId, app),
      await approve(tenant, s.proofItemId, s.originalVersionId, app),
      await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`,
        payload: { content: { text: 'x' }, changeReason: 'again' } }), app),
    ]) {
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(errorCode(res), 'REVOKED_FINAL');
    }
    const twice = await complete(filed.id);
    assert.equal(twice.statusCode, 409);
    const afterwards = await revoke(s.proofItemId);
    assert.equal(afterwards.statusCode, 202);
    assert.equal(afterwards.json().data.revocation.resolutionState, 'completed');
    const types = await ledgerTypes(s.proofItemId);
    assert.ok(types.includes('proof.revocation.requested') && types.includes('proof.consent.revoked'));
    const direct = await ctx.dataSource.query(
      `SELECT id FROM outbox_events WHERE event_type = 'proof.revocation.completed' AND payload->>'proofItemId' = $1`, [s.proofItemId]);
    assert.equal(direct.length, 1);
  });

  it('completion cancels a pending review and ends its workflow', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    const filed = (await revoke(s.proofItemId)).json().data.revocation;
    await complete(filed.id);
    assert.equal(await (await settledHandle(approvalWorkflowId(s.proofItemId, s.originalVersionId))).result(), 'cancelled');
    const queue = (await call(asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/proof/review-queue?limit=100' }), app)).json();
    assert.ok(!queue.data.some((q: { proofItemId: string }) => q.proofItemId === s.proofItemId));
  });

  it('a consent revoke files a request for the grant\'s item; a key cannot complete it', async () => {
    const s = await approvedItem(tenant);
    const res = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/consents/${s.consentGrantId}/revoke` }), app);
    assert.equal(res.statusCode, 202, res.body);
    const id = res.json().data.revocation.id;
    const byKey = await call(withKey(tenant.key, { method: 'POST', url: `/api/workspace/proof/revocations/${id}/complete` }), app);
    assert.equal(byKey.statusCode, 403);
    assert.equal(errorCode(byKey), 'HUMAN_APPROVAL_REQUIRED');
    const other = await createProofTenant();
    const byOther = await call(asTeammate(other.owner, { method: 'POST', url: `/api/workspace/proof/revocations/${id}/complete` }), app);
    assert.equal(byOther.statusCode, 404);
    assert.equal((await complete(id)).statusCode, 200);
    assert.equal((await getItem(tenant.key, s.proofItemId)).json().data.item.status, 'revoked');
  });

  it('requestText is at most 2000 characters', async () => {
    const s = await submit(tenant, undefined, app);
    const res = await revoke(s.proofItemId, { requestText: 'a'.repeat(2001) });
    assert.equal(res.statusCode, 400);
    assert.equal(errorCode(res), 'VALIDATION_FAILED');
  });
});
