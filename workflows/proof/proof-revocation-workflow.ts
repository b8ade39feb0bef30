import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createProofActivities } from '../../activities/proof/proof-activities';
import { DATABASE_RETRY, recordedStep } from '../platform/database-retry';

const { escalateRevocation } = proxyActivities<ReturnType<typeof createProofActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

/** Sent after a person's completion committed in the database. */
export const revocationCompletedSignal = defineSignal('revocationCompleted');

export interface RevocationInput {
  revocationId: string;
  slaDeadlineAt: string;
}

/**
 * Waits for a person to complete a filed revocation. When the SLA passes first, it escalates once
 * (proof.health.warning) and keeps waiting: a revocation is never dropped.
 */
export async function proofRevocationWorkflow(input: RevocationInput): Promise<string> {
  const state = { completed: false };
  setHandler(revocationCompletedSignal, () => {
    state.completed = true;
  });
  const untilDeadline = Math.max(1, Date.parse(input.slaDeadlineAt) - Date.now());
  if (!(await condition(() => state.completed, untilDeadline))) {
    await recordedStep('escalateRevocation', () => escalateRevocation(input.revocationId));
    await condition(() => state.completed);
    return 'completed_after_escalation';
  }
  return 'completed';
}
