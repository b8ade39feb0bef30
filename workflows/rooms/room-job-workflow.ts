import { proxyActivities } from '@temporalio/workflow';
import type { createRoomActivities } from '../../activities/rooms/room-activities';
import { DATABASE_RETRY } from '../platform/database-retry';

export interface RoomJobInput {
  jobId: string;
}

const { beginRoomJob, runRoomJob } = proxyActivities<ReturnType<typeof createRoomActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

/**
 * One room job (docs/rooms.md#jobs-promises-solve-sessions-and-handoff): queued → running, then the effect and the outcome in one transaction.
 * Both steps re-read the job under its lock, so a retried step never writes the effect twice.
 */
export async function roomJobWorkflow(input: RoomJobInput): Promise<string> {
  await beginRoomJob(input.jobId);
  return runRoomJob(input.jobId);
}
