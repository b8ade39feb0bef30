import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../runtime/config';
import { startEmbeddedPostgres } from '../runtime/embedded-postgres';
import { assertPortFree } from '../runtime/ports';
import { onShutdown } from '../runtime/shutdown';
import { StartupError, startupFailureLine } from '../runtime/startup-error';
import { resolveTemporalCli } from '../runtime/temporal-cli';
import { assertSecretKeysConfigured } from '../runtime/secret-box';
import { superviseRoles } from '../runtime/role-supervisor';

const log = (line: string) => console.log(`[sv] ${line}`);

/**
 * The whole service on one machine: embedded PostgreSQL and the Temporal dev server (unless
 * DATABASE_URL / TEMPORAL_ADDRESS name real ones), migrations, then the API in one process a core and a
 * worker process, supervised (a role that dies is restarted; Ctrl-C stops them all, then the services).
 */
async function main(steps: Array<() => Promise<unknown>>): Promise<void> {
  const config = loadConfig();
  assertSecretKeysConfigured(config);
  await assertPortFree(config.host, config.port, 'PORT');
  if (!config.databaseUrl) await assertPortFree('127.0.0.1', config.embeddedPgPort, 'SV_EMBEDDED_PG_PORT');
  if (!config.temporalAddress) {
    await assertPortFree('127.0.0.1', config.temporalDevPort, 'TEMPORAL_DEV_PORT');
    await assertPortFree('127.0.0.1', config.temporalDevUiPort, 'TEMPORAL_DEV_UI_PORT');
  }
  try {
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.accessSync(config.dataDir, fs.constants.W_OK);
  } catch (err) {
    throw new StartupError(`cannot write the data folder ${config.dataDir} (${(err as NodeJS.ErrnoException).code}): set SV_DATA_DIR to a folder you can write`);
  }

  const executable = config.temporalAddress ? undefined : resolveTemporalCli(config, log);

  // The service's modules load only after the checks above, so a start that cannot work says so at once.
  const [{ EMBEDDED_DATABASE }, { openDatabase }, { startTemporalDevServer }, { installTemporalLogger }] =
    await Promise.all([
      import('../runtime/services'), import('../db/data-source'), import('../runtime/temporal-dev-server'), import('../runtime/temporal-logging'),
    ]);
  installTemporalLogger();

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    log(`starting embedded PostgreSQL on 127.0.0.1:${config.embeddedPgPort}`);
    const pg = await startEmbeddedPostgres({
      dir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort, persistent: true, fixedDir: config.dataDirFromEnv, log,
    });
    steps.push(pg.stop);
    log(`PostgreSQL data in ${pg.dataDir}`);
    await pg.createDatabase(EMBEDDED_DATABASE);
    databaseUrl = pg.url(EMBEDDED_DATABASE);
  }

  let temporalAddress = config.temporalAddress;
  let temporalUi = '(external Temporal: see its own UI)';
  if (!temporalAddress) {
    log(`starting the Temporal dev server on 127.0.0.1:${config.temporalDevPort} (${executable ?? 'SDK download'})`);
    const env = await startTemporalDevServer({
      executable,
      namespace: config.temporalNamespace,
      port: config.temporalDevPort,
      uiPort: config.temporalDevUiPort,
      dbFilename: path.join(config.dataDir, 'temporal.db'),
    }).catch((err: Error) => {
      throw new StartupError(`the Temporal dev server did not start (${err.message.split('\n')[0]}): run npm run temporal:install or set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to a running Temporal`);
    });
    steps.push(() => env.teardown());
    temporalAddress = `127.0.0.1:${config.temporalDevPort}`;
    temporalUi = `http://127.0.0.1:${config.temporalDevUiPort}`;
  }

  // Migrations (and the key ring under SV_DATA_DIR) once, before any role starts.
  const ds = await openDatabase(databaseUrl, 2);
  await ds.destroy();
  log('migrations applied');

  // The roles find the embedded services at their default addresses, and the embedded key ring in SV_DATA_DIR.
  const roles = superviseRoles({
    apiScript: path.join(__dirname, '..', 'api', `server${path.extname(__filename)}`),
    workerScript: path.join(__dirname, '..', 'worker', `main${path.extname(__filename)}`),
    apiProcesses: config.apiProcesses,
    // No proxy health-checks these APIs: Ctrl-C need not wait out a drain.
    env: { ...process.env, SV_API_DRAIN_MS: process.env.SV_API_DRAIN_MS ?? '0' },
    log,
  });
  steps.push(roles.stop);
  log(`starting ${config.apiProcesses} API process${config.apiProcesses === 1 ? '' : 'es'} and a worker`);
  await roles.ready;

  const api = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`;
  log(`API          ${api} (${config.apiProcesses} processes)`);
  log(`OpenAPI      ${api}/openapi.json`);
  log(`API docs     ${api}/docs`);
  log(`Temporal UI  ${temporalUi}`);
  log('ready; Ctrl-C stops everything');
}

const steps: Array<() => Promise<unknown>> = [];
const shutdown = onShutdown(steps, log);
main(steps).catch((err) => {
  console.error(`[sv] ${startupFailureLine(err)}`);
  return shutdown(null, 1);
});
