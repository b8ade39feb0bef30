import http from 'node:http';
import { AddressInfo } from 'node:net';
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
 * Fans N events out through the service (outbox → relay → one delivery workflow each → HTTP) to a
 * local receiver, beside N plain HTTP POSTs made directly from this process to the same receiver, in
 * alternating rounds. Prints deliveries/s and the time from event to first attempt (p50/p99), and the
 * service's figures as ratios of the baseline's. Also measures the Temporal dev server's own ceiling on
 * this machine: empty workflows started and completed per second.
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
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
  let onArrival: (() => void) | null = null;
  const receiver = http.createServer((req, res) => {
    const id = req.headers['service-event-id'] ?? req.headers['x-bench-id'];
    req.resume();
    req.on('end', () => {
      if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, performance.now());
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
    const config = { ...loadConfig(), webhookAllowPrivateTargets: true, relayIdleMs: 20, relayBatchSize: 200, taskQueue: 'bench-webhooks' };
    const worker = await startWorker(config, ds, temporal);
    cleanup.push(worker.stop);
    const org = await createOrganization(ds, { name: 'Bench', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench' });
    await createEndpoint(ds, org.id, { url, subscriptions: ['*'] });

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

    const results: Array<{ baseline: Run; service: Run }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await baseline(round);
      const s = await service();
      results.push({ baseline: b, service: s });
      ceilings.push(await ceiling());
    }
    emptyWorker.shutdown();
    await emptyRunning;
    const fmt = (r: Run) => `${r.perSecond.toFixed(1)}/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`;
    console.log(`bench:webhooks  ${EVENTS} events per round, ${ROUNDS} rounds, alternating`);
    results.forEach((r, i) => {
      console.log(`round ${i + 1}  direct POSTs      ${fmt(r.baseline)}`);
      console.log(`round ${i + 1}  service deliveries ${fmt(r.service)}`);
      console.log(`round ${i + 1}  empty workflows    ${ceilings[i].toFixed(1)}/s (the dev server's own ceiling)`);
    });
    const mean = (pick: (x: { baseline: Run; service: Run }) => number) => results.reduce((a, x) => a + pick(x), 0) / results.length;
    console.log(`ratio (service / direct): throughput ${(mean((x) => x.service.perSecond) / mean((x) => x.baseline.perSecond)).toFixed(3)}, `
      + `p50 ${(mean((x) => x.service.p50) / mean((x) => x.baseline.p50)).toFixed(1)}x, p99 ${(mean((x) => x.service.p99) / mean((x) => x.baseline.p99)).toFixed(1)}x`);
  } finally {
    receiver.close();
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:webhooks failed: ${(err as Error).message}`);
  process.exit(1);
});
