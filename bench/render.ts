import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../api/app';
import { openDatabase, statementsSent } from '../db/data-source';
import { loadConfig } from '../runtime/config';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { createServiceKey } from '../db/platform/service-keys';
import { createSession } from '../db/platform/sessions';
import { createOrganization, createProduct, createTeammate } from '../db/platform/tenancy';
import { Cleanup, freePort, startScratchDatabase, startScratchTemporal } from '../test/support/servers';
import { submissionBody } from '../test/support/proof-fixtures';
import { startRole } from './roles';
import { startService } from './service';
import { loadRound } from './load';

/**
 * Render requests/s of a placement of 50 eligible items, cold (no If-None-Match: fresh eligibility,
 * canonical JSON, Ed25519 signature) and warm (If-None-Match matches: fresh eligibility, 304), beside
 * a small Fastify process serving the same manifest bytes (`bench/static-server.ts`), in alternating
 * rounds. The service runs as a newcomer runs it, `npm start` (the API in one process a core sharing the
 * port, and a worker process); this process only sets the wall up and generates the load.
 */
const ITEMS = 50;
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  const cleanup: Cleanup = [];
  try {
    const [databaseUrl, temporal] = await Promise.all([startScratchDatabase(cleanup, 'sv_bench'), startScratchTemporal(cleanup)]);
    // Migrated here, once, before the roles start.
    const ds = await openDatabase(databaseUrl, 4);
    cleanup.push(() => ds.destroy());
    // Every request comes from one address: the public per-address limit would measure itself.
    const roleEnv = {
      DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, SV_TASK_QUEUE: 'bench-render', HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
    };
    const staticPort = await freePort();
    const service = await startService(cleanup, roleEnv);
    const base = service.base;

    const org = await createOrganization(ds, { name: 'Bench', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Bench' });
    const { secret } = await createServiceKey(ds, {
      organizationId: org.id, productId: product.id, environment: 'production',
      scopes: ['service:proof:read', 'service:proof:write', 'service:proof:publish', 'service:proof:submissions:write'],
    });
    const owner = await createTeammate(ds, { organizationId: org.id, email: 'bench@example.com', role: 'owner' });
    const session = await createSession(ds, owner.id, 1);
    const api = async (method: 'POST', url: string, payload: object, asOwner = false) => {
      const headers: Record<string, string> = asOwner ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken }
        : { authorization: `Bearer ${secret}`, 'idempotency-key': `bench-${randomBytes(8).toString('hex')}` };
      const res = await fetch(`${base}${url}`, { method, body: JSON.stringify(payload), headers: { ...headers, 'content-type': 'application/json' } });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${url}: ${res.status} ${text}`);
      return JSON.parse(text).data;
    };
    const placement = await api('POST', '/api/v1/proof/placements', { name: 'Bench wall', placementType: 'wall', channel: 'website' });
    for (let i = 0; i < ITEMS; i++) {
      const s = await api('POST', '/api/v1/proof/submissions', submissionBody());
      await api('POST', `/api/v1/proof/items/${s.proofItemId}/request-approval`, { versionId: s.originalVersionId });
      await api('POST', `/api/workspace/proof/items/${s.proofItemId}/approve`, { versionId: s.originalVersionId }, true);
      await api('POST', `/api/v1/proof/placements/${placement.id}/items`, { proofItemId: s.proofItemId });
    }
    await api('POST', `/api/v1/proof/placements/${placement.id}/publish`, {});

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const get = (url: string, headers: Record<string, string> = {}) => new Promise<{ status: number; body: string; etag?: string }>((resolve, reject) => {
      http.get(url, { agent, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, etag: res.headers.etag }));
      }).on('error', reject);
    });
    const first = await get(`${base}/api/public/proof/render/${placement.id}`);
    if (first.status !== 200 || JSON.parse(first.body).manifest.items.length !== ITEMS) throw new Error(`render: ${first.status}`);
    const staticBody = first.body;
    const staticFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sv-bench-render-')), 'manifest.json');
    fs.writeFileSync(staticFile, staticBody);
    await startRole(cleanup, 'static', 'bench/static-server.ts', { PORT: String(staticPort), BENCH_STATIC_FILE: staticFile }, /static listening on/);

    const modes = {
      static: () => loadRound({ url: `http://127.0.0.1:${staticPort}/bench/static`, connections: CONCURRENCY, seconds: ROUND_S, expect: 200 }),
      cold: () => loadRound({ url: `${base}/api/public/proof/render/${placement.id}`, connections: CONCURRENCY, seconds: ROUND_S, expect: 200 }),
      warm: () => loadRound({
        url: `${base}/api/public/proof/render/${placement.id}`, connections: CONCURRENCY, seconds: ROUND_S, expect: 304, headers: { 'if-none-match': first.etag! },
      }),
    };
    // Warm-up of every route: JIT, pool connections.
    for (const mode of ['static', 'cold', 'warm'] as const) await modes[mode]();
    const totals = { static: 0, cold: 0, warm: 0 };
    const p99s = { static: [] as number[], cold: [] as number[], warm: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['static', 'cold', 'warm'] as const) {
        const r = await modes[mode]();
        if (r.unexpected > 0) throw new Error(`${mode}: ${r.unexpected} answers with another status or errors`);
        totals[mode] += r.perSecond / ROUNDS;
        p99s[mode].push(r.p99);
        console.log(`round ${round + 1}  ${mode.padEnd(6)} ${r.perSecond.toFixed(0)} requests/s  p50 ${r.p50} ms  p99 ${r.p99} ms`);
      }
    }
    agent.destroy();
    // Statements a render sends, counted on the same code in this process: one at a time, and 50 at once.
    const counted = await buildApp({ dataSource: ds, temporal: temporal.client, config: loadConfig({ ...process.env, ...roleEnv }) });
    cleanup.push(() => counted.close());
    const renderUrl = `/api/public/proof/render/${placement.id}`;
    const statementsPer = async (headers: Record<string, string>, atOnce: number) => {
      await counted.inject({ url: renderUrl, headers });
      const before = statementsSent();
      for (let i = 0; i < 4; i++) await Promise.all(Array.from({ length: atOnce }, () => counted.inject({ url: renderUrl, headers })));
      return (statementsSent() - before) / (4 * atOnce);
    };
    const statements = {
      cold: [await statementsPer({}, 1), await statementsPer({}, 50)],
      warm: [await statementsPer({ 'if-none-match': first.etag! }, 1), await statementsPer({ 'if-none-match': first.etag! }, 50)],
    };
    console.log(`bench:render  ${ITEMS} items, manifest ${Buffer.byteLength(staticBody)} bytes, ${ROUNDS} rounds of ${ROUND_S} s a mode, ${CONCURRENCY} connections (autocannon)`);
    console.log(`static JSON ${totals.static.toFixed(0)}/s (p99 ${Math.max(...p99s.static)} ms)   cold render ${totals.cold.toFixed(0)}/s (p99 ${Math.max(...p99s.cold)} ms)   warm render (304) ${totals.warm.toFixed(0)}/s (p99 ${Math.max(...p99s.warm)} ms)`);
    console.log(`ratio to static: cold ${(totals.cold / totals.static).toFixed(3)}, warm ${(totals.warm / totals.static).toFixed(3)}`);
    console.log(`SQL statements a request: cold ${statements.cold[0]} one at a time, ${statements.cold[1].toFixed(2)} 50 at once; `
      + `304 ${statements.warm[0]} one at a time, ${statements.warm[1].toFixed(2)} 50 at once`);
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:render failed: ${(err as Error).message}`);
  process.exit(1);
});
