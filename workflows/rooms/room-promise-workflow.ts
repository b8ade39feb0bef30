import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createRoomActivities } from '../../activities/rooms/room-activities';
import { DATABASE_RETRY } from '../platform/database-retry';

/** The promise was completed (committed before this is sent): the watch ends. */
export const promiseSettledSignal = defineSignal('settled');

export interface RoomPromiseInput {
  promiseId: string;
  /** ISO date-time the promise is due. */
  dueAt: string;
}

const { missRoomPromise } = proxyActivities<ReturnType<typeof createRoomActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

/**
 * Watches an approved promise (docs/rooms.md#agent-runs-and-approvals): completion ends the wait; the due date passing first marks
 * it `missed`, under its lock and only if still active, so a completion that committed first wins.
 */
export async function roomPromiseWorkflow(input: RoomPromiseInput): Promise<string> {
  let settled = false;
  setHandler(promiseSettledSignal, () => {
    settled = true;
  });
  const remaining = Date.parse(input.dueAt) - Date.now();
  if (remaining > 0 && await condition(() => settled, remaining)) return 'completed';
  return missRoomPromise(input.promiseId);
}
