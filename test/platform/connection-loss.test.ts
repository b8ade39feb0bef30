import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { createEndpoint } from '../../db/webhooks/webhooks';
import { LOOP_SCOPES, signalBody } from '../support/customer-loop';
import { createTenant, eventually } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ctx } from '../support/root-hooks';
import { freePort } from '../support/servers';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

/** `npm run api` as a process of its own, on the suite's database: a crash there ends it, not the suite. */
async function startApiProcess(): Promise<{ url: string; child: ChildProcess; exited: () => number | null; output: () => string }> {
  const port = await freePort();
  const child = spawn(TSX, [path.join(ROOT, 'api', 'server.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', HOME: os.homedir(), DATABASE_URL: ctx.databaseUrl, SV_SECRET_KEYS: process.env.SV_SECRET_KEYS ?? '',
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
    return (await fetch(`${url}/healthz`).catch(() => null))?.ok;
  }, 60_000);
  return { url, child, exited: () => code, output: () => output };
}

describe('connection loss: PostgreSQL cutting the service\'s connections never ends the API', function () {
  this.timeout(180_000);

  it('every backend terminated four times during a burst: the API keeps serving, refusals are 503 with retry-after, every 201 reads back and is delivered', async () => {
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
      const terminate = () => admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      let stop = false;
      const burst = Promise.all(Array.from({ length: 8 }, async () => {
        while (!stop) await post().catch((err) => refused.push({ status: 0, body: String(err), retryAfter: null }));
      }));
      for (let round = 0; round < 4; round += 1) {
        await new Promise((r) => setTimeout(r, 400));
        await terminate();
      }
      await new Promise((r) => setTimeout(r, 800));
      stop = true;
      await burst;

      assert.equal(api.exited(), null, `the API process ended:\n${api.output()}`);
      const health = await fetch(`${api.url}/healthz`);
      assert.equal(health.status, 200);
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
});
