import { Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ProofRequest } from '../../db/entities';
import { isDelivered } from '../../db/collection/requests';
import { Config } from '../../runtime/config';
import { conflict } from '../../runtime/service-error';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import {
  proofRequestWorkflow, proofRequestWorkflowId, remindUpdate, requestCancelledSignal,
} from '../../workflows/collection/proof-request-workflow';

/** Starting and steering `proof-request/<requestId>`, always after the database change committed. */
export function proofRequestWorkflows(temporal: Client, config: Config) {
  return {
    async start(r: ProofRequest): Promise<void> {
      await temporal.workflow.start(proofRequestWorkflow, {
        workflowId: proofRequestWorkflowId(r.id),
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{
          requestId: r.id,
          delivered: isDelivered(r.channel),
          remindAfterMs: r.remindAfterDays === null ? null : r.remindAfterDays * config.proofRequestDayMs,
          expiresAt: r.expiresAt!.toISOString(),
        }],
        ...tenantStartOptions(r.organizationId, r.productId),
      });
    },
    /** The person's reminder; the workflow refuses a second one, whoever sent the first. */
    async remind(requestId: string): Promise<void> {
      try {
        await temporal.workflow.getHandle(proofRequestWorkflowId(requestId)).executeUpdate(remindUpdate);
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) throw conflict((err.cause as Error | undefined)?.message ?? 'the reminder was refused');
        if (err instanceof WorkflowNotFoundError) throw conflict('the request is no longer waiting');
        throw err;
      }
    },
    async cancelled(requestId: string): Promise<void> {
      try {
        await temporal.workflow.getHandle(proofRequestWorkflowId(requestId)).signal(requestCancelledSignal);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
  };
}
