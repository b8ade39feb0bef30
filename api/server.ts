import { Client, Connection } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { Config, loadConfig } from '../runtime/config';
import { openDatabase } from '../db/data-source';
import { databaseUrlOf, temporalAddressOf } from '../runtime/services';
import { assertPortFree } from '../runtime/ports';
import { onShutdown } from '../runtime/shutdown';
import { warnIfPrivateTargetsAllowed } from '../runtime/webhook-target';
import { buildApp } from './app';
import { startupFailureLine } from '../runtime/startup-error';
import { assertSecretKeysConfigured } from '../runtime/secret-box';

export interface RunningApi {
  url: string;
  close: () => Promise<void>;
}

/** Listens on HOST:PORT. Temporal is connected lazily, so the API starts (and /healthz says so) while it is down. */
export async function startApi(config: Config, dataSource: DataSource, temporalAddress: string): Promise<RunningApi> {
  warnIfPrivateTargetsAllowed(config.webhookAllowPrivateTargets);
  const connection = Connection.lazy({ address: temporalAddress });
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const app = await buildApp({ dataSource, temporal, config, logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    url: `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`,
    close: async () => {
      await app.close();
      await connection.close();
    },
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  assertSecretKeysConfigured(config);
  await assertPortFree(config.host, config.port, 'PORT');
  const ds = await openDatabase(databaseUrlOf(config));
  const api = await startApi(config, ds, temporalAddressOf(config));
  console.log(`[sv] API listening on ${api.url} (OpenAPI ${api.url}/openapi.json, docs ${api.url}/docs)`);
  onShutdown([() => ds.destroy(), api.close], (line) => console.log(`[sv] ${line}`));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`[sv] API: ${startupFailureLine(err)}`);
    process.exit(1);
  });
}
