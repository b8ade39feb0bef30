import http from 'node:http';
import os from 'node:os';
import { createServiceKey } from '../db/platform/service-keys';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../db/data-source';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { createOrganization, createProduct } from '../db/platform/tenancy';
import { createEndpoint } from '../db/webhooks/webhook-endpoints';
import { enqueueEvents } from '../db/outbox';
import { Worker } from '@temporalio/worker';
import { quantile } from './stats';
import { Arrival } from './receiver';
import { startRole } from './roles';
import { cpuSeconds, startService } from './service';
import { Cleanup, freePort, startScratchDatabase, startScratchTemporal } from '../test/support/servers';

/**
 * Webhook delivery, with the service run as a newcomer runs it: `npm start` (the API in one process a core, a
 * worker process with its relays) on an external PostgreSQL, beside Temporal; the receiver (a third party) runs
 * in a process of its own too, reporting arrivals over IPC. This process holds only the load generator, so that
 * the offered load is what it says and no role shares another's event loop:
 *
 * - burst: fans N events out through the service (outbox → relay → batch workflow → signed HTTP) to
 *   BENCH_ENDPOINTS endpoints of a local receiver, beside as many plain HTTP POSTs made directly from this
 *   process to the same receiver, in
 *   alternating rounds. Prints deliveries/s and the time from event to first attempt (p50/p99) of both,
 *   and the ratios. Also measures the Temporal dev server's own ceiling on this machine: empty
 *   workflows started and completed per second.
 * - steady: POST /api/v1/signals at BENCH_RATE per second for BENCH_SECONDS with one endpoint
 *   subscribed to signal.created; prints the time from each intake's 201 (the event is committed) to
 *   the first attempt's arrival (p50/p99), and how many deliveries had not arrived 60 s after the last
 *   signal.
 *
 *   BENCH_MODE=burst|steady|both (default both) BENCH_EVENTS=1000 BENCH_ENDPOINTS=1 BENCH_ROUNDS=2 BENCH_RATE=100 BENCH_SECONDS=20
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const MODE = process.env.BENCH_MODE ?? 'both';
const RATE = Number(process.env.BENCH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const SETTLE_MS = 60_000;
const BASELINE_CONCURRENCY = 32;

interface Run { perSecond: number; p50: number; p99: number }

function summarise(latencies: number[], elapsedMs: number): Run {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { perSecond: (latencies.length / elapsedMs) * 1000, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
}

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  const cleanup: Cleanup = [];
  const arrivals = new Map<string, number>();
  // Steady mode: the first arrival of each signal's delivery, by signal id.
  const signalArrivals = new Map<string, number>();
  let onArrival: (() => void) | null = null;
  const arrived = (message: unknown) => {
    const { id, signalId, at: wallAt } = message as Arrival;
    const at = wallAt - performance.timeOrigin;
    if (id !== null && !arrivals.has(id)) arrivals.set(id, at);
    if (signalId !== null && !signalArrivals.has(signalId)) signalArrivals.set(signalId, at);
    onArrival?.();
  };
  const waitForAll = (ids: string[]) => new Promise<void>((resolve) => {
    onArrival = () => {
      if (ids.every((id) => arrivals.has(id))) resolve();
    };
    onArrival();
  });

  try {
    const receiver = await startRole(cleanup, 'receiver', 'bench/receiver.ts', {}, /port \d+/, arrived);
    const url = `http://127.0.0.1:${/port (\d+)/.exec(receiver.output())![1]}/hook`;
    const [databaseUrl, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
    // Migrated here, once, before the roles start.
    const ds = await openDatabase(databaseUrl, 20);
    cleanup.push(() => ds.destroy());
    // Default settings, but for a receiver on 127.0.0.1 and a rate limit above the steady rate.
    const roleEnv = {
      DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, SV_TASK_QUEUE: 'bench-webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', RATE_LIMIT_PER_MINUTE: '1000000', HOST: '127.0.0.1', PORT: String(await freePort()),
    };
    const config = loadConfig({ ...process.env, ...roleEnv });
    const running = await startService(cleanup, roleEnv);
    const api = running.base;
    const cpuOf = (pids: () => number[]) => () => pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const apiRole = { cpuSeconds: cpuOf(running.apiPids) };
    const workerRole = { cpuSeconds: cpuOf(running.workerPids) };
    const org = await createOrganization(ds, { name: 'Bench', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench' });
    const paths = Array.from({ length: ENDPOINTS }, (_, k) => `/hook/${k}`);
    for (const p of paths) await createEndpoint(ds, org.id, { url: url.replace(/\/hook$/, p), subscriptions: ['bench.*', 'signal.created'] });
    const { secret } = await createServiceKey(ds, {
      organizationId: org.id, productId: product.id, environment: config.environment, scopes: ['service:signals:write'],
    });

    const baseline = async (round: number): Promise<Run> => {
      const ids = Array.from({ length: EVENTS * ENDPOINTS }, (_, i) => `base-${round}-${i}`);
      const sentAt = new Map<string, number>();
      const agent = new http.Agent({ keepAlive: true, maxSockets: BASELINE_CONCURRENCY });
      const start = performance.now();
      const queue = [...ids];
      await Promise.all(Array.from({ length: BASELINE_CONCURRENCY }, async () => {
        for (let id = queue.shift(); id; id = queue.shift()) {
          sentAt.set(id, performance.now());
          await new Promise<void>((resolve, reject) => {
            const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-bench-id': id } }, (res) => {
              res.resume();
              res.on('end', resolve);
            });
            req.on('error', reject);
            req.end(JSON.stringify({ id }));
          });
        }
      }));
      agent.destroy();
      // An answer can come back before the receiver's report of that arrival.
      await waitForAll(ids);
      const elapsed = Math.max(...ids.map((id) => arrivals.get(id)!)) - start;
      return summarise(ids.map((id) => arrivals.get(id)! - sentAt.get(id)!), elapsed);
    };

    const service = async (): Promise<Run> => {
      const start = performance.now();
      // The events go into the outbox as any change's events do, but in one statement, so that the
      // clock measures the service's delivery rather than the load generator's 300 round trips.
      const events = await ds.transaction((em) => enqueueEvents(em, Array.from({ length: EVENTS }, (_, i) => (
        { organizationId: org.id, productId: product.id, type: 'bench.event', data: { i } }))));
      const committed = performance.now();
      const ids = events.flatMap((event) => paths.map((p) => `${p} ${event}`));
      await waitForAll(ids);
      const elapsed = Math.max(...ids.map((id) => arrivals.get(id)!)) - start;
      return summarise(ids.map((id) => arrivals.get(id)! - committed), elapsed);
    };

    const emptyWorker = await Worker.create({
      connection: temporal.nativeConnection, taskQueue: 'bench-empty', workflowsPath: require.resolve('./empty-workflow'),
    });
    const emptyRunning = emptyWorker.run();
    const ceiling = async (): Promise<number> => {
      const start = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: BASELINE_CONCURRENCY }, async () => {
        for (let i = next++; i < EVENTS; i = next++) {
          await temporal.client.workflow.execute('emptyWorkflow', { taskQueue: 'bench-empty', workflowId: `bench-empty-${Date.now()}-${i}` });
        }
      }));
      return (EVENTS / (performance.now() - start)) * 1000;
    };
    const ceilings: number[] = [];

    const steady = async () => {
      const answered = new Map<string, number>();
      const intake: number[] = [];
      let refused = 0;
      const total = RATE * SECONDS;
      let lastSent = 0;
      const cpuBefore = { api: apiRole.cpuSeconds(), worker: workerRole.cpuSeconds(), receiver: receiver.cpuSeconds(), bench: process.cpuUsage() };
      const start = performance.now();
      const body = 'Exports take minutes for big projects; please make them faster.';
      await Promise.all(Array.from({ length: total }, async (_, i) => {
        const due = start + (i * 1000) / RATE;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
        const sent = performance.now();
        lastSent = Math.max(lastSent, sent);
        try {
          const res = await fetch(`${api}/api/v1/signals`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
            body: JSON.stringify({ endUserId: `user-${i % 100}`, title: 'Export is slow', body, idempotencyKey: `steady-${i}`, kind: 'bug' }),
          });
          const json = await res.json() as { data?: { id: string } };
          const at = performance.now();
          intake.push(at - sent);
          if (res.status === 201 && json.data) answered.set(json.data.id, at);
          else refused += 1;
        } catch {
          // An overloaded machine may drop a connection: counted, not fatal to the run.
          refused += 1;
        }
      }));
      const last = performance.now();
      const cpu = (before: number | null, now: number | null) => (before === null || now === null ? NaN : (now - before) / ((last - start) / 1000));
      const benchCpu = process.cpuUsage(cpuBefore.bench);
      const busy = {
        api: cpu(cpuBefore.api, apiRole.cpuSeconds()),
        worker: cpu(cpuBefore.worker, workerRole.cpuSeconds()),
        receiver: cpu(cpuBefore.receiver, receiver.cpuSeconds()),
        bench: (benchCpu.user + benchCpu.system) / 1000 / (last - start),
      };
      const ids = [...answered.keys()];
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          onArrival = () => {
            if (signalArrivals.size >= ids.length && ids.every((id) => signalArrivals.has(id))) resolve();
          };
          onArrival();
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SETTLE_MS);
        }),
      ]);
      clearTimeout(timer);
      const delivered = ids.filter((id) => signalArrivals.has(id));
      const latencies = delivered.map((id) => signalArrivals.get(id)! - answered.get(id)!).sort((a, b) => a - b);
      const sortedIntake = [...intake].sort((a, b) => a - b);
      const [batches]: Array<{ batches: number; first: number }> = await ds.query(
        `SELECT count(DISTINCT first_attempt_batch)::int AS batches, count(*) FILTER (WHERE first_attempt_batch IS NOT NULL)::int AS first
           FROM webhook_deliveries WHERE event_type = 'signal.created'`);
      // Where the time goes, per delivery, from the database's own clock (the same machine's): the 201 →
      // the relay publishing the delivery → the worker starting the first POST → its arrival here.
      const stamps: Array<{ signal_id: string; published: number; sent: number; batch: string }> = await ds.query(
        `SELECT d.payload::jsonb->'data'->>'signalId' AS signal_id, extract(epoch FROM d.created_at) * 1000 AS published,
                extract(epoch FROM a.started_at) * 1000 AS sent, d.first_attempt_batch AS batch
           FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
          WHERE d.event_type = 'signal.created'`);
      // When Temporal started each batch workflow: the relay's hand-over.
      const batchStarts = new Map<string, number>();
      for (const batch of new Set(stamps.map((x) => x.batch))) {
        if (batch) batchStarts.set(batch, (await temporal.client.workflow.getHandle(batch).describe()).startTime.getTime());
      }
      const wall = (at: number) => performance.timeOrigin + at;
      type Stamp = { answered: number; published: number; started: number; sent: number; arrived: number };
      const stage = (pick: (x: Stamp) => number) => {
        const values = stamps.filter((x) => answered.has(x.signal_id) && signalArrivals.has(x.signal_id) && batchStarts.has(x.batch)).map((x) => pick({
          answered: wall(answered.get(x.signal_id)!), published: Number(x.published), started: batchStarts.get(x.batch)!,
          sent: Number(x.sent), arrived: wall(signalArrivals.get(x.signal_id)!),
        })).sort((a, b) => a - b);
        return `p50 ${quantile(values, 0.5).toFixed(0)} / p99 ${quantile(values, 0.99).toFixed(0)} ms`;
      };
      const stages = {
        publish: stage((x) => x.published - x.answered),
        dispatch: stage((x) => x.started - x.published),
        start: stage((x) => x.sent - x.started),
        post: stage((x) => x.arrived - x.sent),
      };
      const [retried]: Array<{ retried: number; errors: string | null }> = await ds.query(
        `SELECT count(DISTINCT d.id)::int AS retried, string_agg(DISTINCT coalesce(a.error, 'HTTP ' || a.status_code), '; ') AS errors
           FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
          WHERE d.event_type = 'signal.created' AND d.attempt_count > 1`);
      return {
        stages, retried,
        sent: total, refused, rate: ((total - 1) / (lastSent - start)) * 1000, accepted: (ids.length / (Math.max(...answered.values()) - start)) * 1000,
        undelivered: ids.length - delivered.length, busy, batches: batches.batches, perBatch: batches.first / Math.max(1, batches.batches),
        seconds: (last - start) / 1000,
        p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies[latencies.length - 1],
        intakeP50: quantile(sortedIntake, 0.5), intakeP99: quantile(sortedIntake, 0.99),
      };
    };

    const fmt = (r: Run) => `${r.perSecond.toFixed(1)}/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`;
    if (MODE === 'burst' || MODE === 'both') {
      const results: Array<{ baseline: Run; service: Run }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const b = await baseline(round);
        const s = await service();
        results.push({ baseline: b, service: s });
        ceilings.push(await ceiling());
      }
      console.log(`bench:webhooks burst  ${EVENTS} events to ${ENDPOINTS} endpoint(s) per round (${EVENTS * ENDPOINTS} deliveries), ${ROUNDS} rounds, alternating; `
        + `npm start with ${running.apiPids().length} API processes and a worker`);
      results.forEach((r, i) => {
        console.log(`round ${i + 1}  direct POSTs       ${fmt(r.baseline)}`);
        console.log(`round ${i + 1}  service deliveries ${fmt(r.service)}`);
        console.log(`round ${i + 1}  empty workflows    ${ceilings[i].toFixed(1)}/s (the dev server's own ceiling)`);
      });
      const mean = (pick: (x: { baseline: Run; service: Run }) => number) => results.reduce((a, x) => a + pick(x), 0) / results.length;
      console.log(`ratio (service / direct): throughput ${(mean((x) => x.service.perSecond) / mean((x) => x.baseline.perSecond)).toFixed(3)} (aim >= 0.25), `
        + `p50 ${(mean((x) => x.service.p50) / mean((x) => x.baseline.p50)).toFixed(1)}x, p99 ${(mean((x) => x.service.p99) / mean((x) => x.baseline.p99)).toFixed(1)}x`);
    }
    if (MODE === 'steady' || MODE === 'both') {
      // The dev server's own ceiling just before the steady run, beside which the service's figure stands.
      const emptyPerSecond = await ceiling();
      emptyWorker.shutdown();
      await emptyRunning;
      const load = os.loadavg()[0];
      const r = await steady();
      console.log(`bench:webhooks steady  ${r.sent} signals offered at ${RATE}/s for ${SECONDS} s (sent at ${r.rate.toFixed(1)}/s), `
        + `${(r.sent - r.refused)} taken (${r.accepted.toFixed(1)}/s), ${r.refused} refused or dropped by intake`);
      console.log(`intake 201: p50 ${r.intakeP50.toFixed(1)} ms  p99 ${r.intakeP99.toFixed(1)} ms`);
      console.log(`event (201) → first attempt: p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms (aim <= 1000)  max ${r.max.toFixed(1)} ms`);
      console.log(`not delivered ${SETTLE_MS / 1000} s after the last signal: ${r.undelivered}`);
      console.log(`first attempt not answered 2xx (went on in a retry workflow): ${r.retried.retried}${r.retried.errors ? ` (${r.retried.errors})` : ''}`);
      console.log(`where it goes: 201 → relay publishes ${r.stages.publish}; → batch workflow started ${r.stages.dispatch}; `
        + `→ worker starts the POST ${r.stages.start}; → arrives ${r.stages.post}`);
      console.log(`batch workflows: ${r.batches} (${(r.batches / r.seconds).toFixed(1)}/s, ${r.perBatch.toFixed(1)} deliveries each); `
        + `empty workflows just before: ${emptyPerSecond.toFixed(1)}/s (the dev server's own ceiling)`);
      console.log(`CPU cores busy during the run: api ${r.busy.api.toFixed(2)}, worker ${r.busy.worker.toFixed(2)}, `
        + `receiver ${r.busy.receiver.toFixed(2)}, load generator ${r.busy.bench.toFixed(2)}; load average ${load.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after`);
    } else {
      emptyWorker.shutdown();
      await emptyRunning;
    }
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:webhooks failed: ${(err as Error).message}`);
  process.exit(1);
});
