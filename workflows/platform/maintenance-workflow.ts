import { continueAsNew, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { createCollectionActivities } from '../../activities/collection/collection-activities';
import type { createDatabaseActivities } from '../../activities/platform/database-activities';
import type { createRoomActivities } from '../../activities/rooms/room-activities';
import { DATABASE_RETRY } from './database-retry';

const { purgeExpiredRecords } = proxyActivities<ReturnType<typeof createDatabaseActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

// Erasing media may take longer than a purge; storage hiccups heal on retry.
const { sweepExpiredDrafts } = proxyActivities<ReturnType<typeof createCollectionActivities>>({
  startToCloseTimeout: '10 minutes',
  retry: DATABASE_RETRY,
});
const { sweepRoomAttachments } = proxyActivities<ReturnType<typeof createRoomActivities>>({
  startToCloseTimeout: '10 minutes',
  retry: DATABASE_RETRY,
});

export const MAINTENANCE_WORKFLOW_ID = 'maintenance/purge-expired';

export interface MaintenanceInput {
  intervalMs: number;
}

// Keeps each run's history short; the next run starts where this one stopped.
const ROUNDS_PER_RUN = 100;

/**
 * Purges expired idempotency records, consumed nonces, old rate-limit windows, stale sessions and
 * published outbox rows on a fixed interval, for as long as the service runs; and erases customer drafts
 * idle past PROOF_DRAFT_TTL_DAYS with their uploaded bytes, and room uploads left unattached for 24 h.
 */
export async function maintenanceWorkflow(input: MaintenanceInput): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    await purgeExpiredRecords();
    if (patched('expired-draft-sweep')) await sweepExpiredDrafts();
    if (patched('room-attachment-sweep')) await sweepRoomAttachments();
    await sleep(input.intervalMs);
  }
  await continueAsNew<typeof maintenanceWorkflow>(input);
}
