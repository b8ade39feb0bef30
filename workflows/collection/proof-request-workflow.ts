import { ApplicationFailure, condition, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createProofRequestActivities } from '../../activities/collection/proof-request-activities';

const { deliverProofRequest, expireProofRequest } = proxyActivities<ReturnType<typeof createProofRequestActivities>>({
  startToCloseTimeout: '1 minute',
  // A mail server that is down comes back; the delivery claim keeps retries from sending twice.
  retry: { initialInterval: '1 second', maximumInterval: '5 minutes' },
});

/** Sent after the change committed in the database: the request is closed, nothing more is sent. */
export const requestRespondedSignal = defineSignal('responded');
export const requestCancelledSignal = defineSignal('cancelled');
export const requestOptedOutSignal = defineSignal('opted_out');
/** A person's reminder: refused once a reminder was sent or the request closed. */
export const remindUpdate = defineUpdate<'delivered' | 'skipped'>('remind');

export interface ProofRequestInput {
  requestId: string;
  /** E-mail and in-app are delivered by the service; other channels only wait. */
  delivered: boolean;
  remindAfterMs: number | null;
  expiresAt: string;
}

/**
 * One sent personal request: delivers it, sends at most one reminder (the timer's or a person's,
 * whichever comes first), and marks it expired at `expiresAt` unless it was closed before.
 */
export async function proofRequestWorkflow(input: ProofRequestInput): Promise<string> {
  const state = { closed: null as string | null, reminder: 'none' as 'none' | 'sending' | 'done' };
  setHandler(requestRespondedSignal, () => { state.closed ??= 'responded'; });
  setHandler(requestCancelledSignal, () => { state.closed ??= 'cancelled'; });
  setHandler(requestOptedOutSignal, () => { state.closed ??= 'opted_out'; });

  const remind = async (): Promise<'delivered' | 'skipped'> => {
    state.reminder = 'sending';
    const outcome = await deliverProofRequest(input.requestId, 'reminder');
    state.reminder = 'done';
    return outcome;
  };
  setHandler(remindUpdate, remind, {
    validator: () => {
      if (state.closed) throw ApplicationFailure.nonRetryable(`the request is ${state.closed}`, 'CONFLICT');
      if (state.reminder !== 'none') throw ApplicationFailure.nonRetryable('the one reminder was already sent', 'CONFLICT');
    },
  });

  if (input.delivered) await deliverProofRequest(input.requestId, 'initial');
  const untilExpiry = () => Math.max(1, Date.parse(input.expiresAt) - Date.now());
  if (input.remindAfterMs !== null && input.remindAfterMs < untilExpiry()) {
    const settled = await condition(() => state.closed !== null || state.reminder !== 'none', input.remindAfterMs);
    if (!settled) await remind();
  }
  const closed = await condition(() => state.closed !== null, untilExpiry());
  await condition(() => state.reminder !== 'sending');
  if (closed) return state.closed!;
  await expireProofRequest(input.requestId);
  return 'expired';
}
