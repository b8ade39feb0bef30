import http from 'node:http';
import { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../api/app';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../runtime/services';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { createServiceKey } from '../db/platform/service-keys';
import { createSession } from '../db/platform/sessions';
import { createOrganization, createProduct, createTeammate } from '../db/platform/tenancy';
import { Cleanup, startScratchDatabase, startScratchTemporal } from '../test/support/servers';
import { submissionBody } from '../test/support/proof-fixtures';

/**
 * Render requests/s of a placement of 50 eligible items, cold (no If-None-Match: fresh eligibility,
 * canonical JSON, Ed25519 signature) and warm (If-None-Match matches: fresh eligibility, 304), beside
 * a bare static JSON route of the same size on the same server, in alternating rounds.
 */
const ITEMS = 50;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  const cleanup: Cleanup = [];
  try {
    const [databaseUrl, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
    const ds = await openDatabase(databaseUrl, 20);
    cleanup.push(() => ds.destroy());
    // Every request comes from one address: the public per-address limit would measure itself.
    const config = { ...loadConfig(), rateLimitPerMinute: 1_000_000, publicRateLimitPerMinute: 1_000_000, taskQueue: 'bench-render' };
    const app = await buildApp({ dataSource: ds, temporal: temporal.client, config });
    let staticBody = '';
    app.get('/bench/static', async (_request, reply) => reply.type('application/json; charset=utf-8').send(staticBody));
    await app.listen({ host: '127.0.0.1', port: 0 });
    cleanup.push(() => app.close());

    const org = await createOrganization(ds, { name: 'Bench', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench' });
    const { secret } = await createServiceKey(ds, {
      organizationId: org.id, productId: product.id, environment: 'production',
      scopes: ['service:proof:read', 'service:proof:write', 'service:proof:publish', 'service:proof:submissions:write'],
    });
    const owner = await createTeammate(ds, { organizationId: org.id, email: 'bench@example.com', role: 'owner' });
    const session = await createSession(ds, owner.id, 1);
    const api = async (method: 'POST', url: string, payload: object, asOwner = false) => {
      const headers = asOwner ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken }
        : { authorization: `Bearer ${secret}`, 'idempotency-key': `bench-${randomBytes(8).toString('hex')}` };
      const res = await app.inject({ method, url, payload, headers });
      if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res.json().data;
    };
    const placement = await api('POST', '/api/v1/proof/placements', { name: 'Bench wall', placementType: 'wall', channel: 'website' });
    for (let i = 0; i < ITEMS; i++) {
      const s = await api('POST', '/api/v1/proof/submissions', submissionBody());
      await api('POST', `/api/v1/proof/items/${s.proofItemId}/request-approval`, { versionId: s.originalVersionId });
      await api('POST', `/api/workspace/proof/items/${s.proofItemId}/approve`, { versionId: s.originalVersionId }, true);
      await api('POST', `/api/v1/proof/placements/${placement.id}/items`, { proofItemId: s.proofItemId });
    }
    await api('POST', `/api/v1/proof/placements/${placement.id}/publish`, {});

    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const get = (path: string, headers: Record<string, string> = {}) => new Promise<{ status: number; body: string; etag?: string }>((resolve, reject) => {
      http.get(`${base}${path}`, { agent, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, etag: res.headers.etag }));
      }).on('error', reject);
    });
    const first = await get(`/api/public/proof/render/${placement.id}`);
    if (first.status !== 200 || JSON.parse(first.body).manifest.items.length !== ITEMS) throw new Error(`render: ${first.status}`);
    staticBody = first.body;

    const run = async (path: string, headers: Record<string, string>, expect: number): Promise<number> => {
      let left = REQUESTS;
      const start = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (left-- > 0) {
          const res = await get(path, headers);
          if (res.status !== expect) throw new Error(`${path}: ${res.status}`);
        }
      }));
      return (REQUESTS / (performance.now() - start)) * 1000;
    };
    const modes = {
      static: () => run('/bench/static', {}, 200),
      cold: () => run(`/api/public/proof/render/${placement.id}`, {}, 200),
      warm: () => run(`/api/public/proof/render/${placement.id}`, { 'if-none-match': first.etag! }, 304),
    };
    await modes.cold(); // warm-up: JIT, pool connections
    const totals = { static: 0, cold: 0, warm: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['static', 'cold', 'warm'] as const) {
        const perSecond = await modes[mode]();
        totals[mode] += perSecond / ROUNDS;
        console.log(`round ${round + 1}  ${mode.padEnd(6)} ${perSecond.toFixed(0)} requests/s`);
      }
    }
    agent.destroy();
    console.log(`bench:render  ${ITEMS} items, manifest ${Buffer.byteLength(staticBody)} bytes, ${REQUESTS} requests x ${ROUNDS} rounds, concurrency ${CONCURRENCY}`);
    console.log(`static JSON ${totals.static.toFixed(0)}/s   cold render ${totals.cold.toFixed(0)}/s   warm render (304) ${totals.warm.toFixed(0)}/s`);
    console.log(`ratio to static: cold ${(totals.cold / totals.static).toFixed(3)}, warm ${(totals.warm / totals.static).toFixed(3)}`);
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:render failed: ${(err as Error).message}`);
  process.exit(1);
});
