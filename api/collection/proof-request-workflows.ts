import {
  Client, WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowUpdateFailedError,
} from '@temporalio/client';
import { requestWorkflowInput } from '../../db/collection/requests';
import { ProofRequest } from '../../db/entities';
import { Config } from '../../runtime/config';
import { conflict } from '../../runtime/service-error';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { proofRequestWorkflow, remindUpdate } from '../../workflows/collection/proof-request-workflow';
import { proofRequestWorkflowId } from '../../workflows/workflow-ids';

/**
 * The person's reminder to `proof-request/<requestId>`, the one call that needs the workflow's answer
 * (it refuses a second reminder, whoever sent the first). The send's start normally arrives through the
 * outbox; a reminder that comes first starts the same run (update-with-start), so neither waits.
 */
export function proofRequestReminders(temporal: Client, config: Config) {
  return {
    async remind(r: ProofRequest): Promise<void> {
      try {
        await temporal.workflow.executeUpdateWithStart(remindUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation(proofRequestWorkflow, {
            workflowId: proofRequestWorkflowId(r.id),
            taskQueue: config.taskQueue,
            workflowIdConflictPolicy: 'USE_EXISTING',
            // A run that already ended is never started again by a late reminder.
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            args: [requestWorkflowInput(r, config.proofRequestDayMs)],
            ...tenantStartOptions(r.organizationId, r.productId),
          }),
        });
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) throw conflict((err.cause as Error | undefined)?.message ?? 'the reminder was refused');
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw conflict('the request is no longer waiting');
        throw err;
      }
    },
  };
}
