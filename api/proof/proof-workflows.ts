import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { Config } from '../../runtime/config';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import type { ApprovalRef } from '../../db/proof/proof-approvals';
import {
  ApprovalOutcome, approvalOutcomeSignal, approvalWorkflowId, proofApprovalWorkflow,
} from '../../workflows/proof/proof-approval-workflow';
import { itemDeletedSignal, itemRestoredSignal, deletionWorkflowId, proofDeletionWorkflow } from '../../workflows/proof/proof-deletion-workflow';
import { proofRevocationWorkflow, revocationCompletedSignal, revocationWorkflowId } from '../../workflows/proof/proof-revocation-workflow';

type Tenant = { organizationId: string; productId: string | null };

/** A signal to a workflow that already ended has nothing left to change: the database decided first. */
async function ignoreEnded(send: Promise<void>): Promise<void> {
  try {
    await send;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/**
 * Starting and signalling the proof workflows, always after the database transaction committed.
 * Durations travel in the workflow input, so the API's configuration decides them.
 */
export function proofWorkflows(temporal: Client, config: Config) {
  return {
    /**
     * A new request replaces any run left for the same version (a superseded run may still be ending);
     * an existing request only makes sure its run is there.
     */
    async startApproval(tenant: Tenant, ref: ApprovalRef, isNew: boolean): Promise<void> {
      await temporal.workflow.start(proofApprovalWorkflow, {
        workflowId: approvalWorkflowId(ref.proofItemId, ref.versionId),
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: isNew ? 'TERMINATE_EXISTING' : 'USE_EXISTING',
        args: [{ requestId: ref.requestId, proofItemId: ref.proofItemId, versionId: ref.versionId, reminderIntervalMs: config.proofApprovalReminderMs }],
        ...tenantStartOptions(tenant.organizationId, tenant.productId),
      });
    },
    async signalApproval(ref: ApprovalRef, outcome: ApprovalOutcome): Promise<void> {
      const handle = temporal.workflow.getHandle(approvalWorkflowId(ref.proofItemId, ref.versionId));
      await ignoreEnded(handle.signal(approvalOutcomeSignal, { requestId: ref.requestId, outcome }));
    },
    /** Also called for an open revocation filed again, so a lost start is made good; never a duplicate. */
    async startRevocation(tenant: Tenant, revocationId: string, slaDeadlineAt: string): Promise<void> {
      await temporal.workflow.start(proofRevocationWorkflow, {
        workflowId: revocationWorkflowId(revocationId),
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ revocationId, slaDeadlineAt }],
        ...tenantStartOptions(tenant.organizationId, tenant.productId),
      });
    },
    async signalRevocationCompleted(revocationId: string): Promise<void> {
      await ignoreEnded(temporal.workflow.getHandle(revocationWorkflowId(revocationId)).signal(revocationCompletedSignal));
    },
    async signalDeleted(tenant: Tenant, proofItemId: string, deletedAt: string, recoveryClosesAt: string): Promise<void> {
      await temporal.workflow.signalWithStart(proofDeletionWorkflow, {
        workflowId: deletionWorkflowId(proofItemId),
        taskQueue: config.taskQueue,
        args: [{ proofItemId }],
        signal: itemDeletedSignal,
        signalArgs: [{ deletedAt, recoveryClosesAt }],
        ...tenantStartOptions(tenant.organizationId, tenant.productId),
      });
    },
    async signalRestored(proofItemId: string): Promise<void> {
      await ignoreEnded(temporal.workflow.getHandle(deletionWorkflowId(proofItemId)).signal(itemRestoredSignal));
    },
  };
}
