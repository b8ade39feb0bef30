import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FastifyInstance } from 'fastify';
import { Client as PgClient } from 'pg';
import { DataSource } from 'typeorm';
import { AppDeps, buildApp } from '../../api/app';
import { Config, loadConfig } from '../../runtime/config';
import { startEmbeddedPostgres } from '../../runtime/embedded-postgres';
import { openDatabase } from '../../runtime/services';
import { resolveTemporalCli } from '../../runtime/temporal-cli';
import { startTemporalDevServer } from '../../runtime/temporal-dev-server';
import { installTemporalLogger } from '../../runtime/temporal-logging';
import { startWorker } from '../../worker/main';
import { FakeAi } from './fake-ai';

export interface TestContext {
  config: Config;
  databaseUrl: string;
  dataSource: DataSource;
  temporal: Client;
  app: FastifyInstance;
  /** The AI provider the worker talks to: a local fake the tests steer. */
  fakeAi: FakeAi;
  /** A fresh app on the same database and Temporal, for tests that need other settings or routes. */
  buildApp: (overrides?: Partial<Config>, extend?: (app: FastifyInstance) => void) => Promise<FastifyInstance>;
}

export const ctx = {} as TestContext;
const teardown: Array<() => Promise<unknown>> = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A database of its own for this run: on DATABASE_URL's server when set, else an embedded PostgreSQL. */
async function testDatabase(): Promise<string> {
  const name = `sv_test_${randomBytes(4).toString('hex')}`;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const admin = new PgClient({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    teardown.push(async () => {
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
  const pg = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false });
  teardown.push(async () => {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await pg.createDatabase(name);
  return pg.url(name);
}

async function testTemporal(): Promise<{ client: Client; nativeConnection: NativeConnection }> {
  const address = process.env.TEMPORAL_ADDRESS;
  if (address) {
    const connection = await Connection.connect({ address });
    const nativeConnection = await NativeConnection.connect({ address });
    teardown.push(() => connection.close(), () => nativeConnection.close());
    return { client: new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' }), nativeConnection };
  }
  const env: TestWorkflowEnvironment = await startTemporalDevServer({
    executable: resolveTemporalCli({ temporalCli: process.env.TEMPORAL_CLI }, (line) => console.log(line)),
    namespace: 'default',
  });
  teardown.push(() => env.teardown());
  return { client: env.client, nativeConnection: env.nativeConnection };
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    // The first run on a fresh machine may build the Temporal CLI with Go.
    this.timeout(1_200_000);
    installTemporalLogger();
    const [databaseUrl, temporal, workflowBundle] = await Promise.all([
      testDatabase(),
      testTemporal(),
      bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') }),
    ]);
    const dataSource = await openDatabase(databaseUrl);
    teardown.push(() => dataSource.destroy());
    const fakeAi = new FakeAi();
    const aiBaseUrl = await fakeAi.start();
    teardown.push(() => fakeAi.stop());
    const config = {
      ...loadConfig({}),
      databaseUrl,
      taskQueue: `test-${randomBytes(4).toString('hex')}`,
      rateLimitPerMinute: 100_000,
      aiBaseUrl,
      aiApiKey: 'test-key',
      aiModel: 'fake-model',
      aiMaxAttempts: 2,
      aiRetryInitialMs: 50,
      signalRelayIdleMs: 100,
    };
    const worker = await startWorker(config, dataSource, { ...temporal, workflowBundle });
    teardown.push(worker.stop);
    const deps: AppDeps = { dataSource, temporal: temporal.client, config };
    const make = async (overrides: Partial<Config> = {}, extend?: (app: FastifyInstance) => void) => {
      const app = await buildApp({ ...deps, config: { ...config, ...overrides } });
      extend?.(app);
      await app.ready();
      teardown.push(() => app.close());
      return app;
    };
    Object.assign(ctx, { config, databaseUrl, dataSource, temporal: temporal.client, fakeAi, app: await make(), buildApp: make });
  },

  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    for (const step of teardown.reverse()) {
      await step().catch((err) => console.error('teardown:', (err as Error).message));
    }
  },
};
