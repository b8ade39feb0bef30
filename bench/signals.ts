/**
 * Signal intake benchmark (not a test), with the service run as a newcomer runs it: `npm start` (the API in one
 * process a core sharing the port, a worker process with its relays) on an external PostgreSQL, beside Temporal.
 * The baseline is a bare Fastify app in a process of its own (`bench/bare-insert-server.ts`) whose route does one
 * INSERT ... jsonb into the same PostgreSQL, once without a credential and once behind the same service-key check
 * and rate limit as intake, so that the second ratio shows what intake itself costs. The load comes from
 * autocannon in a process of its own (bench/load-generator.ts): BENCH_CONCURRENCY connections for BENCH_ROUND_MS,
 * in alternating rounds; this prints requests/s, p50 and p99 of each and the ratios. Intake runs twice per round:
 * all load on ONE workspace's key (every intake counts against the same workspace's day and month) and the load
 * spread over BENCH_KEYS workspaces.
 *
 *   npm run bench:signals                       # a scratch database on postgres://postgres@127.0.0.1:5432
 *   DATABASE_URL=postgres://... npm run bench:signals   # a scratch database on that server
 *   BENCH_ROUNDS=3 BENCH_ROUND_MS=5000 BENCH_CONCURRENCY=50 BENCH_KEYS=64 npm run bench:signals
 */
import { randomBytes } from 'node:crypto';
import { createServiceKey } from '../db/platform/service-keys';
import { createOrganization, createProduct } from '../db/platform/tenancy';
import { loadConfig } from '../runtime/config';
import { buildApp } from '../api/app';
import { openDatabase, statementsSent } from '../db/data-source';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { Cleanup, freePort, startScratchDatabase, startScratchTemporal } from '../test/support/servers';
import { cpuDuring } from './cpu-breakdown';
import { LoadResult, loadRound } from './load';
import { startRole } from './roles';
import { startService } from './service';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('BENCH_ROUNDS', 3);
const ROUND_MS = env('BENCH_ROUND_MS', 5_000);
const CONCURRENCY = env('BENCH_CONCURRENCY', 50);
const KEYS = env('BENCH_KEYS', 64);
const BARE_TABLE = `bench_rows_${randomBytes(4).toString('hex')}`;

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
  const barePort = await freePort();
  const [service, bareRole] = await Promise.all([
    startService(cleanup, roleEnv),
    startRole(cleanup, 'bare', 'bench/bare-insert-server.ts', { ...roleEnv, PORT: String(barePort), BENCH_TABLE: BARE_TABLE }, /bare listening on/),
  ]);
  const base = service.base;
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
  const text = 'Exports take minutes for big projects; please make them faster. '.repeat(6);
  const post = { connections: CONCURRENCY, seconds: ROUND_MS / 1000, method: 'POST' as const, headers: { 'content-type': 'application/json' } };
  const intake = (spread: boolean) => () => loadRound({
    ...post, url: `${base}/api/v1/signals`, expect: 201,
    authorizations: (spread ? keys : keys.slice(0, 1)).map((k) => `Bearer ${k}`),
    body: `{"endUserId":"user-{u}","title":"Export is slow","body":"${text}","idempotencyKey":"bench-${run}-{n}","kind":"bug"}`,
  });
  const bare = () => loadRound({ ...post, url: `${bareBase}/bench/bare-insert`, expect: 201, body: `{"body":"${text}","n":{n}}` });
  const bareKeyed = () => loadRound({
    ...post, url: `${bareBase}/api/v1/bench/bare-insert`, expect: 201, authorizations: keys.map((k) => `Bearer ${k}`), body: `{"body":"${text}","n":{n}}`,
  });
  const modes = { bare, keyed: bareKeyed, one: intake(false), spread: intake(true) };
  const rounds: Record<keyof typeof modes, LoadResult[]> = { bare: [], keyed: [], one: [], spread: [] };
  const roles = { api: service.apiPids, worker: service.workerPids, bare: () => [bareRole.pid] };
  const cpu: Record<keyof typeof modes, Array<Record<string, number>>> = { bare: [], keyed: [], one: [], spread: [] };
  // Warm-up of every route: connections, JIT, buffers, prepared statements.
  for (const mode of Object.values(modes)) await mode();
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, mode] of Object.entries(modes) as Array<[keyof typeof modes, () => Promise<LoadResult>]>) {
      const { result, seconds } = await cpuDuring(roles, mode);
      if (result.unexpected > 0) throw new Error(`${name}: ${result.unexpected} answers with another status or errors`);
      rounds[name].push(result);
      // CPU ms a request, by role.
      const requests = result.perSecond * ROUND_MS / 1000;
      cpu[name].push(Object.fromEntries(Object.entries(seconds).map(([role, sec]) => [role, 1000 * sec / requests])));
    }
  }
  const summary = (list: LoadResult[]) => ({
    rps: list.reduce((sum, x) => sum + x.perSecond, 0) / list.length,
    p50: list.reduce((sum, x) => sum + x.p50, 0) / list.length,
    p99: Math.max(...list.map((x) => x.p99)),
  });
  const b = summary(rounds.bare);
  const k = summary(rounds.keyed);
  const s = summary(rounds.one);
  const sp = summary(rounds.spread);
  const fmt = (x: number) => x.toFixed(2);
  console.log(`${CONCURRENCY} connections (autocannon), ${ROUNDS} alternating rounds of ${ROUND_MS} ms each; npm start `
    + `(${service.apiPids().length} API processes and a worker), the bare app a process of its own, Temporal running`);
  console.log('route                     req/s    p50 ms   p99 ms (worst round)');
  for (const [name, x] of [['bare one-row INSERT', b], ['bare INSERT + key auth', k], ['signals, one workspace', s], [`signals, ${KEYS} workspaces`, sp]] as const) {
    console.log(`${name.padEnd(24)} ${x.rps.toFixed(0).padStart(7)} ${fmt(x.p50).padStart(9)} ${fmt(x.p99).padStart(8)}`);
  }
  const perRound = (list: LoadResult[]) => list.map((r) => `${r.perSecond.toFixed(0)}/s p99 ${r.p99}`).join(', ');
  console.log(`rounds: bare ${perRound(rounds.bare)}; one workspace ${perRound(rounds.one)}; ${KEYS} workspaces ${perRound(rounds.spread)}`);
  for (const [name, x] of [['bare', b], ['bare + key auth', k]] as const) {
    console.log(`one-workspace intake vs ${name}: rate ${(100 * s.rps / x.rps).toFixed(1)}% (aim >= 40%), p99 ${fmt(s.p99 / x.p99)}x (aim <= 3x), p50 ${fmt(s.p50 / x.p50)}x`);
  }

  console.log(`spread intake vs bare: rate ${(100 * sp.rps / b.rps).toFixed(1)}%, p99 ${fmt(sp.p99 / b.p99)}x`);
  console.log('CPU ms a request by role, the mean of the rounds (rest: the load generator, this process, the system):');
  for (const [name, list] of Object.entries(cpu)) {
    const mean = (role: string) => list.reduce((sum, x) => sum + x[role], 0) / list.length;
    const total = Object.keys(list[0]).reduce((sum, role) => sum + mean(role), 0);
    console.log(`  ${name.padEnd(7)} ${Object.keys(list[0]).map((role) => `${role} ${mean(role).toFixed(3)}`).join(', ')}; total ${total.toFixed(3)}`);
  }

  // Statements an intake sends, counted on the same code in this process (one workspace's key, 50 at once).
  const counted = await buildApp({ dataSource: ds, temporal: temporal.client, config });
  cleanup.push(() => counted.close());
  const inject = (n: number) => counted.inject({
    method: 'POST', url: '/api/v1/signals', headers: { authorization: `Bearer ${keys[0]}` },
    payload: { endUserId: `user-${n % 500}`, title: 'Export is slow', body: text, idempotencyKey: `count-${run}-${n}`, kind: 'bug' },
  });
  await inject(-1);
  const before = statementsSent();
  for (let i = 0; i < 4; i++) await Promise.all(Array.from({ length: 50 }, (_, k) => inject(i * 50 + k)));
  console.log(`SQL statements an intake sends in the API: ${((statementsSent() - before) / 200).toFixed(2)} (200 intakes, 50 at once)`);
}

main().catch((err) => {
  console.error(`bench:signals failed: ${(err as Error).message}`);
  process.exit(1);
});
