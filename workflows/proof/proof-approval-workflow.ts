import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createProofActivities } from '../../activities/proof/proof-activities';
import { DATABASE_RETRY, recordedStep } from '../platform/database-retry';

const { remindApprover } = proxyActivities<ReturnType<typeof createProofActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

export type ApprovalOutcome = 'approved' | 'rejected' | 'superseded' | 'cancelled';

/** Sent after the decision committed in the database; the database stays the source of truth. */
export const approvalOutcomeSignal = defineSignal<[{ requestId: string; outcome: ApprovalOutcome }]>('approvalOutcome');

export interface ApprovalInput {
  requestId: string;
  proofItemId: string;
  versionId: string;
  reminderIntervalMs: number;
  remindersSent?: number;
}

// Keeps each run's history short for a review nobody gets to for a long time.
const REMINDERS_PER_RUN = 50;

/**
 * Waits for a person's decision on one queued version, reminding on a timer. Ends when decided,
 * superseded by a newer request, or cancelled because the item was revoked.
 */
export async function proofApprovalWorkflow(input: ApprovalInput): Promise<string> {
  const state: { outcome: ApprovalOutcome | null } = { outcome: null };
  setHandler(approvalOutcomeSignal, ({ requestId, outcome }) => {
    if (requestId === input.requestId && state.outcome === null) state.outcome = outcome;
  });
  let sent = input.remindersSent ?? 0;
  for (let round = 0; round < REMINDERS_PER_RUN; round++) {
    if (await condition(() => state.outcome !== null, input.reminderIntervalMs)) return state.outcome!;
    sent += 1;
    const current = await recordedStep('remindApprover', () => remindApprover(input.requestId, sent));
    // A decision whose signal never arrived (the API died after its commit) still ends the wait.
    if (current !== 'pending') return current;
  }
  return continueAsNew<typeof proofApprovalWorkflow>({ ...input, remindersSent: sent });
}
