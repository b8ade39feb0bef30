import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { buildApp } from '../../api/app';
import { buildWeb } from '../../web/build';
import type { AppDeps } from '../../api/app-deps';
import { Config, loadConfig } from '../../runtime/config';
import { openDatabase } from '../../db/data-source';
import { KeyRing, configureSecretKeys, parseKeyRing } from '../../runtime/secret-box';
import { installTemporalLogger } from '../../runtime/temporal-logging';
import { startWorker } from '../../worker/main';
import { startScratchDatabase, startScratchTemporal } from './servers';
import { FakeAi } from './fake-ai';
import { OpenApiDrift, isWholeSuite } from './openapi-drift';
import { SmtpSink } from './smtp-sink';
import { DnsSink } from './dns-sink';
import { FakeStreamHost } from './stream-host';

export interface TestContext {
  config: Config;
  databaseUrl: string;
  dataSource: DataSource;
  temporal: Client;
  /** The suite's Temporal frontend, for roles a test runs as processes of their own. */
  temporalAddress: string;
  nativeConnection: NativeConnection;
  workflowBundle: { code: string };
  app: FastifyInstance;
  /** The AI provider the worker talks to: a local fake the tests steer. */
  fakeAi: FakeAi;
  /** The mail server the worker and API send to (SMTP_URL): a local sink the tests read. */
  smtpSink: SmtpSink;
  /** The DNS server custom-domain checks ask (PROOF_DOMAIN_DNS_SERVERS): a local one the tests fill. */
  dnsSink: DnsSink;
  /** The video host's API the worker asks for copies (PROOF_STREAM_API_URL): a local stand-in. */
  streamHost: FakeStreamHost;
  /** The suite's key-encryption keys (tests that rotate put these back). */
  secretKeys: KeyRing;
  /** A fresh app on the same database and Temporal, for tests that need other settings or routes. */
  /** `checkAnswers: false` only for an app whose test breaks it on purpose (a simulated crash answers 500). */
  buildApp: (overrides?: Partial<Config>, extend?: (app: FastifyInstance) => void, options?: { checkAnswers?: boolean }) => Promise<FastifyInstance>;
}

export const ctx = {} as TestContext;
const teardown: Array<() => Promise<unknown>> = [];
/** Every app the suite builds holds its answers to the OpenAPI document. */
export const drift = new OpenApiDrift();

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    // The first run on a fresh machine may build the Temporal CLI with Go.
    this.timeout(1_200_000);
    installTemporalLogger();
    // The suite's own key-encryption key, never a file in the working tree; the CLI's child processes inherit it.
    process.env.SV_SECRET_KEYS = `test:${randomBytes(32).toString('base64')}`;
    const secretKeys = parseKeyRing(process.env.SV_SECRET_KEYS);
    configureSecretKeys(secretKeys);
    const [databaseUrl, temporal, workflowBundle] = await Promise.all([
      startScratchDatabase(teardown),
      startScratchTemporal(teardown),
      bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') }),
      // The pages as the tests' checkout has them now (npm install built them once; sources may have changed since).
      buildWeb(),
    ]);
    const dataSource = await openDatabase(databaseUrl);
    teardown.push(() => dataSource.destroy());
    const fakeAi = new FakeAi();
    const aiBaseUrl = await fakeAi.start();
    teardown.push(() => fakeAi.stop());
    const smtpSink = new SmtpSink();
    const smtpUrl = await smtpSink.start();
    teardown.push(() => smtpSink.stop());
    const dnsSink = new DnsSink();
    const dnsServer = await dnsSink.start();
    teardown.push(() => dnsSink.stop());
    const streamHost = new FakeStreamHost();
    const proofStreamApiUrl = await streamHost.start();
    teardown.push(() => streamHost.stop());
    const config = {
      ...loadConfig({}),
      databaseUrl,
      taskQueue: `test-${randomBytes(4).toString('hex')}`,
      rateLimitPerMinute: 100_000,
      publicRateLimitPerMinute: 100_000,
      // Short, so that a test sees an allowed-origin change quickly (and waits for it, never sleeps).
      customerOriginsCacheMs: 200,
      // Receivers in tests listen on 127.0.0.1, and retries must fit in a test.
      webhookAllowPrivateTargets: true,
      webhookTimeoutMs: 1_000,
      webhookRetryInitialMs: 100,
      webhookRetryMaxMs: 400,
      relayIdleMs: 50,
      aiBaseUrl,
      aiApiKey: 'test-key',
      aiModel: 'fake-model',
      // Captions go to the same fake, at its audio transcription endpoint.
      transcribeBaseUrl: aiBaseUrl,
      transcribeApiKey: 'test-key',
      transcribeModel: 'fake-whisper',
      aiMaxAttempts: 2,
      aiRetryInitialMs: 50,
      signalRelayIdleMs: 100,
      // The media store's folder: a scratch one per run, never the developer's .data.
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sv-test-data-')),
      smtpUrl,
      domainDnsServers: [dnsServer],
      domainCheckIntervalMs: 60_000,
      proofStreamApiUrl,
      proofStreamApiToken: 'stream-api-token',
      proofStreamSourceBaseUrl: 'https://proof.example.test',
    };
    teardown.push(async () => fs.rmSync(config.dataDir, { recursive: true, force: true }));
    const worker = await startWorker(config, dataSource, { ...temporal, workflowBundle });
    teardown.push(worker.stop);
    const deps: AppDeps = { dataSource, temporal: temporal.client, config };
    const make = async (overrides: Partial<Config> = {}, extend?: (app: FastifyInstance) => void, options = { checkAnswers: true }) => {
      const app = await buildApp({ ...deps, config: { ...config, ...overrides } });
      if (options.checkAnswers) drift.attach(app);
      extend?.(app);
      await app.ready();
      teardown.push(() => app.close());
      return app;
    };
    Object.assign(ctx, {
      config, databaseUrl, dataSource, temporal: temporal.client, temporalAddress: temporal.address, nativeConnection: temporal.nativeConnection,
      workflowBundle, fakeAi, smtpSink, dnsSink, streamHost, secretKeys, app: await make(), buildApp: make,
    });
  },

  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    const unanswered = ctx.app && this.test?.parent && isWholeSuite(this.test.parent) ? drift.unexercised(ctx.app.openapiDocument()) : [];
    for (const step of teardown.reverse()) {
      await step().catch((err) => console.error('teardown:', (err as Error).message));
    }
    const problems = [
      ...drift.failures,
      ...unanswered.map((id) => `${id}: no test got a documented answer from this operation`),
    ];
    if (problems.length > 0) throw new Error(`the answers drift from the OpenAPI document:\n  ${problems.join('\n  ')}`);
  },
};
