import fs from 'node:fs';
import path from 'node:path';
import { startApi } from '../api/server';
import { connectWorker, startWorker } from '../worker/main';
import { loadConfig } from '../runtime/config';
import { startEmbeddedPostgres } from '../runtime/embedded-postgres';
import { EMBEDDED_DATABASE, openDatabase } from '../runtime/services';
import { onShutdown } from '../runtime/shutdown';
import { resolveTemporalCli } from '../runtime/temporal-cli';
import { startTemporalDevServer } from '../runtime/temporal-dev-server';
import { installTemporalLogger } from '../runtime/temporal-logging';

const log = (line: string) => console.log(`[sv] ${line}`);

/**
 * The whole service on one machine: embedded PostgreSQL and the Temporal dev server (unless
 * DATABASE_URL / TEMPORAL_ADDRESS name real ones), migrations, the API and a worker.
 */
async function main(steps: Array<() => Promise<unknown>>): Promise<void> {
  const config = loadConfig();
  installTemporalLogger();
  fs.mkdirSync(config.dataDir, { recursive: true });

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const dir = path.join(config.dataDir, 'pg');
    log(`starting embedded PostgreSQL on 127.0.0.1:${config.embeddedPgPort} (data in ${dir})`);
    const pg = await startEmbeddedPostgres({ dir, port: config.embeddedPgPort, persistent: true });
    steps.push(pg.stop);
    await pg.createDatabase(EMBEDDED_DATABASE);
    databaseUrl = pg.url(EMBEDDED_DATABASE);
  }

  let temporalAddress = config.temporalAddress;
  let temporalUi = '(external Temporal: see its own UI)';
  if (!temporalAddress) {
    const executable = resolveTemporalCli(config, log);
    log(`starting the Temporal dev server on 127.0.0.1:${config.temporalDevPort} (${executable ?? 'SDK download'})`);
    const env = await startTemporalDevServer({
      executable,
      namespace: config.temporalNamespace,
      port: config.temporalDevPort,
      uiPort: config.temporalDevUiPort,
      dbFilename: path.join(config.dataDir, 'temporal.db'),
    });
    steps.push(() => env.teardown());
    temporalAddress = `127.0.0.1:${config.temporalDevPort}`;
    temporalUi = `http://127.0.0.1:${config.temporalDevUiPort}`;
  }

  const ds = await openDatabase(databaseUrl);
  steps.push(() => ds.destroy());
  log('migrations applied');
  const conn = await connectWorker(config, temporalAddress);
  steps.push(conn.close);
  const worker = await startWorker(config, ds, conn);
  steps.push(worker.stop);
  const api = await startApi(config, ds, temporalAddress);
  steps.push(api.close);

  log(`API          ${api.url}`);
  log(`OpenAPI      ${api.url}/openapi.json`);
  log(`API docs     ${api.url}/docs`);
  log(`Temporal UI  ${temporalUi}`);
  log('ready; Ctrl-C stops everything');
}

const steps: Array<() => Promise<unknown>> = [];
const shutdown = onShutdown(steps, log);
main(steps).catch((err) => shutdown(`failed to start: ${(err as Error).message}`, 1));
