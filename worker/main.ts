import { setMaxListeners } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { DataSource } from 'typeorm';
import { Config, loadConfig } from '../runtime/config';
import { openDatabase } from '../db/data-source';
import { databaseUrlOf, temporalAddressOf } from '../runtime/services';
import { onShutdown } from '../runtime/shutdown';
import { announceReady } from '../runtime/role-supervisor';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { ensureTenantSearchAttributes } from '../runtime/workflow-memo';
import { warnIfPrivateTargetsAllowed } from '../runtime/webhook-target';
import { RelayOptions, RunningRelay, startRelay } from './relay';
import { webhookRelay } from './webhooks/webhook-relay';
import { signalAnalysisRelay } from './customer-loop/signal-analysis-relay';
import { createWorker, ensureHealthChecks, ensureMaintenance } from './worker';
import { startupFailureLine } from '../runtime/startup-error';
import { workflowCommandRelay } from './workflow-commands';
import { workflowBundleOf } from './workflow-bundle';
import { startMetricsListener } from './metrics-listener';
import { assertPortFree, freeLoopbackPort } from '../runtime/ports';
import { registerBacklogGauges } from '../runtime/metrics';
import { readBacklog } from '../db/platform/backlog';
import { temporalConnectionOptions } from '../runtime/temporal-connection';
import { assertSecretKeysConfigured } from '../runtime/secret-box';

export interface RunningWorker {
  stop: () => Promise<void>;
}

export interface WorkerConnections {
  nativeConnection: NativeConnection;
  client: Client;
  /** Tests pass a bundle built once; otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/**
 * The worker role: the Temporal worker, the relays that hand committed rows to Temporal, and the
 * maintenance workflow. Any number of these may run against one Temporal and one database.
 */
export async function startWorker(config: Config, dataSource: DataSource, conn: WorkerConnections): Promise<RunningWorker> {
  warnIfPrivateTargetsAllowed(config.webhookAllowPrivateTargets);
  const stopping = new AbortController();
  // Every call to a third party in flight listens to it (32 webhook sends a batch, and more): not a leak.
  setMaxListeners(0, stopping.signal);
  const worker = await createWorker({ connection: conn.nativeConnection, dataSource, config, workflowBundle: conn.workflowBundle, stopping: stopping.signal });
  // Workflows started with tenant search attributes fail on a namespace that lacks them.
  await ensureTenantSearchAttributes(conn.client, config.temporalNamespace);
  await ensureMaintenance(conn.client, config);
  await ensureHealthChecks(conn.client, config, dataSource);
  const running = worker.run();
  // Batches start on the worker's own connection, so that their first workflow task comes back with
  // the start (eager start) instead of through a poll.
  const local = new Client({ connection: conn.nativeConnection, namespace: config.temporalNamespace });
  const relays: RunningRelay[] = workerRelays(config, dataSource, conn.client, local).map(startRelay);
  return {
    stop: async () => {
      await Promise.all(relays.map((relay) => relay.stop()));
      if (worker.getState() === 'RUNNING') worker.shutdown();
      // The SDK cancels remote activities when the grace is over; the local ones (a webhook batch's first
      // attempts) hear it from `stopping`, hand their deliveries on, and let the worker end.
      const grace = setTimeout(() => stopping.abort(new Error('the worker is stopping')), config.workerShutdownGraceMs);
      try {
        await running;
      } finally {
        clearTimeout(grace);
      }
    },
  };
}

/**
 * The relays a worker runs. Without an AI provider no analysis relay runs: each analysis would only
 * start a workflow that fails at once, so signals keep analysisState 'pending' until a provider is
 * configured and a worker restarted with it picks them up. `local`, a client on this worker's own
 * connection, lets the webhook relay start its batches eagerly (see `webhookRelay`).
 */
export function workerRelays(config: Config, dataSource: DataSource, client: Client, local?: Client): RelayOptions[] {
  const aiConfigured = Boolean(config.aiBaseUrl && config.aiModel);
  return [
    webhookRelay(dataSource, local ?? client, config, { eagerStart: local !== undefined }),
    ...(aiConfigured ? [signalAnalysisRelay(dataSource, client, config)] : []),
    workflowCommandRelay(dataSource, client, config),
  ];
}

/** Connects to Temporal for the worker role; `close` ends both connections. */
export async function connectWorker(config: Config, address: string) {
  const options = temporalConnectionOptions(config, address);
  const nativeConnection = await NativeConnection.connect(options);
  const connection = await Connection.connect(options);
  return {
    nativeConnection,
    client: new Client({ connection, namespace: config.temporalNamespace }),
    close: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  assertSecretKeysConfigured(config);
  if (config.workerMetricsPort) await assertPortFree(config.host, config.workerMetricsPort, 'SV_WORKER_METRICS_PORT');
  // The SDK serves its own worker metrics on loopback; the metrics listener appends them to ours.
  const sdkMetricsPort = config.workerMetricsPort ? await freeLoopbackPort() : 0;
  installTemporalLogger(undefined, sdkMetricsPort ? `127.0.0.1:${sdkMetricsPort}` : undefined);
  const ds = await openDatabase(databaseUrlOf(config));
  registerBacklogGauges(() => readBacklog(ds));
  const conn = await connectWorker(config, temporalAddressOf(config));
  const workflowBundle = workflowBundleOf(config);
  const worker = await startWorker(config, ds, { ...conn, workflowBundle });
  const bundled = workflowBundle && 'codePath' in workflowBundle ? `, workflows from ${workflowBundle.codePath}` : '';
  const metrics = config.workerMetricsPort
    ? await startMetricsListener(config.host, config.workerMetricsPort, `http://127.0.0.1:${sdkMetricsPort}/metrics`) : null;
  console.log(`[sv] worker polling task queue ${config.taskQueue} on ${temporalAddressOf(config)}${bundled}${metrics ? `; metrics ${metrics.url}/metrics` : ''}`);
  announceReady();
  onShutdown([() => ds.destroy(), conn.close, ...(metrics ? [metrics.close] : []), worker.stop], (line) => console.log(`[sv] ${line}`));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`[sv] worker: ${startupFailureLine(err)}`);
    process.exit(1);
  });
}
