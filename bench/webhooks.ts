import http from 'node:http';
import { AddressInfo } from 'node:net';
import { buildApp } from '../api/app';
import { createServiceKey } from '../db/platform/service-keys';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../runtime/services';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { createOrganization, createProduct } from '../db/platform/tenancy';
import { createEndpoint } from '../db/webhooks/webhooks';
import { enqueueEvent } from '../db/outbox';
import { Worker } from '@temporalio/worker';
import { startWorker } from '../worker/main';
import { quantile } from './stats';
import { Cleanup, startScratchDatabase, startScratchTemporal } from '../test/support/servers';

/**
 * Webhook delivery, with every role running (API, worker with its relays, Temporal) and the worker on
 * the default settings:
 *
 * - burst: fans N events out through the service (outbox → relay → batch workflow → signed HTTP) to a
 *   local receiver, beside N plain HTTP POSTs made directly from this process to the same receiver, in
 *   alternating rounds. Prints deliveries/s and the time from event to first attempt (p50/p99) of both,
 *   and the ratios. Also measures the Temporal dev server's own ceiling on this machine: empty
 *   workflows started and completed per second.
 * - steady: POST /api/v1/signals at BENCH_RATE per second for BENCH_SECONDS with one endpoint
 *   subscribed to signal.created; prints the time from each intake's 201 (the event is committed) to
 *   the first attempt's arrival (p50/p99), and how many deliveries had not arrived 60 s after the last
 *   signal.
 *
 *   BENCH_MODE=burst|steady|both (default both) BENCH_EVENTS=300 BENCH_ROUNDS=2 BENCH_RATE=100 BENCH_SECONDS=20
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
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
  const receiver = http.createServer((req, res) => {
    const id = req.headers['service-event-id'] ?? req.headers['x-bench-id'];
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, at);
      if (req.headers['service-event-type'] === 'signal.created') {
        const signalId = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.signalId as string;
        if (!signalArrivals.has(signalId)) signalArrivals.set(signalId, at);
      }
      res.writeHead(204).end();
      onArrival?.();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const waitForAll = (ids: string[]) => new Promise<void>((resolve) => {
    onArrival = () => {
      if (ids.every((id) => arrivals.has(id))) resolve();
    };
    onArrival();
  });

  try {
    const [databaseUrl, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
    const ds = await openDatabase(databaseUrl, 20);
    cleanup.push(() => ds.destroy());
    // Default settings, but for a receiver on 127.0.0.1 and a rate limit above the steady rate.
    const config = {
      ...loadConfig(), databaseUrl, webhookAllowPrivateTargets: true, rateLimitPerMinute: 1_000_000_000, taskQueue: 'bench-webhooks',
    };
    const workerDs = await openDatabase(databaseUrl, 10);
    cleanup.push(() => workerDs.destroy());
    const worker = await startWorker(config, workerDs, temporal);
    cleanup.push(worker.stop);
    const app = await buildApp({ dataSource: ds, temporal: temporal.client, config });
    await app.listen({ port: 0, host: '127.0.0.1' });
    cleanup.push(() => app.close());
    const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const org = await createOrganization(ds, { name: 'Bench', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench' });
    await createEndpoint(ds, org.id, { url, subscriptions: ['bench.*', 'signal.created'] });
    const { secret } = await createServiceKey(ds, {
      organizationId: org.id, productId: product.id, environment: config.environment, scopes: ['service:signals:write'],
    });

    const baseline = async (round: number): Promise<Run> => {
      const ids = Array.from({ length: EVENTS }, (_, i) => `base-${round}-${i}`);
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
      const elapsed = Math.max(...ids.map((id) => arrivals.get(id)!)) - start;
      return summarise(ids.map((id) => arrivals.get(id)! - sentAt.get(id)!), elapsed);
    };

    const service = async (): Promise<Run> => {
      const start = performance.now();
      const ids = await ds.transaction(async (em) => {
        const out: string[] = [];
        for (let i = 0; i < EVENTS; i++) {
          out.push(await enqueueEvent(em, { organizationId: org.id, productId: product.id, type: 'bench.event', data: { i } }));
        }
        return out;
      });
      const committed = performance.now();
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
      const start = performance.now();
      const body = 'Exports take minutes for big projects; please make them faster.';
      await Promise.all(Array.from({ length: total }, async (_, i) => {
        const due = start + (i * 1000) / RATE;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
        const sent = performance.now();
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
      return {
        sent: total, refused, rate: (total / (last - start)) * 1000, undelivered: ids.length - delivered.length,
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
      console.log(`bench:webhooks burst  ${EVENTS} events per round, ${ROUNDS} rounds, alternating`);
      results.forEach((r, i) => {
        console.log(`round ${i + 1}  direct POSTs       ${fmt(r.baseline)}`);
        console.log(`round ${i + 1}  service deliveries ${fmt(r.service)}`);
        console.log(`round ${i + 1}  empty workflows    ${ceilings[i].toFixed(1)}/s (the dev server's own ceiling)`);
      });
      const mean = (pick: (x: { baseline: Run; service: Run }) => number) => results.reduce((a, x) => a + pick(x), 0) / results.length;
      console.log(`ratio (service / direct): throughput ${(mean((x) => x.service.perSecond) / mean((x) => x.baseline.perSecond)).toFixed(3)} (aim >= 0.25), `
        + `p50 ${(mean((x) => x.service.p50) / mean((x) => x.baseline.p50)).toFixed(1)}x, p99 ${(mean((x) => x.service.p99) / mean((x) => x.baseline.p99)).toFixed(1)}x`);
    }
    emptyWorker.shutdown();
    await emptyRunning;
    if (MODE === 'steady' || MODE === 'both') {
      const r = await steady();
      console.log(`bench:webhooks steady  ${r.sent} signals at ${RATE}/s for ${SECONDS} s (achieved ${r.rate.toFixed(1)}/s), ${r.refused} refused or dropped by intake`);
      console.log(`intake 201: p50 ${r.intakeP50.toFixed(1)} ms  p99 ${r.intakeP99.toFixed(1)} ms`);
      console.log(`event (201) → first attempt: p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms (aim <= 1000)  max ${r.max.toFixed(1)} ms`);
      console.log(`not delivered ${SETTLE_MS / 1000} s after the last signal: ${r.undelivered}`);
    }
  } finally {
    receiver.close();
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:webhooks failed: ${(err as Error).message}`);
  process.exit(1);
});
