import { Client } from '@temporalio/client';
import { Config } from '../../runtime/config';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { proofHealthWorkflow, proofHealthWorkflowId, runHealthNowSignal } from '../../workflows/integrations/proof-health-workflow';

/** Starts the product's health workflow if it is not running, and asks it to run its checks now. */
export async function runHealthNow(temporal: Client, config: Config, tenant: { organizationId: string; productId: string }): Promise<string> {
  const workflowId = proofHealthWorkflowId(tenant.productId);
  await temporal.workflow.signalWithStart(proofHealthWorkflow, {
    workflowId,
    taskQueue: config.taskQueue,
    args: [{ productId: tenant.productId, intervalMs: config.proofHealthIntervalMs }],
    signal: runHealthNowSignal,
    signalArgs: [],
    ...tenantStartOptions(tenant.organizationId, tenant.productId),
  });
  return workflowId;
}
