import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { verifyWebhookSignature } from '../../clients/typescript/src';
import { openDatabase } from '../../db/data-source';
import { createServiceKey } from '../../db/platform/service-keys';
import { createOrganization, createProduct } from '../../db/platform/tenancy';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { eventually } from '../support/fixtures';
import { Receiver } from '../support/receiver';
import { ROOT, TSX_NODE } from '../support/role-processes';
import { ctx } from '../support/root-hooks';
import { Cleanup, freePort, startScratchDatabase } from '../support/servers';

/** The processes whose parent is `pid`, with their command lines. */
function childrenOf(pid: number): Array<{ pid: number; args: string }> {
  const found: Array<{ pid: number; args: string }> = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push({ pid: Number(entry), args: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** A GET on a connection of its own (node:cluster hands each new connection to the next API process, round robin). */
function getOnNewConnection(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

/** The value of `sv_http_requests_total` for `GET route` answered 200 in a scrape, 0 when absent. */
function requestsCounted(text: string, route: string): number {
  const family = parsePrometheusTextFormat(text).find((f) => f.name === 'sv_http_requests_total');
  const found = family?.metrics.find((m) => m.labels?.method === 'GET' && m.labels?.route === route && m.labels?.status === '200');
  return Number(found?.value ?? 0);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start: the API in one process a core beside a worker process, supervised', function () {
  this.timeout(600_000);
  const cleanup: Cleanup = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });

  it('two API processes share PORT; one killed comes back while the other serves; the worker delivers; Ctrl-C stops every role', async () => {
    const port = await freePort();
    const databaseUrl = await startScratchDatabase(cleanup, 'sv_start');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-start-roles-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    // The suite's key ring, so that the endpoint this test seals is one the worker process can open.
    const env = {
      PATH: process.env.PATH ?? '', HOME: os.homedir(), DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: ctx.temporalAddress,
      SV_SECRET_KEYS: process.env.SV_SECRET_KEYS ?? '', SV_TASK_QUEUE: `start-${randomBytes(4).toString('hex')}`, SV_DATA_DIR: dataDir,
      PORT: String(port), SV_API_PROCESSES: '2', SV_WORKER_METRICS_PORT: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SV_RELAY_IDLE_MS: '100',
      LOG_LEVEL: 'error', TEMPORAL_LOG_LEVEL: 'ERROR',
    };
    // A process group of its own, as a terminal gives `npm start`: Ctrl-C is a SIGINT to the whole group.
    const start: ChildProcess = spawn(TSX_NODE[0], [...TSX_NODE.slice(1), path.join(ROOT, 'bin', 'start.ts')], {
      cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    start.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    start.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    cleanup.push(async () => {
      if (start.exitCode === null) process.kill(-start.pid!, 'SIGKILL');
    });
    await eventually(async () => {
      if (start.exitCode !== null) throw new Error(`npm start exited with ${start.exitCode}:\n${output}`);
      return output.includes('ready; Ctrl-C stops everything');
    }, 180_000);

    const step = (name: string) => (output += `[test] ${name} at ${new Date().toISOString()}\n`);
    const roles = () => childrenOf(start.pid!);
    const apis = () => roles().filter((r) => r.args.includes(path.join('api', 'server.ts')));
    assert.equal(apis().length, 2, output);
    assert.equal(roles().filter((r) => r.args.includes(path.join('worker', 'main.ts'))).length, 1, output);

    step('roles counted');
    // Kill one API: the port keeps answering (the other process), and the supervisor starts a new one.
    const [victim, survivor] = apis();
    process.kill(victim.pid, 'SIGKILL');
    // Once the supervisor has seen the death, node:cluster hands new connections to the survivor only (a connection
    // handed over in the instant of a crash is lost with the process, as with any crash).
    await eventually(async () => /api \d ended \(SIGKILL\); restarting/.test(output), 30_000);
    for (let i = 0; i < 20; i += 1) {
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) })).status, 200);
    }
    await eventually(async () => apis().length === 2 && !apis().some((a) => a.pid === victim.pid), 60_000);
    assert.ok(alive(survivor.pid));

    step('restarted');
    // /metrics on the shared port: whichever process takes the scrape answers the sum over both API processes.
    // Each scrape is a new connection too, so the scrapes are taken by both processes in turn: each must count all.
    const scrape = async () => {
      const res = await getOnNewConnection(`http://127.0.0.1:${port}/metrics`);
      assert.equal(res.status, 200, res.text);
      return requestsCounted(res.text, '/healthz');
    };
    const before = await scrape();
    assert.ok(before >= 20, `the 20 answered before count: ${before}`);
    for (let i = 0; i < 30; i += 1) assert.equal((await getOnNewConnection(`http://127.0.0.1:${port}/healthz`)).status, 200);
    for (let i = 0; i < 6; i += 1) assert.equal(await scrape(), before + 30, `scrape ${i} sums both API processes`);
    console.log(`      npm start /metrics: ${before} + 30 /healthz requests over 2 API processes, every scrape counted ${before + 30}`);
    // The worker process relays and delivers what an API process took.
    const ds = await openDatabase(databaseUrl, 2);
    cleanup.push(() => ds.destroy());
    const org = await createOrganization(ds, { name: 'Started', sponsored: true });
    const product = await createProduct(ds, { organizationId: org.id, name: 'Started app' });
    const key = await createServiceKey(ds, { organizationId: org.id, productId: product.id, environment: 'production', scopes: ['service:signals:write'] });
    const receiver = await Receiver.start();
    cleanup.push(() => receiver.close());
    const endpoint = await createEndpoint(ds, org.id, { url: `${receiver.url}/in`, subscriptions: ['signal.created'] });
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/signals`, {
      method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endUserId: 'user-1', title: 'Started', body: 'Through npm start.', idempotencyKey: 'start-signal-1' }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const signalId = (await res.json() as { data: { id: string } }).data.id;
    const delivery = await eventually(async () => receiver.requests.find((r) => JSON.parse(r.body).data?.signalId === signalId), 60_000)
      .catch((err: Error) => assert.fail(`${err.message}:\n${output}`));
    assert.ok(verifyWebhookSignature({ body: delivery.body, header: delivery.headers['service-signature'] as string, secrets: endpoint.secret }));

    step('delivered');
    // Ctrl-C: every process of the group gets SIGINT; the roles leave it to the supervisor, which stops them once each.
    const pids = roles().map((r) => r.pid);
    process.kill(-start.pid!, 'SIGINT');
    assert.equal(await exited, 0, output);
    await eventually(async () => pids.every((pid) => !alive(pid)), 30_000);
    assert.equal(output.match(/restarting in/g)?.length, 1, `stopping restarts nothing:\n${output}`);
  });
});
