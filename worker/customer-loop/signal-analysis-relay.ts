import { Client } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { claimSignalsForAnalysis } from '../../db/customer-loop/signal-analysis';
import { Config } from '../../runtime/config';
import { startOnce } from '../../runtime/start-once';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { signalAnalysisWorkflow } from '../../workflows/customer-loop/signal-analysis-workflow';
import { RelayOptions } from '../relay';
import { signalAnalysisWorkflowId } from '../../workflows/workflow-ids';

/** The relay tick that starts one analysis workflow per committed signal, within the allowance. */
export function signalAnalysisRelay(ds: DataSource, client: Client, config: Config): RelayOptions {
  return {
    name: 'signal-analysis',
    batchSize: config.signalRelayBatch,
    idleMs: config.signalRelayIdleMs,
    log: (line) => console.error(`[sv] ${line}`),
    tick: (batchSize) => claimSignalsForAnalysis(ds, batchSize, config.signalMonthlyAllowance, async (signal) => {
      // An earlier claim may have started it and lost its commit: the analysis runs (or ran) already.
      await startOnce(client.workflow, signalAnalysisWorkflow, {
        workflowId: signalAnalysisWorkflowId(signal.id),
        taskQueue: config.taskQueue,
        args: [{
          signalId: signal.id,
          ai: { maxAttempts: config.aiMaxAttempts, retryInitialMs: config.aiRetryInitialMs, timeoutMs: config.aiTimeoutMs },
        }],
        ...tenantStartOptions(signal.organizationId, signal.productId),
      });
    }),
  };
}
