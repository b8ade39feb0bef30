import { Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { dispatchDeliveries, publishOutbox } from '../../db/webhooks/webhooks';
import { Config } from '../../runtime/config';
import { tenantMemo } from '../../runtime/workflow-memo';
import {
  WEBHOOK_ID_REUSE_POLICY, WEBHOOK_MAX_ATTEMPTS, webhookDeliveryWorkflow, webhookDeliveryWorkflowId,
} from '../../workflows/webhooks/webhook-delivery-workflow';
import { RelayOptions } from '../relay';

/**
 * The outbox publisher: outbox rows become deliveries, and deliveries become workflows. Both phases
 * are idempotent, so a crash between them, or two workers at once, sends nothing twice.
 */
export function webhookRelay(ds: DataSource, client: Client, config: Config): RelayOptions {
  const input = {
    timeoutMs: config.webhookTimeoutMs,
    retryInitialMs: config.webhookRetryInitialMs,
    retryMaxMs: config.webhookRetryMaxMs,
    maxAttempts: WEBHOOK_MAX_ATTEMPTS,
  };
  return {
    name: 'webhook',
    batchSize: config.relayBatchSize,
    idleMs: config.relayIdleMs,
    log: (line) => console.error(`[sv] ${line}`),
    tick: async (batchSize) => {
      const published = await publishOutbox(ds, batchSize);
      const dispatched = await dispatchDeliveries(ds, batchSize, async (deliveries) => {
        const started = await Promise.allSettled(deliveries.map(async (d) => {
          try {
            await client.workflow.start(webhookDeliveryWorkflow, {
              workflowId: webhookDeliveryWorkflowId(d.id),
              workflowIdReusePolicy: WEBHOOK_ID_REUSE_POLICY,
              taskQueue: config.taskQueue,
              args: [{ deliveryId: d.id, ...input }],
              memo: { ...tenantMemo(d.organizationId, d.productId), endpointId: d.endpointId },
            });
          } catch (err) {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          }
          return d.id;
        }));
        const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) console.error(`[sv] webhook relay: a delivery start failed, retried shortly: ${(failed.reason as Error).message}`);
        // Only the started ones are marked; the rest are claimed again shortly.
        return started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      });
      return Math.max(published, dispatched);
    },
  };
}
