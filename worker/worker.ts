import { Client, WorkflowIdReusePolicy } from '@temporalio/client';
import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import { DataSource } from 'typeorm';
import { createActivities } from '../activities';
import { maintenanceWorkflow } from '../workflows/platform/maintenance-workflow';
import { Config } from '../runtime/config';
import { startOnce } from '../runtime/start-once';
import { tenantStartOptions } from '../runtime/workflow-memo';
import { proofHealthWorkflow } from '../workflows/integrations/proof-health-workflow';
import { MAINTENANCE_WORKFLOW_ID, proofHealthWorkflowId } from '../workflows/workflow-ids';

export interface WorkerDeps {
  connection: NativeConnection;
  dataSource: DataSource;
  config: Config;
  /** A prebuilt bundle (tests build it once); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Aborted once the shutdown grace is over (`startWorker`'s stop). */
  stopping?: AbortSignal;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { connection, dataSource, config, workflowBundle, stopping } = deps;
  return Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    activities: createActivities({ dataSource, config, stopping }),
    // On SIGTERM running activities get this long to finish; the ones still running are then cancelled,
    // their attempt fails and Temporal hands them to another worker (local ones: `stopping`).
    shutdownGraceTime: config.workerShutdownGraceMs,
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
  });
}

/** Starts the maintenance workflow unless it already runs; every worker may call this. */
export async function ensureMaintenance(client: Client, config: Config): Promise<void> {
  // An ended maintenance run may start again; a running one is kept.
  await startOnce(client.workflow, maintenanceWorkflow, {
    workflowId: MAINTENANCE_WORKFLOW_ID,
    taskQueue: config.taskQueue,
    args: [{ intervalMs: config.maintenanceIntervalMs }],
    memo: { role: 'maintenance' },
  }, WorkflowIdReusePolicy.ALLOW_DUPLICATE);
}

/** One health workflow per active product; a running one is kept. Products added later start on their first run-now. */
export async function ensureHealthChecks(client: Client, config: Config, dataSource: DataSource): Promise<void> {
  const rows: Array<{ id: string; organization_id: string }> = await dataSource.query(`SELECT id, organization_id FROM products WHERE active`);
  for (const row of rows) {
    await client.workflow.start(proofHealthWorkflow, {
      workflowId: proofHealthWorkflowId(row.id),
      taskQueue: config.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ productId: row.id, intervalMs: config.proofHealthIntervalMs }],
      ...tenantStartOptions(row.organization_id, row.id),
    });
  }
}
