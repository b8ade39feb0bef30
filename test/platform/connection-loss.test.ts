import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { LOOP_SCOPES, signalBody } from '../support/customer-loop';
import { call, createTenant, eventually, withKey } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';
import { freePort } from '../support/servers';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
// The API's connections carry this name, so the test ends them and not the suite's own.
const API_NAME = 'sv-connection-loss-api';

/** Ends every backend of the database whose connection carries `name` (any name: null) but the caller's; answers how many. */
async function terminateBackends(admin: PgClient, name: string | null): Promise<number> {
  const res = await admin.query(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND ($1::text IS NULL OR application_name = $1)`, [name]);
  return res.rows[0].n;
}

/**
 * One cut: waits until the pool has reconnected (right after a cut, or on a loaded machine, there may be a moment
 * with no backend at all) and ends what is there.
 */
async function cutConnections(admin: PgClient, name: string | null): Promise<number> {
  return eventually(async () => (await terminateBackends(admin, name)) || null, 10_000);
}

/** `npm run api` as a process of its own, on the suite's database: a crash there ends it, not the suite. */
async function startApiProcess(): Promise<{ url: string; child: ChildProcess; exited: () => number | null; output: () => string }> {
  const port = await freePort();
  const databaseUrl = new URL(ctx.databaseUrl);
  databaseUrl.searchParams.set('application_name', API_NAME);
  const child = spawn(TSX, [path.join(ROOT, 'api', 'server.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', HOME: os.homedir(), DATABASE_URL: databaseUrl.toString(), SV_SECRET_KEYS: process.env.SV_SECRET_KEYS ?? '',
      // Intake answers without Temporal: the worker in this process relays what the API committed.
      TEMPORAL_ADDRESS: '127.0.0.1:1', PORT: String(port), RATE_LIMIT_PER_MINUTE: '100000', SV_DATA_DIR: ctx.config.dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  let code: number | null = null;
  child.on('exit', (c) => (code = c ?? -1));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (code !== null) throw new Error(`the API exited with ${code}: ${output}`);
    // Any answer: /readyz says 503 here, since this API has no Temporal to reach.
    return (await fetch(`${url}/openapi.json`).catch(() => null))?.ok;
  }, 60_000);
  return { url, child, exited: () => code, output: () => output };
}

describe('connection loss: PostgreSQL cutting the service\'s connections never ends the API', function () {
  this.timeout(180_000);

  it('every backend terminated four times during a burst: the API keeps serving, refusals are 503 with retry-after, every 201 reads back and is delivered',
    async () => {
      const tenant = await createTenant(LOOP_SCOPES);
      const receiver = await Receiver.start();
      const api = await startApiProcess();
      const admin = new PgClient({ connectionString: ctx.databaseUrl });
      await admin.connect();
      try {
        await createEndpoint(ctx.dataSource, tenant.organizationId, { url: `${receiver.url}/in`, subscriptions: ['signal.created'] });
        const created: string[] = [];
        const refused: Array<{ status: number; body: string; retryAfter: string | null }> = [];
        const post = async () => {
          const res = await fetch(`${api.url}/api/v1/signals`, {
            method: 'POST', headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' }, body: JSON.stringify(signalBody()),
          });
          const body = await res.text();
          if (res.status === 201) created.push(JSON.parse(body).data.id);
          else refused.push({ status: res.status, body, retryAfter: res.headers.get('retry-after') });
        };
        let stop = false;
        const burst = Promise.all(Array.from({ length: 16 }, async () => {
          while (!stop) await post().catch((err) => refused.push({ status: 0, body: String(err), retryAfter: null }));
        }));
        const ended: number[] = [];
        try {
          for (let round = 0; round < 4; round += 1) {
            await new Promise((r) => setTimeout(r, 400));
            ended.push(await cutConnections(admin, API_NAME));
          }
          await new Promise((r) => setTimeout(r, 800));
        } finally {
          stop = true;
        }
        await burst;

        assert.equal(api.exited(), null, `the API process ended:\n${api.output()}`);
        assert.equal((await fetch(`${api.url}/openapi.json`)).status, 200);
        assert.ok(refused.length + created.length > 0);
        for (const r of refused) {
          assert.equal(r.status, 503, `a refusal other than 503: ${JSON.stringify(r)}`);
          assert.ok(r.retryAfter, `503 without retry-after: ${r.body}`);
          assert.ok(JSON.parse(r.body).error.code, r.body);
        }
        assert.ok(created.length > 0, 'the burst stored signals');
        // Every 201 reads back and reaches the receiver.
        const stored = await ctx.dataSource.query('SELECT id FROM signals WHERE id = ANY($1)', [created]);
        assert.equal(stored.length, created.length);
        await eventually(async () => {
          const delivered = new Set(receiver.requests.map((q) => JSON.parse(q.body).data?.signalId));
          return created.every((id) => delivered.has(id));
        }, 60_000);
        // After the storm, the same process answers as before.
        await post();
        assert.equal(refused.filter((r) => r.status !== 503).length, 0);
      } finally {
        await admin.end().catch(() => undefined);
        api.child.kill('SIGTERM');
        await receiver.close();
      }
    });

  it('in this process, where the suite\'s worker and relays share the API pool: every connection cut four times, every error is heard (an unheard one fails ' +
    'this test as uncaught)', async () => {
    const app = ctx.app;
    const tenant = await createTenant(LOOP_SCOPES);
    const admin = new PgClient({ connectionString: ctx.databaseUrl });
    await admin.connect();
    try {
      const statuses: number[] = [];
      let stop = false;
      const burst = Promise.all(Array.from({ length: 16 }, async () => {
        while (!stop) {
          const res = await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/signals', payload: signalBody() }), app);
          statuses.push(res.statusCode);
          if (res.statusCode === 503) assert.ok(res.headers['retry-after'], res.body);
        }
      }));
      try {
        for (let round = 0; round < 4; round += 1) {
          await new Promise((r) => setTimeout(r, 300));
          await cutConnections(admin, null);
        }
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        // A burst left running would outlive this test and load every test after it.
        stop = true;
      }
      await burst;
      assert.deepEqual([...new Set(statuses)].filter((s) => s !== 201 && s !== 503), [], 'only stored or 503');
      const after = await call(withKey(tenant.key, { method: 'POST', url: '/api/v1/signals', payload: signalBody() }), app);
      assert.equal(after.statusCode, 201, 'the pool replaced its connections');
    } finally {
      await admin.end().catch(() => undefined);
    }
  });
});
