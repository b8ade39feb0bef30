import cluster from 'node:cluster';
import { Client, Connection } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { Config, loadConfig } from '../runtime/config';
import { openDatabase } from '../db/data-source';
import { databaseUrlOf, temporalAddressOf } from '../runtime/services';
import { assertPortFree } from '../runtime/ports';
import { onShutdown } from '../runtime/shutdown';
import { announceReady, isSupervised } from '../runtime/role-supervisor';
import { warnIfPrivateTargetsAllowed } from '../runtime/webhook-target';
import { buildApp } from './app';
import { startupFailureLine } from '../runtime/startup-error';
import { assertSecretKeysConfigured } from '../runtime/secret-box';
import { temporalConnectionOptions } from '../runtime/temporal-connection';

export interface RunningApi {
  url: string;
  close: () => Promise<void>;
  /** /readyz answers 503 from now on, so a proxy's health check takes this process out; it keeps serving meanwhile. */
  drain: (ms: number) => Promise<void>;
}

/** Listens on HOST:PORT. Temporal is connected lazily, so the API starts (and /readyz says what is down) while it is down. */
export async function startApi(config: Config, dataSource: DataSource, temporalAddress: string): Promise<RunningApi> {
  warnIfPrivateTargetsAllowed(config.webhookAllowPrivateTargets);
  const connection = Connection.lazy(temporalConnectionOptions(config, temporalAddress));
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const app = await buildApp({ dataSource, temporal, config, logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    url: `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`,
    // Closing stops accepting connections, serves what arrives on open ones with `Connection: close`,
    // waits for requests under way and ends event streams with a retry hint (never a 503 for a request
    // that reached the process: return503OnClosing is off in app.ts).
    close: async () => {
      await app.close();
      await connection.close();
    },
    drain: async (ms) => {
      app.draining = true;
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  assertSecretKeysConfigured(config);
  // Under `npm start` the API processes share one port through the supervisor, which checked it.
  if (!cluster.isWorker) await assertPortFree(config.host, config.port, 'PORT');
  const ds = await openDatabase(databaseUrlOf(config));
  const api = await startApi(config, ds, temporalAddressOf(config));
  if (!isSupervised()) console.log(`[sv] API listening on ${api.url} (OpenAPI ${api.url}/openapi.json, docs ${api.url}/docs)`);
  announceReady();
  // Steps run last to first: drain (SV_API_DRAIN_MS), close, then the database.
  onShutdown([() => ds.destroy(), api.close, () => api.drain(config.apiDrainMs)], (line) => console.log(`[sv] ${line}`));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`[sv] API: ${startupFailureLine(err)}`);
    process.exit(1);
  });
}
