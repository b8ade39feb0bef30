import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createCustomerLoopActivities } from '../../activities/customer-loop/customer-loop-activities';
import { DATABASE_RETRY, recordedStep } from '../platform/database-retry';

const { escalateThreadSla } = proxyActivities<ReturnType<typeof createCustomerLoopActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

/** A new promised update time (ISO date-time), or null when the promise is withdrawn. */
export const promiseSignal = defineSignal<[string | null]>('promise');
/** A customer-visible reply answered the promise. */
export const repliedSignal = defineSignal('replied');

export interface ThreadSlaInput {
  threadId: string;
}

/**
 * Watches one promised update of a thread: a reply (or a withdrawn promise) ends it; the promised time
 * passing unanswered escalates once. A changed promise restarts the wait. Started with signalWithStart,
 * so the first promise arrives as a signal before the first wait.
 */
export async function threadSlaWorkflow(input: ThreadSlaInput): Promise<'replied' | 'withdrawn' | 'escalated'> {
  let dueAt: string | null = null;
  let version = 0;
  let replied = false;
  setHandler(promiseSignal, (next) => {
    dueAt = next;
    version += 1;
    replied = false;
  });
  setHandler(repliedSignal, () => {
    replied = true;
  });
  await condition(() => version > 0 || replied);
  for (;;) {
    if (replied) return 'replied';
    if (dueAt === null) return 'withdrawn';
    const seen = version;
    const due: string = dueAt;
    const remaining = Date.parse(due) - Date.now();
    const interrupted = remaining > 0 && await condition(() => replied || version !== seen, remaining);
    if (interrupted) continue;
    await recordedStep('escalateThreadSla', () => escalateThreadSla(input.threadId, due));
    return 'escalated';
  }
}
