import {
  WorkflowClient, WorkflowExecutionAlreadyStartedError, WorkflowHandle, WorkflowIdReusePolicy, WorkflowStartOptions,
} from '@temporalio/client';
import { Workflow } from '@temporalio/common';

/**
 * Starts a run that a repeated command must never start twice: an id that runs, or ran (per `reuse`),
 * is left alone, and its handle is answered as a new run's would be.
 */
export async function startOnce<T extends Workflow>(
  wf: WorkflowClient, workflow: T, options: WorkflowStartOptions<T>, reuse: WorkflowIdReusePolicy = WorkflowIdReusePolicy.REJECT_DUPLICATE,
): Promise<WorkflowHandle<T>> {
  try {
    return await wf.start(workflow, { ...options, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: reuse });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return wf.getHandle<T>(options.workflowId);
  }
}
