import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { enqueueEvent } from '../../db/outbox';
import * as workflows from '../../workflows';
import { approvalLinkWorkflow, proofHealthWorkflow, streamCopyWorkflow, transcriptionWorkflow, uploadWorkflow } from '../../workflows';
import { newId } from '../../db/rules/ids';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { as, liveFlow } from '../support/collection-setup';
import { LOOP_SCOPES, postSignal, teammate } from '../support/customer-loop';
import { asTeammate, call, createTenant, eventually, settledHandle, withKey } from '../support/fixtures';
import { ALL_PROOF_SCOPES, approve, approvedItem, createProofTenant, requestApproval, submissionBody, submit } from '../support/proof-fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';
import { createTeammate } from '../../db/platform/tenancy';
import { asUser, openRoom, roomsTenant } from '../support/rooms';
import {
  agentRunWorkflowId, aiOperationWorkflowId, approvalLinkWorkflowId, approvalWorkflowId, deletionWorkflowId,
  domainVerificationWorkflowId, MAINTENANCE_WORKFLOW_ID, proofHealthWorkflowId, proofRequestWorkflowId, revocationWorkflowId,
  roomCompileWorkflowId, roomJobWorkflowId, roomPromiseWorkflowId, signalAnalysisWorkflowId, signInLinkWorkflowId, streamCopyWorkflowId,
  threadSlaWorkflowId, transcriptionWorkflowId, uploadWorkflowId, webhookDeliveryWorkflowId,
} from '../../workflows/workflow-ids';

const { History } = temporal.api.history.v1;
const DIR = path.join(__dirname, '../fixtures/workflow-histories');
const WORKFLOW_TYPES = Object.keys(workflows);

/**
 * Every workflow's saved history replays against today's code, so a change that would break runs
 * already in flight fails here (such a change goes behind `patched()`). The histories come from real
 * runs: `npm run record:histories` records one for each workflow that has none yet (an old history
 * must keep replaying; delete a file to record that workflow again).
 */
describe('workflow replay over saved histories', () => {
  if (process.env.SV_RECORD_HISTORIES) {
    it('records one history of every workflow from a real run', async function () {
      this.timeout(300_000);
      const ids = await runEveryWorkflow();
      const stamp = new Date().toISOString().slice(0, 10);
      const saved = new Set(fs.readdirSync(DIR).map((f) => f.split('.')[0]));
      for (const [type, workflowId] of Object.entries(ids)) {
        // A history already saved stays as it is; only workflows without one are recorded.
        if (saved.has(type)) continue;
        const history = await ctx.temporal.workflow.getHandle(workflowId).fetchHistory();
        const json = History.toObject(History.create(history), { longs: String, enums: String, bytes: String });
        fs.writeFileSync(path.join(DIR, `${type}.${stamp}.json`), `${JSON.stringify(json, null, 1)}\n`);
      }
    });
    return;
  }

  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

  it('there is a saved history of every workflow the worker runs', () => {
    const covered = new Set(files.map((f) => f.split('.')[0]));
    assert.deepEqual(WORKFLOW_TYPES.filter((t) => !covered.has(t)), []);
  });

  for (const file of files) {
    it(`${file} replays deterministically`, async function () {
      this.timeout(60_000);
      const history = History.fromObject(JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')));
      await Worker.runReplayHistory({ workflowBundle: ctx.workflowBundle }, history, `replay-${file}`);
    });
  }

  // Proves the replays above would catch a change: the same check, against a copy of one workflow edited
  // without `patched()`, must fail with the determinism error. The edit renames an activity: an added
  // first wait would pass, as this history's early signal ends such a wait without a timer.
  it('a saved history refuses a workflow changed without a patch', async function () {
    this.timeout(120_000);
    const file = files.find((f) => f.startsWith('domainVerificationWorkflow.'))!;
    const history = History.fromObject(JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')));
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../fixtures/changed-workflows/domain-verification-workflow'), logger: new DefaultLogger('WARN'),
    });
    await assert.rejects(Worker.runReplayHistory({ workflowBundle }, history, `replay-changed-${file}`),
      (err) => err instanceof DeterminismViolationError && /checkCollectionDomain/.test(err.message));
  });
});

/** Drives each workflow to an end (the maintenance one only through its first round) and names its run. */
async function runEveryWorkflow(): Promise<Record<string, string>> {
  const receiver = await Receiver.start();
  try {
    const proof = await createProofTenant();
    const deletionApp = await ctx.buildApp({ proofDeletionRecoveryMs: 500, proofRevocationSlaMs: 500 });

    const approved = await submit(proof);
    await requestApproval(proof, approved.proofItemId, approved.originalVersionId);
    await approve(proof, approved.proofItemId, approved.originalVersionId);
    await (await settledHandle(approvalWorkflowId(approved.proofItemId, approved.originalVersionId))).result();

    const deleted = await approvedItem(proof);
    await call(asTeammate(proof.owner, { method: 'DELETE', url: `/api/workspace/proof/items/${deleted.proofItemId}` }), deletionApp);
    await (await settledHandle(deletionWorkflowId(deleted.proofItemId))).result();

    const revoked = await submit(proof);
    const filed = (await call(withKey(proof.key, { method: 'POST', url: `/api/v1/proof/items/${revoked.proofItemId}/revoke` }), deletionApp)).json()
      .data.revocation;
    await settledHandle(revocationWorkflowId(filed.id));
    await eventually(async () => (await ctx.dataSource.query('SELECT 1 FROM proof_revocations WHERE id = $1 AND resolution_state = $2',
      [filed.id, 'escalated'])).length > 0);
    await call(asTeammate(proof.owner, { method: 'POST', url: `/api/workspace/proof/revocations/${filed.id}/complete` }));
    await (await settledHandle(revocationWorkflowId(filed.id))).result();

    const loop = await createTenant(LOOP_SCOPES);
    const signal = await postSignal(loop);
    await eventually(async () => (await ctx.dataSource.query('SELECT 1 FROM signals WHERE id = $1 AND analysis_queued_at IS NOT NULL',
      [signal.id])).length > 0);
    await ctx.temporal.workflow.getHandle(signalAnalysisWorkflowId(signal.id)).result().catch(() => undefined);
    await call(teammate(loop.owner, 'PATCH', `/api/workspace/threads/${signal.threadId}`, { nextUpdateAt: new Date(Date.now() + 500).toISOString() }));
    await (await settledHandle(threadSlaWorkflowId(signal.threadId))).result();

    // The batch's first attempt fails, so the delivery goes on in a retry workflow of its own.
    receiver.answer({ status: 500 }, { status: 200 });
    const { endpoint } = await createEndpoint(ctx.dataSource, proof.organizationId, { url: `${receiver.url}/hook`, subscriptions: ['replay.recorded'] });
    await ctx.dataSource.transaction((em) => enqueueEvent(em, { organizationId: proof.organizationId, productId: null, type: 'replay.recorded', data: {} }));
    const delivery = await eventually(async () => (await ctx.dataSource.query(
      `SELECT id, first_attempt_batch FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`, [endpoint.id]))[0] as
      { id: string; first_attempt_batch: string } | undefined);
    await ctx.temporal.workflow.getHandle(delivery.first_attempt_batch).result();

    const summarized = await call(withKey(proof.key, { method: 'POST', url: `/api/v1/proof/items/${approved.proofItemId}/summarize` }));
    const body = summarized.json();
    const operationId: string = body.data?.operationId ?? body.error?.details?.operationId;

    const collector = await createTenant(ALL_PROOF_SCOPES);
    const tenantOptions = tenantStartOptions(collector.organizationId, collector.product.id);
    const { flow } = await liveFlow(collector);
    const to = `replay-${newId('x').slice(2, 12)}@customer.example`;
    const made = (await as(collector.owner, { method: 'POST', url: '/api/proof/collect/requests',
      payload: { flowId: flow.id, channel: 'email', recipient: { email: to, personRef: `p-${to}` } } })).json().data;
    await as(collector.owner, { method: 'POST', url: `/api/proof/collect/requests/${made.request.id}`, payload: { action: 'send' } });
    await eventually(async () => (ctx.smtpSink.to(to).length ? true : undefined));
    await as(collector.owner, { method: 'POST', url: `/api/proof/collect/requests/${made.request.id}`, payload: { action: 'cancel' } });
    await ctx.temporal.workflow.getHandle(proofRequestWorkflowId(made.request.id)).result().catch(() => undefined);

    const linked = await submit(collector, submissionBody({ customer: { personRef: `cus-${newId('p')}`, email: to, name: 'Ada' } }));
    const linkId = approvalLinkWorkflowId(linked.proofItemId, 'replay');
    await as(collector.owner, { method: 'POST', url: `/api/proof/collect/items/${linked.proofItemId}/approval-link`, payload: { deliver: 'none' } });
    await (await ctx.temporal.workflow.start(approvalLinkWorkflow, {
      workflowId: linkId, taskQueue: ctx.config.taskQueue, args: [{ proofItemId: linked.proofItemId, channel: 'email' }], ...tenantOptions,
    })).result();

    // A domain is checked at once (records missing), then asked again once they are set, and verified.
    const domainUrl = `/api/proof/collect/forms/${flow.id}/domains`;
    const hostname = `replay-${newId('h').slice(2, 10).toLowerCase()}.example.com`;
    const domain = (await as(collector.owner, { method: 'POST', url: domainUrl, payload: { hostname } })).json().data;
    await eventually(async () => (await ctx.dataSource.query('SELECT 1 FROM collection_domains WHERE id = $1 AND last_checked_at IS NOT NULL',
      [domain.id])).length > 0);
    for (const r of domain.records as Array<{ type: string; name: string; value: string }>) ctx.dnsSink.set(r.name,
      r.type === 'TXT' ? { txt: [r.value] } : { cname: r.value });
    await as(collector.owner, { method: 'POST', url: domainUrl, payload: { hostname } });
    await (await settledHandle(domainVerificationWorkflowId(domain.id))).result();
    await eventually(async () => (await ctx.dataSource.query(`SELECT 1 FROM collection_domains WHERE id = $1 AND status = 'verified'`,
      [domain.id])).length > 0);

    // An upload nobody sends bytes to reaches its deadline; its run is recorded to there, then stopped.
    const uploadId = uploadWorkflowId(`upl_replay_${newId('x').slice(2, 12)}`);
    const upload = await ctx.temporal.workflow.start(uploadWorkflow, {
      workflowId: uploadId, taskQueue: ctx.config.taskQueue,
      args: [{ sessionId: uploadId.slice('upload/'.length), expiresAt: new Date(Date.now() + 300).toISOString() }], ...tenantOptions,
    });
    await eventually(async () => ((await upload.fetchHistory()).events ?? []).some((e) => e.timerFiredEventAttributes));
    await upload.terminate('recorded');

    // A transcription of a recording that is gone fails at once (refused, not retried) and marks no track.
    const transcriptionId = transcriptionWorkflowId(`ups_replay_${newId('x').slice(2, 12)}`);
    await (await ctx.temporal.workflow.start(transcriptionWorkflow, {
      workflowId: transcriptionId, taskQueue: ctx.config.taskQueue,
      args: [{ sessionId: transcriptionId.slice('ai/transcription/'.length), ai: { maxAttempts: 2, retryInitialMs: 50, timeoutMs: 5_000 } }], ...tenantOptions,
    })).result();

    // The health check never ends on its own: a few rounds are recorded, then it is stopped.
    const healthId = proofHealthWorkflowId(collector.product.id);
    const health = await ctx.temporal.workflow.start(proofHealthWorkflow, {
      workflowId: healthId, taskQueue: ctx.config.taskQueue, workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ productId: collector.product.id, intervalMs: 200 }], ...tenantOptions,
    });
    await eventually(async () => ((await health.fetchHistory()).events?.length ?? 0) > 20);
    await health.terminate('recorded');

    // A copy to the video host of a video that is not (or no longer) approved ends without asking the host.
    const streamId = streamCopyWorkflowId(`med_replay_${newId('x').slice(2, 12)}`);
    await (await ctx.temporal.workflow.start(streamCopyWorkflow, {
      workflowId: streamId, taskQueue: ctx.config.taskQueue,
      args: [{ organizationId: collector.organizationId, productId: collector.product.id, mediaAssetId: streamId.slice('stream-copy/'.length),
        versionId: 'pver_replay' }],
      ...tenantOptions,
    })).result();

    // An agent run that waits for a person's approval, then acts.
    const rooms = await roomsTenant();
    const room = await openRoom(rooms, 'replay');
    const invoked = (await asUser(rooms, 'replay', { method: 'POST', url: `/api/v1/rooms/${room.id}/agents/assistant/invoke`,
      payload: { input: 'Say hello' } })).json().data;
    const approval = await eventually(async () => (await ctx.dataSource.query(
      `SELECT id FROM room_approvals WHERE subject_id = $1 AND status = 'pending'`, [invoked.id]))[0] as { id: string } | undefined);
    await call(asTeammate(rooms.owner, { method: 'POST', url: `/api/v1/approvals/${approval.id}/approve`, payload: {} }));
    await (await settledHandle(agentRunWorkflowId(invoked.id))).result();
    const compiled = (await call(withKey(rooms.key, { method: 'POST', url: `/api/v1/rooms/${room.id}/compile`, payload: { title: 'Replay PRD' } }))).json();
    const documentId: string = compiled.data?.id ?? compiled.error?.details?.documentId;

    // A promise proposed by a job, approved, and missed when its due date passes.
    const promised = (await call(withKey(rooms.key, {
      method: 'POST', url: `/api/v1/rooms/${room.id}/jobs`,
      payload: { type: 'make_promise', params: { text: 'A fix soon', dueAt: new Date(Date.now() + 1500).toISOString() } },
    }))).json().data;
    await (await settledHandle(roomJobWorkflowId(promised.id))).result();
    const { promiseId, approvalId } = (await ctx.dataSource.query('SELECT result FROM room_jobs WHERE id = $1', [promised.id]))[0].result;
    await call(asTeammate(rooms.owner, { method: 'POST', url: `/api/v1/approvals/${approvalId}/approve`, payload: {} }));
    await (await settledHandle(roomPromiseWorkflowId(promiseId))).result();

    const signer = await createTeammate(ctx.dataSource, { organizationId: proof.organizationId, email: `replay-${newId('x').slice(2, 12)}@team.example`,
      role: 'owner' });
    const signInApp = await ctx.buildApp({ signInPerAddressPerMinute: 100_000 });
    await call({ method: 'POST', url: '/api/workspace/sign-in', payload: { email: signer.email } }, signInApp);
    const [{ id: signInLinkId }] = await ctx.dataSource.query('SELECT id FROM teammate_sign_in_links WHERE teammate_id = $1', [signer.id]);
    await (await settledHandle(signInLinkWorkflowId(signInLinkId))).result();

    return {
      signInLinkWorkflow: signInLinkWorkflowId(signInLinkId),
      agentRunWorkflow: agentRunWorkflowId(invoked.id),
      roomCompileWorkflow: roomCompileWorkflowId(documentId),
      roomJobWorkflow: roomJobWorkflowId(promised.id),
      roomPromiseWorkflow: roomPromiseWorkflowId(promiseId),
      streamCopyWorkflow: streamId,
      approvalLinkWorkflow: linkId,
      domainVerificationWorkflow: domainVerificationWorkflowId(domain.id),
      proofHealthWorkflow: healthId,
      proofRequestWorkflow: proofRequestWorkflowId(made.request.id),
      uploadWorkflow: uploadId,
      transcriptionWorkflow: transcriptionId,
      aiOperationWorkflow: aiOperationWorkflowId('summarize', operationId),
      maintenanceWorkflow: MAINTENANCE_WORKFLOW_ID,
      webhookDeliveryWorkflow: webhookDeliveryWorkflowId(delivery.id),
      webhookBatchWorkflow: delivery.first_attempt_batch,
      proofApprovalWorkflow: approvalWorkflowId(approved.proofItemId, approved.originalVersionId),
      proofDeletionWorkflow: deletionWorkflowId(deleted.proofItemId),
      proofRevocationWorkflow: revocationWorkflowId(filed.id),
      threadSlaWorkflow: threadSlaWorkflowId(signal.threadId),
      signalAnalysisWorkflow: signalAnalysisWorkflowId(signal.id),
    };
  } finally {
    await receiver.close();
  }
}
