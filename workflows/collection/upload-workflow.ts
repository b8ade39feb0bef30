import { ApplicationFailure, condition, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createCollectionActivities } from '../../activities/collection/collection-activities';
import type { AssemblyResult } from '../../db/collection/uploads';

const { assembleUpload, expireUpload, eraseUpload } = proxyActivities<ReturnType<typeof createCollectionActivities>>({
  startToCloseTimeout: '10 minutes',
  // Storage hiccups heal; retrying cannot make a wrong file right, and the activity reports that as a result.
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** Assembles the parts into the original; answers the outcome (complete, or open with lastError). */
export const assembleUpdate = defineUpdate<AssemblyResult>('assemble');
/** Sent after a cancel committed in the database: erase the bytes. */
export const cancelSignal = defineSignal('cancel');

export interface UploadInput {
  sessionId: string;
  expiresAt: string;
}

/**
 * One upload session: waits for `assemble` (the parts arrive over HTTP meanwhile), a `cancel`, or
 * the expiry timer. An assembly that fails its checks leaves the session open for corrected parts.
 */
export async function uploadWorkflow(input: UploadInput): Promise<string> {
  const state: { phase: 'open' | 'assembling' | 'complete'; cancelled: boolean; result: AssemblyResult | null } = {
    phase: 'open', cancelled: false, result: null,
  };
  setHandler(cancelSignal, () => {
    state.cancelled = true;
  });
  setHandler(assembleUpdate, async () => {
    // A second POST while assembling waits for the same outcome instead of assembling twice.
    if (state.phase === 'assembling') await condition(() => state.phase !== 'assembling');
    if (state.phase === 'complete' && state.result) return state.result;
    state.phase = 'assembling';
    const result = await assembleUpload(input.sessionId);
    state.result = result;
    state.phase = result.status === 'complete' ? 'complete' : 'open';
    if (result.status === 'cancelled' || result.status === 'expired') state.cancelled = true;
    return result;
  }, {
    validator: () => {
      if (state.cancelled) throw ApplicationFailure.nonRetryable('this upload was cancelled', 'CONFLICT');
    },
  });
  const untilExpiry = Math.max(1, Date.parse(input.expiresAt) - Date.now());
  const settled = await condition(() => state.cancelled || state.phase === 'complete', untilExpiry);
  if (state.cancelled) {
    await eraseUpload(input.sessionId);
    return 'cancelled';
  }
  if (!settled) {
    await condition(() => state.phase !== 'assembling');
    if (state.phase === 'open' && await expireUpload(input.sessionId)) return 'expired';
  }
  // A complete upload may still be cancelled while its draft is open; its bytes are erased then.
  await condition(() => state.cancelled);
  await eraseUpload(input.sessionId);
  return 'cancelled';
}
