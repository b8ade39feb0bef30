import { Client, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { claimSignalsForAnalysis } from '../../db/customer-loop/signal-analysis';
import { Config } from '../../runtime/config';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { signalAnalysisWorkflow, signalAnalysisWorkflowId } from '../../workflows/customer-loop/signal-analysis-workflow';
import { RelayOptions } from '../relay';

/** The relay tick that starts one analysis workflow per committed signal, within the allowance. */
export function signalAnalysisRelay(ds: DataSource, client: Client, config: Config): RelayOptions {
  return {
    name: 'signal-analysis',
    batchSize: config.signalRelayBatch,
    idleMs: config.signalRelayIdleMs,
    log: (line) => console.error(`[sv] ${line}`),
    tick: (batchSize) => claimSignalsForAnalysis(ds, batchSize, config.signalMonthlyAllowance, async (signal) => {
      try {
        await client.workflow.start(signalAnalysisWorkflow, {
          workflowId: signalAnalysisWorkflowId(signal.id),
          taskQueue: config.taskQueue,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [{
            signalId: signal.id,
            ai: { maxAttempts: config.aiMaxAttempts, retryInitialMs: config.aiRetryInitialMs, timeoutMs: config.aiTimeoutMs },
          }],
          ...tenantStartOptions(signal.organizationId, signal.productId),
        });
      } catch (err) {
        // An earlier claim started it and its commit was lost: the analysis runs (or ran) already.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }),
  };
}
