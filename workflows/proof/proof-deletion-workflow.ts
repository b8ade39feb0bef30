import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createProofActivities } from '../../activities/proof/proof-activities';
import { DATABASE_RETRY, recordedStep } from '../platform/database-retry';

const { closeRecoveryWindow } = proxyActivities<ReturnType<typeof createProofActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

export interface Deletion {
  deletedAt: string;
  recoveryClosesAt: string;
}

/** Started with (or sent to a running workflow by) signalWithStart on every delete. */
export const itemDeletedSignal = defineSignal<[Deletion]>('itemDeleted');
export const itemRestoredSignal = defineSignal('itemRestored');

/**
 * The recovery window of a deleted item: a restore ends it; otherwise, when the window closes, the
 * item is purged for good. A delete after a restore, while this still runs, restarts the window.
 */
export async function proofDeletionWorkflow(input: { proofItemId: string }): Promise<string> {
  const state: { current: Deletion | null } = { current: null };
  setHandler(itemDeletedSignal, (deletion) => {
    state.current = deletion;
  });
  setHandler(itemRestoredSignal, () => {
    state.current = null;
  });
  await condition(() => state.current !== null);
  while (state.current !== null) {
    const watching: Deletion = state.current;
    const untilClose = Math.max(1, Date.parse(watching.recoveryClosesAt) - Date.now());
    if (!(await condition(() => state.current !== watching, untilClose))) {
      await recordedStep('closeRecoveryWindow', () => closeRecoveryWindow(input.proofItemId, watching.deletedAt));
      return 'purged';
    }
  }
  return 'restored';
}
