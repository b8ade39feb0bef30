import { continueAsNew, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { createCollectionActivities } from '../../activities/collection/collection-activities';
import type { createDatabaseActivities } from '../../activities/platform/database-activities';
import type { createRoomMaintenanceActivities } from '../../activities/rooms/room-maintenance-activities';
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

const { compactRoomEvents, sweepRoomAttachments } = proxyActivities<ReturnType<typeof createRoomMaintenanceActivities>>({
  startToCloseTimeout: '10 minutes',
  retry: DATABASE_RETRY,
});

export interface MaintenanceInput {
  intervalMs: number;
}

// Keeps each run's history short; the next run starts where this one stopped.
const ROUNDS_PER_RUN = 100;

/**
 * Purges expired idempotency records, consumed nonces, old rate-limit windows, stale sessions and
 * published outbox rows on a fixed interval, for as long as the service runs; and erases customer drafts
 * idle past PROOF_DRAFT_TTL_DAYS with their uploaded bytes; compacts room events older than
 * SV_ROOM_EVENT_RETENTION_MS; and erases room uploads left unattached for 24 h.
 */
export async function maintenanceWorkflow(input: MaintenanceInput): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    await purgeExpiredRecords();
    if (patched('expired-draft-sweep')) await sweepExpiredDrafts();
    if (patched('room-event-compaction')) await compactRoomEvents();
    if (patched('room-attachment-sweep')) await sweepRoomAttachments();
    await sleep(input.intervalMs);
  }
  await continueAsNew<typeof maintenanceWorkflow>(input);
}
