import {
  ActivityOptions, ChildWorkflowOptions, ParentClosePolicy, patched, proxyActivities, proxyLocalActivities, startChild, workflowInfo,
} from '@temporalio/workflow';
import type { createWebhookActivities } from '../../activities/webhooks/webhook-activities';
import {
  WEBHOOK_ID_REUSE_POLICY, WebhookDeliveryInput, webhookDeliveryWorkflow,
} from './webhook-delivery-workflow';
import { webhookDeliveryWorkflowId } from '../workflow-ids';

/** One delivery of a batch, with what its retry workflow is started with (tenant memo and search attributes). */
export interface BatchDelivery {
  id: string;
  memo: Record<string, unknown>;
  typedSearchAttributes: Extract<ChildWorkflowOptions['typedSearchAttributes'], unknown[]>;
}

export interface WebhookBatchInput extends Omit<WebhookDeliveryInput, 'deliveryId' | 'attemptsMade' | 'waitFirst'> {
  deliveries: BatchDelivery[];
  /** How many first attempts run at once. */
  concurrency: number;
}

type Activities = ReturnType<typeof createWebhookActivities>;

/**
 * First attempts for a batch of deliveries in one activity, many at once, so that a delivery answered
 * at once costs no workflow of its own. Every other delivery continues in its own retry workflow
 * (`webhook-delivery/<id>`, one per delivery ever) with the usual backoff and attempt count; it outlives
 * this batch. A worker that dies mid-batch loses nothing: the activity runs again and each delivery
 * goes on from what the log holds (see `claimFirstAttempts`).
 *
 * The activity is a local one: it runs in the worker that took the batch's first workflow task, with
 * no round trip through the server to schedule it and hand it out, so the first attempts start as soon
 * as the batch does, and a batch costs the server one workflow task instead of two and an activity
 * task. A worker that dies mid-batch leaves that workflow task to time out, and the next worker runs
 * the activity again: the same recovery as before.
 */
export async function webhookBatchWorkflow(input: WebhookBatchInput): Promise<{ delivered: number; retrying: number }> {
  const rounds = Math.ceil(input.deliveries.length / input.concurrency);
  const options: ActivityOptions = {
    startToCloseTimeout: rounds * (input.timeoutMs + 5_000) + 60_000,
    // Idempotent per delivery: retrying after a worker died or the database was away can only help.
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  };
  // Batches started before the local activity replay with the activity task they scheduled.
  const { sendFirstWebhookAttempts } = patched('webhook-batch-local-activity')
    ? proxyLocalActivities<Activities>(options)
    : proxyActivities<Activities>({ ...options, heartbeatTimeout: '30 seconds' });
  const outcomes = await sendFirstWebhookAttempts({
    batchId: workflowInfo().workflowId,
    deliveryIds: input.deliveries.map((d) => d.id),
    timeoutMs: input.timeoutMs,
    concurrency: input.concurrency,
  });
  const byId = new Map(input.deliveries.map((d) => [d.id, d]));
  const retries = outcomes.flatMap((o) => (o.next === 'retry' ? [o] : []));
  await Promise.all(retries.map(async (o) => {
    const delivery = byId.get(o.deliveryId)!;
    // Only this batch owns the delivery's first attempt, so only it ever starts this id.
    await startChild(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(o.deliveryId),
      workflowIdReusePolicy: WEBHOOK_ID_REUSE_POLICY,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      memo: delivery.memo,
      typedSearchAttributes: delivery.typedSearchAttributes,
      args: [{
        deliveryId: o.deliveryId, timeoutMs: input.timeoutMs, retryInitialMs: input.retryInitialMs, retryMaxMs: input.retryMaxMs,
        maxAttempts: input.maxAttempts, attemptsMade: o.attemptsMade, waitFirst: o.waitFirst,
      }],
    });
  }));
  return { delivered: outcomes.length - retries.length, retrying: retries.length };
}
