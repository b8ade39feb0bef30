import { ActivityFailure, WorkflowIdReusePolicy, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { AttemptResult, createWebhookActivities } from '../../activities/webhooks/webhook-activities';

export const WEBHOOK_MAX_ATTEMPTS = 8;

/** Each delivery id runs once; a replay is a new delivery with a new id. */
export const WEBHOOK_ID_REUSE_POLICY = WorkflowIdReusePolicy.REJECT_DUPLICATE;

export interface WebhookDeliveryInput {
  deliveryId: string;
  timeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  maxAttempts: number;
  /** Attempts a batch already made (its first): this run goes on from the next number. */
  attemptsMade?: number;
  /** The last of those was answered, so the backoff after it runs first; otherwise it was cut short. */
  waitFirst?: boolean;
}

/** The wait after a failed attempt: initial, doubling, capped (30 s, 1 min, ... 1 h by default). */
export function backoffMs(input: WebhookDeliveryInput, attempt: number): number {
  return Math.min(input.retryInitialMs * 2 ** (attempt - 1), input.retryMaxMs);
}

type Activities = ReturnType<typeof createWebhookActivities>;

/**
 * Delivers one event to one endpoint: up to `maxAttempts` attempts with backoff, then failed. A worker
 * that dies mid-attempt loses nothing: the activity runs again on another worker. Started by a batch
 * (`webhookBatchWorkflow`) only when its first attempt did not deliver.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<'delivered' | 'failed'> {
  // A send may repeat when a worker dies mid-attempt (at least once), but never because recording failed.
  const { sendWebhookAttempt } = proxyActivities<Activities>({
    startToCloseTimeout: input.timeoutMs + 30_000,
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  });
  // Our own database calls: keep trying until it is back.
  const { recordWebhookAttempt, failWebhookDelivery } = proxyActivities<Activities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  // Runs started before attempt numbers were reserved in the database keep their old path on replay.
  const reserved = patched('webhook-attempts-reserved');
  // Retries of a delivery whose first attempt a batch made; runs from before batches never carry these.
  const made = input.attemptsMade && patched('webhook-first-attempt-in-batch') ? input.attemptsMade : 0;
  if (made > 0 && input.waitFirst) await sleep(backoffMs(input, made));
  for (let attempt = made + 1; attempt <= input.maxAttempts; attempt++) {
    let result: AttemptResult;
    try {
      result = await sendWebhookAttempt({ deliveryId: input.deliveryId, attempt, timeoutMs: input.timeoutMs });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      if (reserved) {
        // Each try logged its own number, interrupted ones included; nothing more to write.
        if (attempt < input.maxAttempts) await sleep(backoffMs(input, attempt));
        continue;
      }
      result = {
        kind: 'sent', startedAt: new Date().toISOString(), durationMs: 0, statusCode: null, excerpt: null,
        error: `the attempt could not run: ${err.cause?.message ?? err.message}`,
      };
    }
    if (result.kind === 'skipped') {
      if (result.reason === 'already-delivered') return 'delivered';
      if (result.reason === 'endpoint-disabled') await failWebhookDelivery({ deliveryId: input.deliveryId, reason: 'endpoint disabled: not sent' });
      return 'failed';
    }
    if (await recordWebhookAttempt({ deliveryId: input.deliveryId, attempt: result.attempt ?? attempt, result })) return 'delivered';
    if (attempt < input.maxAttempts) await sleep(backoffMs(input, attempt));
  }
  await failWebhookDelivery({ deliveryId: input.deliveryId, reason: `no 2xx answer in ${input.maxAttempts} attempts` });
  return 'failed';
}
