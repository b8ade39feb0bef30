import { Client } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { newId } from '../../db/rules/ids';
import { UnstartedDelivery, dispatchDeliveries, publishOutbox } from '../../db/webhooks/webhook-publisher';
import { Config } from '../../runtime/config';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { WEBHOOK_MAX_ATTEMPTS } from '../../workflows/webhooks/webhook-delivery-workflow';
import { webhookBatchWorkflow } from '../../workflows/webhooks/webhook-batch-workflow';
import { RelayOptions } from '../relay';
import { webhookBatchWorkflowId } from '../../workflows/workflow-ids';

/** Batches (of WEBHOOK_BATCH_SIZE deliveries each) one relay tick publishes, claims and starts at most. */
const WEBHOOK_BATCHES_PER_TICK = 4;

/**
 * The outbox publisher: outbox rows become deliveries, and each claimed batch of deliveries becomes one
 * batch workflow that makes their first attempts (failures go on in a retry workflow each). Both phases
 * are idempotent, and a delivery's first attempt has one owner, so a crash between them, or two workers
 * at once, sends nothing twice.
 *
 * With `eagerStart` (a client on the connection of the worker that polls `config.taskQueue`), a batch's
 * first workflow task comes back in the start's answer and runs in this worker at once, instead of
 * waiting in the server for a poll; the server falls back to a plain start when the worker has no free
 * slot. A worker that dies holding it leaves the task to time out, as with a polled one.
 */
export function webhookRelay(ds: DataSource, client: Client, config: Config, { eagerStart = false } = {}): RelayOptions {
  const schedule = {
    timeoutMs: config.webhookTimeoutMs,
    retryInitialMs: config.webhookRetryInitialMs,
    retryMaxMs: config.webhookRetryMaxMs,
    maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    concurrency: config.webhookBatchConcurrency,
  };
  const startBatch = async (deliveries: UnstartedDelivery[]): Promise<string[]> => {
    const batchId = newId('whb');
    try {
      await client.workflow.start(webhookBatchWorkflow, {
        workflowId: webhookBatchWorkflowId(batchId),
        taskQueue: config.taskQueue,
        requestEagerStart: eagerStart,
        memo: { role: 'webhook-batch' },
        args: [{
          ...schedule,
          deliveries: deliveries.map((d) => {
            const tenant = tenantStartOptions(d.organizationId, d.productId);
            return { id: d.id, memo: { ...tenant.memo, endpointId: d.endpointId }, typedSearchAttributes: tenant.typedSearchAttributes };
          }),
        }],
      });
    } catch (err) {
      // None is marked started: the batch is claimed again shortly.
      console.error(`[sv] webhook relay: a batch start failed, retried shortly: ${(err as Error).message}`);
      return [];
    }
    return deliveries.map((d) => d.id);
  };
  const perBatch = config.webhookBatchSize;
  return {
    name: 'webhook',
    // A tick takes up to WEBHOOK_BATCHES_PER_TICK batches and starts them together, so that under a
    // burst the later batches do not wait for the earlier ones' publish, claim and start.
    batchSize: perBatch * WEBHOOK_BATCHES_PER_TICK,
    idleMs: config.webhookRelayIdleMs,
    log: (line) => console.error(`[sv] ${line}`),
    tick: async (tickSize) => {
      const published = await publishOutbox(ds, tickSize);
      const dispatched = await dispatchDeliveries(ds, tickSize, async (deliveries) => {
        const batches = Array.from({ length: Math.ceil(deliveries.length / perBatch) }, (_, i) => deliveries.slice(i * perBatch, (i + 1) * perBatch));
        return (await Promise.all(batches.map(startBatch))).flat();
      });
      return Math.max(published, dispatched);
    },
  };
}
