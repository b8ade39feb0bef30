import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhook-activities';

export const WEBHOOK_MAX_ATTEMPTS = 8;

export const webhookDeliveryWorkflowId = (deliveryId: string) => `webhook-delivery/${deliveryId}`;

export interface WebhookDeliveryInput {
  deliveryId: string;
  timeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  maxAttempts: number;
}

/** The wait after a failed attempt: initial, doubling, capped (30 s, 1 min, ... 1 h by default). */
export function backoffMs(input: WebhookDeliveryInput, attempt: number): number {
  return Math.min(input.retryInitialMs * 2 ** (attempt - 1), input.retryMaxMs);
}

/**
 * Delivers one event to one endpoint: up to `maxAttempts` attempts with backoff, then failed. A worker
 * that dies mid-attempt loses nothing: the attempt activity runs again on another worker.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<'delivered' | 'failed'> {
  const { attemptWebhookDelivery, failWebhookDelivery } = proxyActivities<ReturnType<typeof createWebhookActivities>>({
    startToCloseTimeout: input.timeoutMs + 30_000,
    // An activity error means our own database or worker failed, not the receiver: keep trying.
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  for (let attempt = 1; attempt <= input.maxAttempts; attempt++) {
    const outcome = await attemptWebhookDelivery({ deliveryId: input.deliveryId, attempt });
    if (outcome === 'delivered' || outcome === 'finished') return 'delivered';
    if (outcome === 'disabled') {
      await failWebhookDelivery({ deliveryId: input.deliveryId, reason: 'endpoint disabled: not sent' });
      return 'failed';
    }
    if (attempt < input.maxAttempts) await sleep(backoffMs(input, attempt));
  }
  await failWebhookDelivery({ deliveryId: input.deliveryId, reason: `no 2xx answer in ${input.maxAttempts} attempts` });
  return 'failed';
}
