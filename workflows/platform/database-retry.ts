import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createDatabaseActivities } from '../../activities/platform/database-activities';

/**
 * Our own idempotent database steps: retried for as long as the database is away, at most a minute
 * apart. No attempt cap, so an outage delays a purge or an escalation and never ends it.
 */
export const DATABASE_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

const { recordWorkflowFailure } = proxyActivities<ReturnType<typeof createDatabaseActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: DATABASE_RETRY,
});

/**
 * Runs one step; a step that fails for good (a non-retryable error) is written to workflow_failures
 * before the workflow fails, so it is not lost in a history nobody reads.
 */
export async function recordedStep<T>(step: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const info = workflowInfo();
    const error = err.cause?.message ?? err.message;
    await recordWorkflowFailure({ workflowId: info.workflowId, runId: info.runId, workflowType: info.workflowType, step, error });
    throw ApplicationFailure.nonRetryable(`${step} failed: ${error}`, 'WORKFLOW_STEP_FAILED');
  }
}
