import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Client as PgClient } from 'pg';
import { startEmbeddedPostgres } from '../../runtime/embedded-postgres';
import { resolveTemporalCli } from '../../runtime/temporal-cli';
import { startTemporalDevServer } from '../../runtime/temporal-dev-server';
import { freeLoopbackPort } from '../../runtime/ports';

// The real servers that tests and benchmarks run against; each start pushes its own cleanup.
export type Cleanup = Array<() => Promise<unknown>>;

/** A free loopback port (the runtime's own helper). */
export const freePort = freeLoopbackPort;

/** A database of its own: on DATABASE_URL's server when set (dropped afterwards), else an embedded PostgreSQL. */
export async function startScratchDatabase(cleanup: Cleanup, prefix = 'sv_test'): Promise<string> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const admin = new PgClient({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    cleanup.push(async () => {
      const drop = new PgClient({ connectionString: serverUrl });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    });
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-test-pg-'));
  const pg = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false, fixedDir: true });
  cleanup.push(async () => {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await pg.createDatabase(name);
  return pg.url(name);
}

/** TEMPORAL_ADDRESS when set, else a Temporal dev server of its own on a free port. */
export async function startScratchTemporal(cleanup: Cleanup): Promise<{ client: Client; nativeConnection: NativeConnection; address: string }> {
  const address = process.env.TEMPORAL_ADDRESS;
  if (address) {
    const connection = await Connection.connect({ address });
    const nativeConnection = await NativeConnection.connect({ address });
    cleanup.push(() => connection.close(), () => nativeConnection.close());
    return { client: new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' }), nativeConnection, address };
  }
  const env = await startTemporalDevServer({
    executable: resolveTemporalCli({ temporalCli: process.env.TEMPORAL_CLI }, (line) => console.log(line)),
    namespace: 'default',
  });
  cleanup.push(() => env.teardown());
  return { client: env.client, nativeConnection: env.nativeConnection, address: env.address };
}
