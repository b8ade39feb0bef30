import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Cleanup, freePort } from '../test/support/servers';
import { approvedStory, cloneStory, startProofBench } from './proof-bench';
import { startRole } from './roles';
import { cpuSeconds } from './service';
import { quantile } from './stats';

/**
 * Cold renders of a published wall of BENCH_ITEMS (1,000) eligible items, against the service as `npm start` runs
 * it (every API process it starts on this machine): the signed manifest (`GET /api/public/proof/render/{id}`, no
 * If-None-Match: a fresh eligibility decision each time) and the server-rendered page (`GET /embed/wall/{id}`),
 * each beside bench/static-server.ts serving the very same bytes from a process of its own, in alternating rounds.
 * Prints requests/s, p50 and p99 of each and the ratio to its static twin (target ≥ 0.30).
 */
const ITEMS = Number(process.env.BENCH_ITEMS ?? 1000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

async function main(): Promise<void> {
  const cleanup: Cleanup = [];
  try {
    const bench = await startProofBench(cleanup);
    const { ds, api, service } = bench;
    const placement = await api('POST', '/api/v1/proof/placements', { name: 'Bench wall', placementType: 'wall', channel: 'website' });
    const template = await approvedStory(bench);
    const seedStart = performance.now();
    const clones = await cloneStory(ds, template, ITEMS - 1, 'bw_');
    // Placed as the API places them (following each item's approved public version), set-wise.
    await ds.query(`INSERT INTO proof_placement_items (id, placement_id, proof_item_id, version_id, position, state)
      SELECT 'bw_ppi_' || n, $1, t.id, NULL, n - 1, 'active' FROM unnest($2::text[]) WITH ORDINALITY AS t(id, n)`,
    [placement.id, [template.proofItemId, ...clones]]);
    await ds.query('ANALYZE proof_placement_items');
    const published = await api('POST', `/api/v1/proof/placements/${placement.id}/publish`, {});
    console.log(`seeded and published a wall of ${ITEMS} items in ${((performance.now() - seedStart) / 1000).toFixed(1)} s (eligible ${published.eligibleCount})`);

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    // The load only counts the bytes: a client that decoded and kept 1 MB an answer would be the bound it measures.
    const get = (url: string, keep = false) => new Promise<{ status: number; body: string; bytes: number }>((resolve, reject) => {
      http.get(url, { agent }, (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (c: Buffer) => { bytes += c.length; if (keep) chunks.push(c); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), bytes }));
      }).on('error', reject);
    });
    const renderUrl = `${service.base}/api/public/proof/render/${placement.id}`;
    const pageUrl = `${service.base}/embed/wall/${placement.id}`;
    const manifest = await get(renderUrl, true);
    if (manifest.status !== 200 || JSON.parse(manifest.body).manifest.items.length !== ITEMS) throw new Error(`render: ${manifest.status} ${manifest.body.slice(0, 300)}`);
    const page = await get(pageUrl, true);
    if (page.status !== 200 || (page.body.match(/<li class="sv-item"/g) ?? []).length !== ITEMS) throw new Error(`page: ${page.status} ${page.body.slice(0, 300)}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-bench-wall-'));
    cleanup.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'manifest.json'), manifest.body);
    fs.writeFileSync(path.join(dir, 'page.html'), page.body);
    const staticPort = await freePort();
    await startRole(cleanup, 'static', 'bench/static-server.ts', {
      PORT: String(staticPort), BENCH_STATIC_FILE: path.join(dir, 'manifest.json'), BENCH_STATIC_PAGE_FILE: path.join(dir, 'page.html'),
    }, /static listening on/);

    const run = async (url: string) => {
      let left = REQUESTS;
      const latencies: number[] = [];
      const start = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (left-- > 0) {
          const sent = performance.now();
          const res = await get(url);
          if (res.status !== 200 || res.bytes === 0) throw new Error(`${url}: ${res.status}`);
          latencies.push(performance.now() - sent);
        }
      }));
      return { perSecond: (REQUESTS / (performance.now() - start)) * 1000, latencies };
    };
    const modes = {
      'static json': `http://127.0.0.1:${staticPort}/bench/static`,
      'render': renderUrl,
      'static page': `http://127.0.0.1:${staticPort}/bench/page`,
      'wall page': pageUrl,
    } as const;
    const names = Object.keys(modes) as Array<keyof typeof modes>;
    for (const name of names) await run(modes[name]);
    const totals = Object.fromEntries(names.map((n) => [n, { perSecond: 0, latencies: [] as number[] }]));
    const apiCpu = () => service.apiPids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names) {
        const cpuBefore = apiCpu();
        const { perSecond, latencies } = await run(modes[name]);
        totals[name].perSecond += perSecond / ROUNDS;
        totals[name].latencies.push(...latencies);
        const cpu = name.startsWith('static') ? '' : `, API CPU ${(((apiCpu() - cpuBefore) / REQUESTS) * 1000).toFixed(2)} ms a request`;
        console.log(`round ${round + 1}  ${name.padEnd(11)} ${perSecond.toFixed(0)} requests/s${cpu}`);
      }
    }
    agent.destroy();
    const line = (name: keyof typeof modes) => {
      const sorted = totals[name].latencies.sort((a, b) => a - b);
      return `${name} ${totals[name].perSecond.toFixed(0)}/s (p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms)`;
    };
    console.log(`bench:wall  ${ITEMS} items, ${service.apiPids().length} API processes, manifest ${Buffer.byteLength(manifest.body)} bytes, page ${Buffer.byteLength(page.body)} bytes, ${REQUESTS} requests x ${ROUNDS} rounds, concurrency ${CONCURRENCY}`);
    console.log(`${line('render')}   beside   ${line('static json')}`);
    console.log(`${line('wall page')}   beside   ${line('static page')}`);
    const ratio = (a: keyof typeof modes, b: keyof typeof modes) => totals[a].perSecond / totals[b].perSecond;
    console.log(`ratio to static (target >= 0.30): render ${ratio('render', 'static json').toFixed(3)}, wall page ${ratio('wall page', 'static page').toFixed(3)}`);
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:wall failed: ${(err as Error).message}`);
  process.exit(1);
});
