import { Client, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';
import { DataSource } from 'typeorm';
import {
  claimWorkflowCommands, completeWorkflowCommand, retryWorkflowCommandLater, WorkflowCommandBody,
} from '../db/workflow-commands';
import { Config } from '../runtime/config';
import { startOnce } from '../runtime/start-once';
import { tenantStartOptions } from '../runtime/workflow-memo';
import { promiseSignal, repliedSignal, threadSlaWorkflow } from '../workflows/customer-loop/thread-sla-workflow';
import { approvalOutcomeSignal, proofApprovalWorkflow } from '../workflows/proof/proof-approval-workflow';
import { itemDeletedSignal, itemRestoredSignal, proofDeletionWorkflow } from '../workflows/proof/proof-deletion-workflow';
import { proofRevocationWorkflow, revocationCompletedSignal } from '../workflows/proof/proof-revocation-workflow';
import { approvalLinkWorkflow } from '../workflows/collection/approval-link-workflow';
import { signInLinkWorkflow } from '../workflows/platform/sign-in-link-workflow';
import { checkNowSignal, domainVerificationWorkflow } from '../workflows/collection/domain-verification-workflow';
import {
  proofRequestWorkflow, requestCancelledSignal, requestOptedOutSignal, requestRespondedSignal,
} from '../workflows/collection/proof-request-workflow';
import { cancelSignal, uploadWorkflow } from '../workflows/collection/upload-workflow';
import { aiOperationWorkflow } from '../workflows/ai/ai-operation-workflow';
import { transcriptionWorkflow } from '../workflows/ai/transcription-workflow';
import { streamCopyWorkflow } from '../workflows/integrations/stream-copy-workflow';
import { agentRunWorkflow, wakeSignal } from '../workflows/rooms/agent-run-workflow';
import { roomCompileWorkflow } from '../workflows/rooms/room-compile-workflow';
import { roomJobWorkflow } from '../workflows/rooms/room-job-workflow';
import { promiseSettledSignal, roomPromiseWorkflow } from '../workflows/rooms/room-promise-workflow';
import { proofHealthWorkflow, runHealthNowSignal } from '../workflows/integrations/proof-health-workflow';
import { RelayOptions } from './relay';
import {
  agentRunWorkflowId, aiOperationWorkflowId, approvalLinkWorkflowId, approvalWorkflowId, deletionWorkflowId,
  domainVerificationWorkflowId, proofHealthWorkflowId, proofRequestWorkflowId, revocationWorkflowId, roomCompileWorkflowId,
  roomJobWorkflowId, roomPromiseWorkflowId, signInLinkWorkflowId, streamCopyWorkflowId, threadSlaWorkflowId, transcriptionWorkflowId,
  uploadWorkflowId,
} from '../workflows/workflow-ids';

const REQUEST_CLOSED_SIGNALS = {
  responded: requestRespondedSignal, cancelled: requestCancelledSignal, opted_out: requestOptedOutSignal,
} as const;

/** A signal to a workflow that already ended has nothing left to change: the database decided first. */
async function ignoreEnded(send: Promise<void>): Promise<void> {
  try {
    await send;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/**
 * Carries out one command. Each is safe to repeat (a relay that dies after the call and before
 * marking it done calls again): starts use conflict policies, signals to ended runs are dropped.
 * Durations travel in the command, so the configuration of the API that accepted the change decides them.
 */
export async function runWorkflowCommand(temporal: Client, config: Config, c: WorkflowCommandBody): Promise<void> {
  const wf = temporal.workflow;
  switch (c.type) {
    case 'proof.approval.start':
      // A new request replaces any run left for the same version; an existing one only makes sure its run is there.
      await wf.start(proofApprovalWorkflow, {
        workflowId: approvalWorkflowId(c.ref.proofItemId, c.ref.versionId),
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: c.isNew ? 'TERMINATE_EXISTING' : 'USE_EXISTING',
        args: [{ requestId: c.ref.requestId, proofItemId: c.ref.proofItemId, versionId: c.ref.versionId, reminderIntervalMs: c.reminderIntervalMs }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'proof.approval.outcome':
      await ignoreEnded(wf.getHandle(approvalWorkflowId(c.ref.proofItemId, c.ref.versionId))
        .signal(approvalOutcomeSignal, { requestId: c.ref.requestId, outcome: c.outcome }));
      return;
    case 'proof.revocation.start':
      await startOnce(wf, proofRevocationWorkflow, {
        workflowId: revocationWorkflowId(c.revocationId),
        taskQueue: config.taskQueue,
        args: [{ revocationId: c.revocationId, slaDeadlineAt: c.slaDeadlineAt }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'proof.revocation.completed':
      await ignoreEnded(wf.getHandle(revocationWorkflowId(c.revocationId)).signal(revocationCompletedSignal));
      return;
    case 'proof.deletion.deleted':
      await wf.signalWithStart(proofDeletionWorkflow, {
        workflowId: deletionWorkflowId(c.proofItemId),
        taskQueue: config.taskQueue,
        args: [{ proofItemId: c.proofItemId }],
        signal: itemDeletedSignal,
        signalArgs: [{ deletedAt: c.deletedAt, recoveryClosesAt: c.recoveryClosesAt }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'proof.deletion.restored':
      await ignoreEnded(wf.getHandle(deletionWorkflowId(c.proofItemId)).signal(itemRestoredSignal));
      return;
    case 'thread.sla.promise':
      if (c.dueAt === null) {
        await ignoreEnded(wf.getHandle(threadSlaWorkflowId(c.threadId)).signal(promiseSignal, null));
        return;
      }
      await wf.signalWithStart(threadSlaWorkflow, {
        workflowId: threadSlaWorkflowId(c.threadId),
        taskQueue: config.taskQueue,
        args: [{ threadId: c.threadId }],
        signal: promiseSignal,
        signalArgs: [c.dueAt],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'thread.sla.replied':
      // The promise already escalated or was never watched: nothing is waiting for this reply.
      await ignoreEnded(wf.getHandle(threadSlaWorkflowId(c.threadId)).signal(repliedSignal));
      return;
    case 'proof.request.start':
      await wf.start(proofRequestWorkflow, {
        workflowId: proofRequestWorkflowId(c.requestId),
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ requestId: c.requestId, delivered: c.delivered, remindAfterMs: c.remindAfterMs, expiresAt: c.expiresAt }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'proof.request.closed':
      // The database already closed the request; a run that ended (or never started: a draft) has nothing to stop.
      await ignoreEnded(wf.getHandle(proofRequestWorkflowId(c.requestId)).signal(REQUEST_CLOSED_SIGNALS[c.outcome]));
      return;
    case 'collection.approval_link.deliver':
      await startOnce(wf, approvalLinkWorkflow, {
        workflowId: approvalLinkWorkflowId(c.proofItemId, c.deliveryId),
        taskQueue: config.taskQueue,
        args: [{ proofItemId: c.proofItemId, channel: c.channel, reason: c.reason, expiresAt: c.expiresAt }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'platform.sign_in_link.deliver':
      await startOnce(wf, signInLinkWorkflow, {
        workflowId: signInLinkWorkflowId(c.linkId),
        taskQueue: config.taskQueue,
        args: [{ linkId: c.linkId }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'collection.domain.check':
      // A running check is asked to look now; otherwise (new, or failed before) a run starts.
      await wf.signalWithStart(domainVerificationWorkflow, {
        workflowId: domainVerificationWorkflowId(c.domainId),
        taskQueue: config.taskQueue,
        args: [{ domainId: c.domainId, intervalMs: c.intervalMs, deadline: c.deadline }],
        signal: checkNowSignal,
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'collection.upload.start':
      // The assemble call starts the same run when it comes first (update-with-start), so either order is fine.
      // A run that already ended (cancelled, expired) is not started again.
      await startOnce(wf, uploadWorkflow, {
        workflowId: uploadWorkflowId(c.sessionId),
        // The queue of the API that opened it: its assemble call (update-with-start) names the same one.
        taskQueue: c.taskQueue,
        args: [{ sessionId: c.sessionId, expiresAt: c.expiresAt }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'collection.transcription.start':
      // A pass that failed may be asked for again: a closed run's id is reused.
      await wf.start(transcriptionWorkflow, {
        workflowId: transcriptionWorkflowId(c.sessionId),
        taskQueue: c.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ sessionId: c.sessionId, ai: c.settings }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'collection.upload.cancel':
      await ignoreEnded(wf.getHandle(uploadWorkflowId(c.sessionId)).signal(cancelSignal));
      return;
    case 'proof.stream.copy':
      // Without a video host configured, approved videos stay with the service only.
      if (!config.proofStreamApiUrl) return;
      await wf.start(streamCopyWorkflow, {
        workflowId: streamCopyWorkflowId(c.mediaAssetId),
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ organizationId: c.tenant.organizationId, productId: c.tenant.productId, mediaAssetId: c.mediaAssetId, versionId: c.versionId }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'room.agent_run.start':
      await startOnce(wf, agentRunWorkflow, {
        workflowId: agentRunWorkflowId(c.runId),
        taskQueue: config.taskQueue,
        args: [{
          runId: c.runId,
          approvalTtlMs: c.approvalTtlMs,
          ai: { maxAttempts: config.aiMaxAttempts, retryInitialMs: config.aiRetryInitialMs, timeoutMs: config.aiTimeoutMs },
        }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'room.compile.start':
      await startOnce(wf, roomCompileWorkflow, {
        workflowId: roomCompileWorkflowId(c.documentId),
        taskQueue: config.taskQueue,
        args: [{ documentId: c.documentId, ai: c.ai }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'room.agent_run.wake':
      await ignoreEnded(wf.getHandle(agentRunWorkflowId(c.runId)).signal(wakeSignal));
      return;
    case 'room.job.start':
      await startOnce(wf, roomJobWorkflow, {
        workflowId: roomJobWorkflowId(c.jobId),
        taskQueue: config.taskQueue,
        args: [{ jobId: c.jobId }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'proof.ai_operation.start':
      // The API starts the same run at once (and waits for it); this start only makes sure an API lost
      // after the commit leaves no operation without its run. A retry under the same key re-runs a failed
      // operation under its id, so only a failed run's id may start again (a stale start finds the record
      // no longer running and calls no provider).
      await startOnce(wf, aiOperationWorkflow, {
        workflowId: aiOperationWorkflowId(c.path, c.operationId),
        taskQueue: c.taskQueue,
        args: [{ operationId: c.operationId, ai: c.ai }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      }, WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY);
      return;
    case 'room.promise.watch':
      await startOnce(wf, roomPromiseWorkflow, {
        workflowId: roomPromiseWorkflowId(c.promiseId),
        taskQueue: config.taskQueue,
        args: [{ promiseId: c.promiseId, dueAt: c.dueAt }],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
    case 'room.promise.settled':
      // A watch that already ended (the due date passed first) finds the promise settled in the database anyway.
      await ignoreEnded(wf.getHandle(roomPromiseWorkflowId(c.promiseId)).signal(promiseSettledSignal));
      return;
    case 'proof.health.run':
      // A running check loop is asked to run now; otherwise one starts.
      await wf.signalWithStart(proofHealthWorkflow, {
        workflowId: proofHealthWorkflowId(c.tenant.productId),
        taskQueue: config.taskQueue,
        args: [{ productId: c.tenant.productId, intervalMs: c.intervalMs }],
        signal: runHealthNowSignal,
        signalArgs: [],
        ...tenantStartOptions(c.tenant.organizationId, c.tenant.productId),
      });
      return;
  }
}

/**
 * The relay that hands workflow commands to Temporal: claimed in a short statement, called outside any
 * transaction, marked done one by one. A failed call waits and is tried again; nothing else in the batch
 * is held back or rolled back by it.
 */
export function workflowCommandRelay(ds: DataSource, client: Client, config: Config): RelayOptions {
  return {
    name: 'workflow-command',
    batchSize: config.relayBatchSize,
    idleMs: config.relayIdleMs,
    log: (line) => console.error(`[sv] ${line}`),
    tick: async (batchSize) => {
      const claimed = await claimWorkflowCommands(ds, batchSize);
      await Promise.all(claimed.map(async (row) => {
        try {
          await runWorkflowCommand(client, config, row.command);
        } catch (err) {
          await retryWorkflowCommandLater(ds, row.seq, row.attempts, (err as Error).message);
          return;
        }
        await completeWorkflowCommand(ds, row.seq);
      }));
      return claimed.length;
    },
  };
}
