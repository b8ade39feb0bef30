/**
 * Signal intake benchmark (not a test), with every role running as `npm start` runs them: the API
 * (`api/server.ts`) and the worker with its relays (`worker/main.ts`) each in a Node process of its
 * own on their default settings (pool of 10 connections), beside Temporal and PostgreSQL. The baseline
 * is a bare Fastify app in a process of its own (`bench/bare-insert-server.ts`) whose route does one
 * INSERT ... jsonb into the same PostgreSQL, once without a credential and once behind the same
 * service-key check and rate limit as intake, so that the second ratio shows what intake itself costs.
 * This process only generates the load: BENCH_CONCURRENCY connections for BENCH_ROUND_MS, in
 * alternating rounds, and prints requests/s, p50 and p99 of each and the ratios. Intake runs twice per
 * round: all load on ONE workspace's key (the case: every intake counts against the same
 * workspace's day and month) and the load spread over BENCH_KEYS workspaces.
 * `BENCH_ROLE_NODE_ARGS` passes Node flags to the roles (`--cpu-prof --cpu-prof-dir=/tmp/prof`).
 *
 *   npm run bench:signals                       # embedded PostgreSQL in a temporary directory
 *   DATABASE_URL=postgres://... npm run bench:signals   # a scratch database on that server
 *   BENCH_ROUNDS=3 BENCH_ROUND_MS=5000 BENCH_CONCURRENCY=50 BENCH_KEYS=64 npm run bench:signals
 */
import { randomBytes } from 'node:crypto';
import { createServiceKey } from '../db/platform/service-keys';
import { createOrganization, createProduct } from '../db/platform/tenancy';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../db/data-source';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { Cleanup, freePort, startScratchDatabase, startScratchTemporal } from '../test/support/servers';
import { startRole } from './roles';
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
  return { requests: count, errors: rounds.reduce((n, r) => n + r.errors, 0), rps: (count * 1000) / ms, p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99) };
}

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  const cleanup: Cleanup = [];
  try {
    await measure(cleanup);
  } finally {
    for (const step of cleanup.reverse()) await step();
  }
}

async function measure(cleanup: Cleanup): Promise<void> {
  const [url, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
  // Migrated here, once, before the roles start.
  const ds = await openDatabase(url, 4);
  cleanup.push(() => ds.destroy());
  await ds.query(`CREATE TABLE ${BARE_TABLE} (id text PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT now())`);
  // Default settings, but for limits above what one key sends here.
  const roleEnv = {
    DATABASE_URL: url, TEMPORAL_ADDRESS: temporal.address, SV_TASK_QUEUE: `bench-signals-${randomBytes(4).toString('hex')}`,
    RATE_LIMIT_PER_MINUTE: '1000000', SV_SIGNAL_DAILY_CEILING: '1000000000', HOST: '127.0.0.1',
  };
  const [apiPort, barePort] = [await freePort(), await freePort()];
  await Promise.all([
    startRole(cleanup, 'api', 'api/server.ts', { ...roleEnv, PORT: String(apiPort) }, /API listening on/),
    startRole(cleanup, 'worker', 'worker/main.ts', roleEnv, /worker polling task queue/),
    startRole(cleanup, 'bare', 'bench/bare-insert-server.ts', { ...roleEnv, PORT: String(barePort), BENCH_TABLE: BARE_TABLE }, /bare listening on/),
  ]);
  const base = `http://127.0.0.1:${apiPort}`;
  const bareBase = `http://127.0.0.1:${barePort}`;
  const config = loadConfig({ ...process.env, ...roleEnv });

  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const org = await createOrganization(ds, { name: `Bench ${i}`, sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench product' });
    const issued = await createServiceKey(ds, { organizationId: org.id, productId: product.id, environment: config.environment,
      scopes: ['service:signals:write'] });
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
  const bare = (i: number) => fetch(`${bareBase}/bench/bare-insert`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body, n: i }),
  });
  const bareKeyed = (i: number) => fetch(`${bareBase}/api/v1/bench/bare-insert`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[i % keys.length]}` },
    body: JSON.stringify({ body, n: i }),
  });

  let intakeOffset = 0;
  const intakeRounds: Round[] = [];
  const spreadRounds: Round[] = [];
  const bareRounds: Round[] = [];
  const keyedRounds: Round[] = [];
  // Warm-up of every route: connections, JIT, buffers, prepared statements.
  for (const warm of [bare, bareKeyed, (i: number) => intakeOn(false)(1_000_000_000 + i), (i: number) => intakeOn(true)(2_000_000_000 + i)]) await round(warm);
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
  console.log(`concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds of ${ROUND_MS} ms each; API, worker (relays) and bare app each a process of its own, Temporal running`);
  console.log('route                   requests  errors   req/s    p50 ms   p99 ms');
  for (const [name, x] of [['bare one-row INSERT', b], ['bare INSERT + key auth', k], ['signals, one workspace', s],
    [`signals, ${KEYS} workspaces`, sp]] as const) {
    console.log(`${name.padEnd(22)} ${String(x.requests).padStart(9)} ${String(x.errors).padStart(7)} ${x.rps.toFixed(0).padStart(7)} ${fmt(x.p50).padStart(9)} ${fmt(x.p99).padStart(8)}`);
  }
  const perRound = (rounds: Round[]) => rounds.map((r) => {
    const sorted = [...r.latencies].sort((x, y) => x - y);
    return `${((r.count * 1000) / r.ms).toFixed(0)}/s p99 ${quantile(sorted, 0.99).toFixed(0)}`;
  }).join(', ');
  console.log(`rounds: bare ${perRound(bareRounds)}; one workspace ${perRound(intakeRounds)}; ${KEYS} workspaces ${perRound(spreadRounds)}`);
  for (const [name, x] of [['bare', b], ['bare + key auth', k]] as const) {
    console.log(`one-workspace intake vs ${name}: rate ${(100 * s.rps / x.rps).toFixed(1)}% (aim >= 40%), p99 ${fmt(s.p99 / x.p99)}x (aim <= 3x), p50 ${fmt(s.p50 / x.p50)}x`);
  }

  console.log(`spread intake vs bare: rate ${(100 * sp.rps / b.rps).toFixed(1)}%, p99 ${fmt(sp.p99 / b.p99)}x`);
}

main().catch((err) => {
  console.error(`bench:signals failed: ${(err as Error).message}`);
  process.exit(1);
});
