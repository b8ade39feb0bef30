/**
 * Signal intake benchmark (not a test): drives POST /api/v1/signals over real HTTP against an app
 * started in this process, and a bare one-row INSERT route on the same database, in alternating
 * rounds of the same run, then prints requests/s, p50 and p99 of each and the ratios. The bare route
 * runs twice: without a credential, and behind the same service-key check and rate limit as intake,
 * so that the second ratio shows what intake itself costs. Every role runs, as with `npm start`: the
 * API, a worker with its relays, and Temporal. Intake runs twice per round: all load on ONE
 * workspace's key (the case: every intake counts against the same workspace's day and month)
 * and the load spread over BENCH_KEYS workspaces.
 *
 *   npm run bench:signals                       # embedded PostgreSQL in a temporary directory
 *   DATABASE_URL=postgres://... npm run bench:signals   # a scratch database on that server
 *   BENCH_ROUNDS=3 BENCH_ROUND_MS=5000 BENCH_CONCURRENCY=50 BENCH_KEYS=64 npm run bench:signals
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { FastifyReply, FastifyRequest } from 'fastify';
import { buildApp } from '../api/app';
import { newId } from '../db/rules/ids';
import { createServiceKey } from '../db/platform/service-keys';
import { createOrganization, createProduct } from '../db/platform/tenancy';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../runtime/services';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { startWorker } from '../worker/main';
import { Cleanup, startScratchDatabase, startScratchTemporal } from '../test/support/servers';
import { quantile } from './stats';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('BENCH_ROUNDS', 3);
const ROUND_MS = env('BENCH_ROUND_MS', 5_000);
const CONCURRENCY = env('BENCH_CONCURRENCY', 50);
const KEYS = env('BENCH_KEYS', 64);
const BARE_TABLE = `bench_rows_${randomBytes(4).toString('hex')}`;

interface Round {
  count: number;
  errors: number;
  latencies: number[];
  ms: number;
}

/** Keeps CONCURRENCY requests in flight for ROUND_MS; `request(i)` makes the i-th one. */
async function round(request: (i: number) => Promise<Response>): Promise<Round> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + ROUND_MS;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await request(next++);
      await res.arrayBuffer();
      if (res.status >= 300) errors += 1;
      latencies.push(performance.now() - t0);
    }
  }));
  return { count: latencies.length, errors, latencies, ms: performance.now() - started };
}

function summary(rounds: Round[]) {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const count = rounds.reduce((n, r) => n + r.count, 0);
  const ms = rounds.reduce((n, r) => n + r.ms, 0);
  return { requests: count, errors: rounds.reduce((n, r) => n + r.errors, 0), rps: (count * 1000) / ms, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  const cleanup: Cleanup = [];
  const [url, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
  const ds = await openDatabase(url, CONCURRENCY);
  await ds.query(`CREATE TABLE ${BARE_TABLE} (id text PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT now())`);
  const config = { ...loadConfig(), databaseUrl: url, rateLimitPerMinute: 1_000_000_000, signalDailyCeiling: 1_000_000_000 };
  const workerDs = await openDatabase(url, 10);
  const worker = await startWorker({ ...config, taskQueue: `bench-signals-${randomBytes(4).toString('hex')}` }, workerDs, temporal);
  const app = await buildApp({ dataSource: ds, temporal: temporal.client, config });
  const bareInsert = async (request: FastifyRequest<{ Body: { body: string } }>, reply: FastifyReply) => {
    await ds.query(`INSERT INTO ${BARE_TABLE} (id, body) VALUES ($1, $2::jsonb)`, [newId('row'), JSON.stringify(request.body)]);
    return reply.code(201).send({ data: { ok: true } });
  };
  app.post('/bench/bare-insert', bareInsert);
  app.post('/api/v1/bench/bare-insert', { config: { auth: 'key', scope: 'service:signals:write' } }, bareInsert);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;

  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const org = await createOrganization(ds, { name: `Bench ${i}`, sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench product' });
    const issued = await createServiceKey(ds, { organizationId: org.id, productId: product.id, environment: config.environment, scopes: ['service:signals:write'] });
    keys.push(issued.secret);
  }
  const run = randomBytes(4).toString('hex');
  // With the title, ids and key, about 500 bytes of JSON per request.
  const body = 'Exports take minutes for big projects; please make them faster. '.repeat(6);
  const intakeOn = (spread: boolean) => (i: number) => fetch(`${base}/api/v1/signals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[spread ? i % keys.length : 0]}` },
    body: JSON.stringify({ endUserId: `user-${i % 500}`, title: 'Export is slow', body, idempotencyKey: `bench-${run}-${i}`, kind: 'bug' }),
  });
  const bare = (i: number) => fetch(`${base}/bench/bare-insert`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body, n: i }),
  });
  const bareKeyed = (i: number) => fetch(`${base}/api/v1/bench/bare-insert`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[i % keys.length]}` },
    body: JSON.stringify({ body, n: i }),
  });

  let intakeOffset = 0;
  const intakeRounds: Round[] = [];
  const spreadRounds: Round[] = [];
  const bareRounds: Round[] = [];
  const keyedRounds: Round[] = [];
  await round(bare); // warm-up: connections, JIT, buffers
  for (let r = 0; r < ROUNDS; r++) {
    bareRounds.push(await round(bare));
    keyedRounds.push(await round(bareKeyed));
    for (const [spread, rounds] of [[false, intakeRounds], [true, spreadRounds]] as const) {
      const offset = intakeOffset;
      const result = await round((i) => intakeOn(spread)(offset + i));
      intakeOffset += result.count + CONCURRENCY;
      rounds.push(result);
    }
  }
  const b = summary(bareRounds);
  const k = summary(keyedRounds);
  const s = summary(intakeRounds);
  const sp = summary(spreadRounds);
  const fmt = (x: number) => x.toFixed(2);
  console.log(`concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds of ${ROUND_MS} ms each; API, worker, relays and Temporal running`);
  console.log('route                   requests  errors   req/s    p50 ms   p99 ms');
  for (const [name, x] of [['bare one-row INSERT', b], ['bare INSERT + key auth', k], ['signals, one workspace', s], [`signals, ${KEYS} workspaces`, sp]] as const) {
    console.log(`${name.padEnd(22)} ${String(x.requests).padStart(9)} ${String(x.errors).padStart(7)} ${x.rps.toFixed(0).padStart(7)} ${fmt(x.p50).padStart(9)} ${fmt(x.p99).padStart(8)}`);
  }
  for (const [name, x] of [['bare', b], ['bare + key auth', k]] as const) {
    console.log(`one-workspace intake vs ${name}: rate ${(100 * s.rps / x.rps).toFixed(1)}% (aim >= 40%), p99 ${fmt(s.p99 / x.p99)}x (aim <= 3x), p50 ${fmt(s.p50 / x.p50)}x`);
  }

  console.log(`spread intake vs bare: rate ${(100 * sp.rps / b.rps).toFixed(1)}%, p99 ${fmt(sp.p99 / b.p99)}x`);

  await app.close();
  await worker.stop();
  await workerDs.destroy();
  await ds.destroy();
  for (const step of cleanup.reverse()) await step();
}

main().catch((err) => {
  console.error(`bench:signals failed: ${(err as Error).message}`);
  process.exit(1);
});
