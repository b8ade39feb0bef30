import { setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';

/** How often a call to a third party tells Temporal its worker is alive (the SDK throttles what it sends). */
const HEARTBEAT_EVERY_MS = 2_000;

/**
 * Runs a call to a third party (handed the signal that abandons it) while heartbeating. The signal
 * aborts when the activity is cancelled, or when `stopping` does: the worker's shutdown grace
 * (SV_WORKER_SHUTDOWN_GRACE_MS) is over. The SDK cancels remote activities then, but not local ones,
 * whose retries would keep the stopping worker alive; `stopping` covers both. Heartbeats let Temporal
 * notice a dead worker within the activity's heartbeat timeout rather than its start-to-close
 * timeout, and bring a cancellation a workflow requested; a local activity has none (its workflow
 * task's timeout notices a dead worker). Outside an activity (a test calling it), only `stopping`.
 */
export async function heartbeating<T>(call: (signal: AbortSignal | undefined) => Promise<T>, stopping?: AbortSignal): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    return call(stopping);
  }
  const signal = stopping ? AbortSignal.any([context.cancellationSignal, stopping]) : context.cancellationSignal;
  // A batch's 32 sends at once each listen to its activity's signal: not a leak.
  setMaxListeners(0, signal);
  const timer = context.info.isLocal ? undefined : setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await call(signal);
  } finally {
    clearInterval(timer);
  }
}

/** An abort by the activity's cancellation is rethrown as the SDK's own failure (it reports the attempt as cancelled, not as a provider error). */
export function rethrowIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}
