import assert from 'node:assert/strict';
import { FastifyInstance } from 'fastify';
import { approvalOutcomeSignal } from '../../workflows/proof/proof-approval-workflow';
import { asTeammate, call, errorCode, sessionFor, settledHandle, withKey } from '../support/fixtures';
import {
  ProofTenant, approve, createProofTenant, eventually, getItem, ledgerTypes, requestApproval, submit,
} from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { approvalWorkflowId } from '../../workflows/workflow-ids';

describe('human approval (real Temporal)', () => {
  let tenant: ProofTenant;
  let app: FastifyInstance;
  const reject = (itemId: string, reason = 'not our tone') =>
    call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/proof/items/${itemId}/reject`, payload: { reason } }), app);
  const describeWorkflow = async (itemId: string, versionId: string) => (await settledHandle(approvalWorkflowId(itemId, versionId))).describe();
  const finished = (itemId: string, versionId: string) => eventually(async () => {
    const d = await describeWorkflow(itemId, versionId);
    return d.status.name === 'RUNNING' ? undefined : d.status.name;
  });

  before(async () => {
    tenant = await createProofTenant();
    app = await ctx.buildApp({ proofApprovalReminderMs: 400 });
  });

  it('request-approval queues the version (not an approval) and starts proof-approval/<item>/<version>', async () => {
    const s = await submit(tenant, undefined, app);
    const res = await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(data.item.status, 'in_review');
    assert.equal(data.item.approvedPublicVersionId, null);
    assert.equal(data.version.approvalState, 'pending_review');
    const d = await describeWorkflow(s.proofItemId, s.originalVersionId);
    assert.equal(d.status.name, 'RUNNING');
    assert.deepEqual(d.memo, { organizationId: tenant.organizationId, productId: tenant.product.id });
    const queue = await call(asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/proof/review-queue' }), app);
    const entry = queue.json().data.find((q: { proofItemId: string }) => q.proofItemId === s.proofItemId);
    assert.equal(entry.versionId, s.originalVersionId);
    assert.equal(entry.version.content.text, 'We cut onboarding from 9 days to 2.');
    // Reminders arrive on the timer while nobody decides.
    await eventually(async () => {
      const rows = await ctx.dataSource.query('SELECT reminders_sent FROM proof_approval_requests WHERE proof_item_id = $1', [s.proofItemId]);
      return rows[0].reminders_sent >= 2 ? true : undefined;
    });
    const again = await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    assert.equal(again.json().data.approvalRequestId, data.approvalRequestId, 'asking again for the queued version changes nothing');
  });

  it('a person approves: approvedPublicVersionId, ledger proof.item.approved, the workflow ends; a second decision is 409', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    const res = await approve(tenant, s.proofItemId, s.originalVersionId, app);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.item.approvedPublicVersionId, s.originalVersionId);
    assert.equal(res.json().data.version.approvalState, 'approved');
    assert.equal(await finished(s.proofItemId, s.originalVersionId), 'COMPLETED');
    const result = await (await settledHandle(approvalWorkflowId(s.proofItemId, s.originalVersionId))).result();
    assert.equal(result, 'approved');
    assert.ok((await ledgerTypes(s.proofItemId)).includes('proof.item.approved'));
    for (const second of [await approve(tenant, s.proofItemId, s.originalVersionId, app), await reject(s.proofItemId)]) {
      assert.equal(second.statusCode, 409);
      assert.equal(errorCode(second), 'CONFLICT');
    }
  });

  it('two racing decisions: exactly one wins, the other is 409 CONFLICT; a repeated signal changes nothing', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    const admin = await sessionFor(tenant.organizationId, 'admin');
    const [a, b] = await Promise.all([
      approve(tenant, s.proofItemId, s.originalVersionId, app),
      call(asTeammate(admin, { method: 'POST', url: `/api/workspace/proof/items/${s.proofItemId}/reject`, payload: { reason: 'too long' } }), app),
    ]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 409]);
    await finished(s.proofItemId, s.originalVersionId);
    const handle = (await settledHandle(approvalWorkflowId(s.proofItemId, s.originalVersionId)));
    await assert.rejects(handle.signal(approvalOutcomeSignal, { requestId: 'apr_x', outcome: 'rejected' }), /not found|completed/i);
    const decisions = await ctx.dataSource.query(
      `SELECT count(*)::int AS n FROM proof_events WHERE proof_item_id = $1 AND event_type IN ('proof.item.approved', 'proof.item.rejected')`, [s.proofItemId]);
    assert.equal(decisions[0].n, 1);
  });

  it('the workflow keeps the first outcome it is signalled and ignores signals for other requests', async () => {
    const s = await submit(tenant, undefined, app);
    const requestId = (await requestApproval(tenant, s.proofItemId, s.originalVersionId, app)).json().data.approvalRequestId;
    const handle = (await settledHandle(approvalWorkflowId(s.proofItemId, s.originalVersionId)));
    await handle.signal(approvalOutcomeSignal, { requestId: 'apr_someotherrequest', outcome: 'rejected' });
    await handle.signal(approvalOutcomeSignal, { requestId, outcome: 'approved' });
    await handle.signal(approvalOutcomeSignal, { requestId, outcome: 'rejected' }).catch(() => undefined);
    assert.equal(await handle.result(), 'approved');
  });

  it('a newer request supersedes the pending one; deciding the superseded version is 409', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    const v2 = (await call(withKey(tenant.key, {
      method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/versions`, payload: { content: { text: 'Shorter.' }, changeReason: 'trim' },
    }), app)).json().data;
    assert.equal((await requestApproval(tenant, s.proofItemId, v2.id, app)).statusCode, 200);
    assert.equal(await finished(s.proofItemId, s.originalVersionId), 'COMPLETED');
    const stale = await approve(tenant, s.proofItemId, s.originalVersionId, app);
    assert.equal(stale.statusCode, 409);
    assert.equal(errorCode(stale), 'CONFLICT');
    const staleReject = await call(asTeammate(tenant.owner, {
      method: 'POST', url: `/api/workspace/proof/items/${s.proofItemId}/reject`, payload: { reason: 'not this one', versionId: s.originalVersionId },
    }), app);
    assert.equal(errorCode(staleReject), 'CONFLICT', 'a reject naming the superseded version does not land on the newer one');
    const ok = await approve(tenant, s.proofItemId, v2.id, app);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().data.item.approvedPublicVersionId, v2.id);
  });

  it('reject records the reason, announces proof.item.rejected directly without the reason', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    const res = await reject(s.proofItemId, 'contains a competitor name');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.item.status, 'rejected');
    assert.equal(res.json().data.version.approvalState, 'rejected');
    const out: Array<{ id: string; payload: Record<string, unknown> }> = await ctx.dataSource.query(
      `SELECT id, payload FROM outbox_events WHERE event_type = 'proof.item.rejected' AND payload->>'proofItemId' = $1`, [s.proofItemId]);
    assert.equal(out.length, 1);
    assert.ok(!out[0].id.startsWith('evt_pev_'), 'a direct announcement has its own envelope id');
    assert.ok(!JSON.stringify(out[0].payload).includes('competitor'));
    assert.equal(await finished(s.proofItemId, s.originalVersionId), 'COMPLETED');
  });

  it('asking again for the queued version makes good a workflow start that was lost', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    await (await settledHandle(approvalWorkflowId(s.proofItemId, s.originalVersionId))).terminate('simulate a lost start');
    assert.equal((await requestApproval(tenant, s.proofItemId, s.originalVersionId, app)).statusCode, 200);
    assert.equal((await describeWorkflow(s.proofItemId, s.originalVersionId)).status.name, 'RUNNING');
    assert.equal((await approve(tenant, s.proofItemId, s.originalVersionId, app)).statusCode, 200);
    assert.equal(await finished(s.proofItemId, s.originalVersionId), 'COMPLETED');
  });

  it('the approval webhook carries allow-listed ids only', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    await approve(tenant, s.proofItemId, s.originalVersionId, app);
    const rows: Array<{ id: string; payload: Record<string, unknown> }> = await ctx.dataSource.query(
      `SELECT id, payload FROM outbox_events WHERE event_type = 'proof.item.approved' AND payload->>'proofItemId' = $1`, [s.proofItemId]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].id, `evt_${rows[0].payload.proofEventId}`);
    assert.deepEqual(rows[0].payload.properties, { versionId: s.originalVersionId, versionNumber: 1 });
    assert.deepEqual(rows[0].payload.actor, { type: 'teammate', id: tenant.owner.id });
  });

  it('workspace decisions: a key hears HUMAN_APPROVAL_REQUIRED, a member FORBIDDEN, another workspace 404', async () => {
    const s = await submit(tenant, undefined, app);
    await requestApproval(tenant, s.proofItemId, s.originalVersionId, app);
    const byKey = await call(withKey(tenant.key, {
      method: 'POST', url: `/api/workspace/proof/items/${s.proofItemId}/approve`, payload: { versionId: s.originalVersionId },
    }), app);
    assert.equal(byKey.statusCode, 403);
    assert.equal(errorCode(byKey), 'HUMAN_APPROVAL_REQUIRED');
    const member = await sessionFor(tenant.organizationId, 'member');
    const byMember = await call(asTeammate(member, {
      method: 'POST', url: `/api/workspace/proof/items/${s.proofItemId}/approve`, payload: { versionId: s.originalVersionId },
    }), app);
    assert.equal(byMember.statusCode, 403);
    assert.equal(errorCode(byMember), 'FORBIDDEN');
    const other = await createProofTenant();
    const byOther = await approve(other, s.proofItemId, s.originalVersionId, app);
    assert.equal(byOther.statusCode, 404);
    const otherQueue = await call(asTeammate(other.owner, { method: 'GET', url: '/api/workspace/proof/review-queue' }), app);
    assert.deepEqual(otherQueue.json().data, [], 'another workspace\'s queue never shows this item');
    assert.equal((await getItem(tenant.key, s.proofItemId)).json().data.item.status, 'in_review');
  });
});
