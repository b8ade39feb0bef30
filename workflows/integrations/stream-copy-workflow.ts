import { proxyActivities } from '@temporalio/workflow';
import type { createIntegrationActivities } from '../../activities/integrations/integration-activities';

const { copyToStreamHost } = proxyActivities<ReturnType<typeof createIntegrationActivities>>({
  startToCloseTimeout: '2 minutes',
  // The host or the database may be down for a while; a refusal that retrying cannot fix fails at once.
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes' },
});

export type StreamCopyInput = Parameters<ReturnType<typeof createIntegrationActivities>['copyToStreamHost']>[0];

/**
 * Asks the video host to copy an approved customer video from a short-lived source link. Readiness
 * arrives later on the host's webhook (POST /api/public/proof/stream/webhook), which records it.
 */
export async function streamCopyWorkflow(input: StreamCopyInput): Promise<string | null> {
  return copyToStreamHost(input);
}
