import { Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { workflowCommandsPending } from '../../db/workflow-commands';
import { ServiceError, conflict } from '../../runtime/service-error';
import { proofRequestWorkflowId, remindUpdate } from '../../workflows/collection/proof-request-workflow';

/** How long a reminder waits for a send that just committed to reach Temporal through the outbox. */
const START_SETTLE_MS = 10_000;

/**
 * The person's reminder to `proof-request/<requestId>`, the one call that needs the workflow's answer
 * (it refuses a second reminder, whoever sent the first). Starts and closes go through the outbox.
 */
export function proofRequestReminders(ds: DataSource, temporal: Client) {
  return {
    async remind(requestId: string): Promise<void> {
      const workflowId = proofRequestWorkflowId(requestId);
      const deadline = Date.now() + START_SETTLE_MS;
      while (await workflowCommandsPending(ds, workflowId)) {
        if (Date.now() > deadline) throw new ServiceError('SERVICE_UNAVAILABLE', 503, 'the request is still being handed to its workflow; try again shortly');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      try {
        await temporal.workflow.getHandle(workflowId).executeUpdate(remindUpdate);
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) throw conflict((err.cause as Error | undefined)?.message ?? 'the reminder was refused');
        if (err instanceof WorkflowNotFoundError) throw conflict('the request is no longer waiting');
        throw err;
      }
    },
  };
}
